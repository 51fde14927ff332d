"""The report's settings, built once from params at the boundary (`Settings.of`) and read by
every table and section: the interval level, the equivalence margins δ, the baseline, the
declared pairs and the headline rate."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from zgain.params.report import ReportParams
from zgain.stats.rule import alpha_of, tost_level


@dataclass(frozen=True)
class Settings:
    confidence: float  # level c of every interval over seeds or bases
    deltas: Mapping[str, float]  # δ per metric: the margin of `equivalent`
    baseline: str  # every variant is compared with this one
    pairs: tuple[tuple[str, str], ...]  # comparisons a − b declared beside those
    headline: float  # the target rate the summary leads with

    @classmethod
    def of(cls, report: ReportParams, headline: float) -> Settings:
        """From the `report` block of params and the headline rate chosen from the runs."""
        return cls(
            confidence=report.confidence,
            deltas=report.equivalence.model_dump(),
            baseline=report.baseline_variant,
            pairs=tuple((a, b) for a, b in report.pairs),
            headline=headline,
        )

    @property
    def alpha(self) -> float:
        """α = 1 − c, the level of every test."""
        return alpha_of(self.confidence)

    @property
    def tost_level(self) -> float:
        """1 − 2α: the level of the TOST intervals."""
        return tost_level(self.confidence)
