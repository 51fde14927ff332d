"""One line per problem in `params.yaml`, from pydantic's errors: `<key path>: <rule>, got <value>`.

Only the error path imports this module (`zgain.params.parse_params`), so editing a message here
changes no stage's output and reruns no stage.
"""

from __future__ import annotations

from typing import Any, get_args

from pydantic import BaseModel

from zgain.params.blocks import Params
from zgain.params.data import DATA_SOURCES

_TYPE_RULES = {
    "int_type": "must be an integer",
    "float_type": "must be a number",
    "bool_type": "must be a boolean",
    "string_type": "must be a string",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
    "dict_type": "must be a mapping",
    "model_type": "must be a mapping",
    "model_attributes_type": "must be a mapping",
}


def _join(parts: tuple[Any, ...], *, indices: bool = True) -> str:
    """A key path: `cvae.common.lr`, `data.transforms[1]` (list indices in brackets)."""
    out = ""
    for part in parts:
        if indices and isinstance(part, int) and out:
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _block_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The params block that holds the key at `loc` (to list the keys it knows)."""
    model: type[BaseModel] = Params
    parts = list(loc[:-1])
    while parts:
        field = model.model_fields.get(parts.pop(0))
        if field is None:
            return None
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            model = annotation
            continue
        if parts and parts[0] in DATA_SOURCES:  # the data block: its source tags the union
            model = _tagged(annotation, parts.pop(0))
            continue
        inner = getattr(annotation, "__args__", ())  # dict[str, Block]: skip the dict's key
        if inner and isinstance(inner[-1], type) and issubclass(inner[-1], BaseModel) and parts:
            parts.pop(0)
            model = inner[-1]
            continue
        return None
    return model


def _tagged(annotation: Any, tag: str) -> type[BaseModel]:
    """The member of a tagged union (`zgain.params.data.Data`) whose `source` is `tag`."""
    for member in get_args(annotation):
        block = get_args(member)[0]
        if block.model_fields["source"].annotation.__args__ == (tag,):
            return block
    raise KeyError(tag)


def _untagged(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    """A location without the union's tag: `data.pairs.file` is the user's `data.file`."""
    if len(loc) > 1 and loc[0] == "data" and loc[1] in DATA_SOURCES:
        return (loc[0], *loc[2:])
    return loc


def lines(errors: list[dict[str, Any]]) -> list[str]:
    """Every problem of a ValidationError's `errors()`, one line each, without repeats."""
    return list(dict.fromkeys(line for error in errors for line in _format(error)))


def _format(error: dict[str, Any]) -> list[str]:
    """One `<key path>: <rule>, got <value>` line per pydantic error (a few carry several)."""
    tagged = tuple(error["loc"])
    loc = _untagged(tagged)
    kind = error["type"]
    value = error.get("input")
    if kind == "union_tag_invalid":
        known = ", ".join(DATA_SOURCES)
        return [f"{_join(loc)}.source: must be one of [{known}], got {error['ctx']['tag']!r}"]
    if kind == "value_error":
        lines = []
        for line in str(error["ctx"]["error"]).splitlines():
            if line.startswith("@"):  # a block validator: the path is relative to the block
                rel, _, rest = line[1:].partition(": ")
                lines.append(f"{_join((*loc, *rel.split('.')))}: {rest}")
            else:
                lines.append(f"{_join(loc) or '<root>'}: {line}")
        return lines
    if kind == "missing":
        return [f"{_join(loc)}: missing required key"]
    if kind == "extra_forbidden":
        block = _block_at(tagged)
        known = ", ".join(sorted(block.model_fields)) if block else "?"
        return [f"{_join(loc, indices=False)}: unknown key (known: {known})"]
    if kind == "invalid_key":
        return [f"{_join(loc, indices=False)}: key must be a string, got {loc[-1]!r}"]
    if kind == "literal_error":
        expected = error["ctx"]["expected"].replace(" or ", ", ")
        return [f"{_join(loc)}: must be one of [{expected}], got {value!r}"]
    if loc and loc[-1] == "[key]":
        return [f"{_join(loc[:-1], indices=False)}: key must be a string, got {loc[-2]!r}"]
    rule = _TYPE_RULES.get(kind, error["msg"])
    return [f"{_join(loc) or '<root>'}: {rule}, got {value!r}"]
