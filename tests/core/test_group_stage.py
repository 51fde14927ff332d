"""Tests for the group stages' command line: a bad variant or seed fails before any CPU wait."""

from __future__ import annotations

import pytest

from zgain.core import group_stage
from zgain.core.errors import ParamsError


@pytest.fixture
def no_cpu_claim(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    claims: list[int | None] = []
    monkeypatch.setattr(group_stage, "divide_cpus_by_default", claims.append)
    return claims


@pytest.mark.parametrize(
    ("variant", "seed", "named"),
    [("nope", 0, "cvae.variants.nope: no such variant"), ("token_mean", 99, "no seed 99")],
)
def test_an_unknown_variant_or_seed_stops_before_claiming_cpus(
    no_cpu_claim: list, variant: str, seed: int, named: str
) -> None:
    ran: list[tuple] = []
    main = group_stage.group_main(lambda *args: ran.append(args))
    with pytest.raises(ParamsError, match=named):
        main(variant, seed)
    assert no_cpu_claim == [] and ran == []


def test_a_listed_group_claims_cpus_then_runs(no_cpu_claim: list) -> None:
    ran: list[tuple] = []
    main = group_stage.group_main(lambda *args: ran.append(args[1:3]))
    main("token_mean", 0)
    assert no_cpu_claim == [None] and ran == [("token_mean", 0)]
