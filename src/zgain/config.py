"""A strict loader from plain YAML mappings into frozen dataclasses.

Every field is type-checked against its annotation and every key must be known, so a typo
in `params.yaml` or a `dvc exp run -S` override fails before any work with the key's path.
Range checks live beside each dataclass (`validate(path)`), which calls `require`.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, Literal, TypeVar, get_args, get_origin

T = TypeVar("T")


class ParamsError(ValueError):
    """A params value that is unknown, mistyped or out of range; the message names its key path."""


def require(condition: bool, path: str, rule: str, value: object) -> None:
    """Raise `ParamsError("<path>: <rule>, got <value>")` unless `condition` holds."""
    if not condition:
        raise ParamsError(f"{path}: {rule}, got {value!r}")


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _convert(value: Any, annotation: Any, path: str) -> Any:
    origin = get_origin(annotation)
    args = get_args(annotation)
    if annotation is Any:
        return value
    if origin is Literal:
        require(value in args, path, f"must be one of {list(args)}", value)
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None:
            require(type(None) in args, path, "must not be null", value)
            return None
        inner = [a for a in args if a is not type(None)]
        return _convert(value, inner[0], path)
    if dataclasses.is_dataclass(annotation):
        return load_dataclass(annotation, value, path)
    if origin is tuple:
        require(isinstance(value, list | tuple), path, "must be a list", value)
        item_type = args[0]
        return tuple(_convert(v, item_type, f"{path}[{i}]") for i, v in enumerate(value))
    if origin is dict or annotation is dict:
        require(isinstance(value, Mapping), path, "must be a mapping", value)
        key_type, value_type = args if args else (str, Any)
        out = {}
        for k, v in value.items():
            require(isinstance(k, key_type), _join(path, str(k)), "key must be a string", k)
            out[k] = _convert(v, value_type, _join(path, k))
        return out
    if annotation is bool:
        require(isinstance(value, bool), path, "must be a boolean", value)
        return value
    if annotation is int:
        require(
            isinstance(value, int) and not isinstance(value, bool),
            path,
            "must be an integer",
            value,
        )
        return value
    if annotation is float:
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        require(ok, path, "must be a number", value)
        return float(value)
    if annotation is str:
        require(isinstance(value, str), path, "must be a string", value)
        return value
    raise TypeError(f"{path}: unsupported annotation {annotation!r}")


def load_dataclass(cls: type[T], raw: Any, path: str = "") -> T:
    """Build `cls` from a mapping: unknown keys, missing keys, wrong types and ranges all raise."""
    require(isinstance(raw, Mapping), path or "<root>", "must be a mapping", raw)
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(str(key) for key in set(raw) - set(fields))
    if unknown:
        raise ParamsError(
            f"{_join(path, unknown[0])}: unknown key (known: {', '.join(sorted(fields))})"
        )
    values = {}
    for name, field in fields.items():
        key_path = _join(path, name)
        if name not in raw:
            no_default = field.default is dataclasses.MISSING
            if no_default and field.default_factory is dataclasses.MISSING:
                raise ParamsError(f"{key_path}: missing required key")
            continue
        values[name] = _convert(raw[name], hints[name], key_path)
    obj = cls(**values)
    validate = getattr(obj, "validate", None)
    if validate is not None:
        validate(path)
    return obj
