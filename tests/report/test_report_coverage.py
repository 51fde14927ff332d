"""What the report keeps when the data lacks an oracle, hidden strategies or a per-token oracle."""

from __future__ import annotations

from zgain.report.context import Coverage
from zgain.results.analysis.tables import DECOMPOSITION, LOCALIZATION, ORACLE, RECOVERY, SEED_TABLES

FULL = Coverage(oracle=True, strategies=("copy", "reverse"), token_oracle=True)
PAIRS = Coverage(oracle=False, strategies=(), token_oracle=False)
PAIRS_WITH_ORACLE = Coverage(oracle=True, strategies=(), token_oracle=False)


def test_the_synthetic_world_keeps_every_table_as_it_is() -> None:
    assert FULL.complete and FULL.seed_tables() == SEED_TABLES
    assert FULL.rank_metric == "capture" and FULL.left_out() == []
    assert FULL.panels() == ("z_information", "marginal_gain", "capture", "probe_accuracy")


def test_without_an_oracle_capture_and_the_oracle_rows_go() -> None:
    specs = {s.name: s for s in PAIRS.seed_tables()}
    assert RECOVERY.name not in specs and LOCALIZATION.name not in specs
    decomposition = specs[DECOMPOSITION.name]
    assert "capture" not in decomposition.columns
    assert decomposition.columns == tuple(c for c in DECOMPOSITION.columns if c != "capture")
    assert all(r.label != ORACLE for s in specs.values() for r in (*s.before, *s.after))
    assert PAIRS.rank_metric == "z_information"
    assert PAIRS.metrics(("z_information", "capture", "marginal_gain")) == (
        "z_information",
        "marginal_gain",
    )
    assert PAIRS.panels() == ("z_information", "marginal_gain")
    assert len(PAIRS.left_out()) == 3 and PAIRS.left_out()[0].startswith("Capture")


def test_an_oracle_without_strategies_keeps_capture_but_not_recovery() -> None:
    specs = {s.name: s for s in PAIRS_WITH_ORACLE.seed_tables()}
    assert specs[DECOMPOSITION.name] is DECOMPOSITION
    assert RECOVERY.name not in specs and LOCALIZATION.name not in specs
    assert PAIRS_WITH_ORACLE.rank_metric == "capture"
    assert PAIRS_WITH_ORACLE.panels() == ("z_information", "marginal_gain", "capture")
    lines = PAIRS_WITH_ORACLE.left_out()
    assert len(lines) == 2
    assert lines[0].startswith(RECOVERY.title) and lines[1].startswith(LOCALIZATION.title)
