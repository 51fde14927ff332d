"""What every section of the summary reads: the params, the runs at each rate, the headline
rate, the computed tables, what the data lets the report show and the bases."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import pandas as pd

from zgain.params import Params
from zgain.report.bases import BaseRuns
from zgain.report.coverage import Coverage
from zgain.report.loading import EvalResults
from zgain.report.markdown import method_label


@dataclass(frozen=True)
class Context:
    params: Params
    by_rate: Mapping[float, EvalResults]  # target rate -> its runs, params order
    headline: float
    tables: Mapping[str, pd.DataFrame]  # tables/<name>.csv by name
    coverage: Coverage
    bases: Sequence[BaseRuns] = ()

    @property
    def results(self) -> EvalResults:
        """The runs at the headline rate."""
        return self.by_rate[self.headline]

    @property
    def confidence(self) -> float:
        return self.params.report.confidence

    @property
    def n_seeds(self) -> int:
        return len(self.results.seeds)

    @property
    def method(self) -> str:
        """How every cell over seeds was computed (markdown.method_label)."""
        return method_label(self.n_seeds, self.confidence)

    @property
    def weights(self) -> dict[str, Mapping[str, float]]:
        """Each listed variant's reconstruction weights, params order."""
        return {v: self.params.cvae.variants[v].weights for v in self.results.variants}
