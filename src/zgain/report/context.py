"""What the summary is about: what the data lets the report show (`Coverage`: the oracle, hidden
strategies, a per-token oracle; a pairs file, docs/own-data.md, lacks the last two and has an
oracle only when its params name one, and what needs a missing one is left out by name), and
what every section reads (`Context`: the params, the runs at each rate, the headline rate, the
computed tables, the coverage, the bases and the settings)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

import pandas as pd

from zgain.params import DataParams, Params
from zgain.report.render.markdown import method_label
from zgain.results.analysis.controller import RateMisses, rate_misses
from zgain.results.analysis.damage import damage_table
from zgain.results.analysis.tables import (
    DECOMPOSITION,
    LOCALIZATION,
    ORACLE,
    RECOVERY,
    SEED_TABLES,
    TableSpec,
    decomposition_name,
)
from zgain.results.load.bases import BaseRuns
from zgain.results.load.runs import EvalResults
from zgain.results.registry import RATE_CHECK
from zgain.results.settings import Settings

ORACLE_METRIC = "capture"
"""The one metric that is a share of the oracle's I*."""


@dataclass(frozen=True)
class Coverage:
    oracle: bool  # the oracle's I* and NLL* are known
    strategies: tuple[str, ...]  # the hidden strategies' names; empty: none
    token_oracle: bool  # the oracle's per-token information is known

    @classmethod
    def of(cls, params: Params, results: EvalResults) -> Coverage:
        """What the evaluated test split carries (the data block says whether s exists)."""
        synthetic = isinstance(params.data, DataParams)
        return cls(
            oracle=math.isfinite(results.split_value("oracle_info")),
            strategies=params.data.transforms if synthetic else (),
            token_oracle=synthetic,
        )

    @property
    def complete(self) -> bool:
        return self.oracle and bool(self.strategies) and self.token_oracle

    @property
    def rank_metric(self) -> str:
        """What ranks the variants: capture, or I^θ without an oracle (the same order: capture
        is I^θ over one I* shared by every variant)."""
        return ORACLE_METRIC if self.oracle else "z_information"

    @property
    def verdict_metrics(self) -> tuple[str, str]:
        """The metrics a verdict tests: the rank metric (capture, which is I^θ / I* exactly, so
        I^θ is not tested again; I^θ without an oracle) and G^marg."""
        return (self.rank_metric, "marginal_gain")

    def allows(self, metric: str) -> bool:
        """Whether the data can give `metric` (capture needs an oracle)."""
        return self.oracle or metric != ORACLE_METRIC

    def metrics(self, names: tuple[str, ...]) -> tuple[str, ...]:
        """`names` without those the data cannot give."""
        return tuple(n for n in names if self.allows(n))

    @property
    def decomposition(self) -> TableSpec:
        """The decomposition table as this data allows it (every source has one)."""
        spec = self.spec(DECOMPOSITION)
        assert spec is not None
        return spec

    def spec(self, spec: TableSpec) -> TableSpec | None:
        """The table as this data allows it; None when it needs what the data lacks."""
        if spec is RECOVERY and not self.strategies:
            return None
        if spec is LOCALIZATION and not self.token_oracle:
            return None
        if self.oracle:
            return spec
        return replace(
            spec,
            columns=self.metrics(spec.columns),
            note=spec.note + " No oracle here: its rows and `capture` are left out.",
            before=tuple(r for r in spec.before if r.label != ORACLE),
            after=tuple(r for r in spec.after if r.label != ORACLE),
        )

    def panels(self) -> tuple[str, ...]:
        """The frontier figure's panels this data can fill (zgain.figures.draw)."""
        panels = ["z_information", "marginal_gain"]
        if self.oracle:
            panels.append(ORACLE_METRIC)
        if self.strategies:
            panels.append("probe_accuracy")
        return tuple(panels)

    def seed_tables(self) -> tuple[TableSpec, ...]:
        """The summary's tables over seeds that this data allows, in report order."""
        return tuple(s for s in (self.spec(spec) for spec in SEED_TABLES) if s is not None)

    def left_out(self) -> list[str]:
        """One line per part of the report left out, with what it would need."""
        lines = []
        if not self.oracle:
            lines.append(
                "Capture (`capture` = I^θ / I*), the `oracle` rows of every table, the "
                "oracle's I* on the frontier and the capture panel of the figures: they need "
                "an oracle (data.oracle)"
            )
        if not self.strategies:
            lines.append(
                f"{RECOVERY.title} (tables/{RECOVERY.name}.csv), the z-information by hidden "
                "strategy and the probe panel of the figures: they need a hidden strategy "
                "label, which only the synthetic world has"
            )
        if not self.token_oracle:
            lines.append(
                f"{LOCALIZATION.title} (tables/{LOCALIZATION.name}.csv) and the oracle's i*_t "
                "by position: they need the oracle's per-token information, which only the "
                "synthetic world has"
            )
        return lines


@dataclass(frozen=True)
class Context:
    params: Params
    by_rate: Mapping[float, EvalResults]  # target rate -> its runs, params order
    headline: float
    tables: Mapping[str, pd.DataFrame]  # tables/<name>.csv by name
    coverage: Coverage
    bases: Sequence[BaseRuns] = ()
    figures: tuple[str, ...] = ()  # figures/<name> drawn, in report order
    identical: Mapping[str, str] = field(default_factory=dict)  # variant -> its twin by scores

    @property
    def results(self) -> EvalResults:
        """The runs at the headline rate."""
        return self.by_rate[self.headline]

    @cached_property
    def settings(self) -> Settings:
        """The report's settings, read from params once (the only place sections get them)."""
        return Settings.of(self.params.report, self.headline)

    @property
    def n_seeds(self) -> int:
        return len(self.results.seeds)

    @property
    def method(self) -> str:
        """How every cell over seeds was computed (markdown.method_label)."""
        return method_label(self.n_seeds, self.settings.confidence)

    @property
    def weights(self) -> dict[str, Mapping[str, float]]:
        """Each listed variant's reconstruction weights, params order."""
        return {v: self.params.cvae.variants[v].weights for v in self.results.variants}

    @cached_property
    def misses(self) -> RateMisses:
        """The runs off their target rate, by cause, from the rate check's table."""
        return rate_misses(self.tables[RATE_CHECK.name])

    @cached_property
    def damage(self) -> dict[float, pd.DataFrame]:
        """Each rate's damage check of the likelihood objectives (zgain.results.analysis.damage)."""
        return {
            rate: damage_table(self.tables[decomposition_name(rate)], self.weights)
            for rate in self.by_rate
        }
