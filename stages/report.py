"""Stage `report`: tables, figures and metrics of every listed (variant, seed) evaluation.

Reads only the variants of `cvae.variants` and the seeds of `cvae.seeds`; outputs of a variant
since removed from params may stay on disk, and are ignored. Intervals are over seeds
(docs/method.md#uncertainty-over-seeds).
"""

from __future__ import annotations

from zgain.core.cli import run_stage
from zgain.core.io import sweep_temporaries
from zgain.params import Params, load_params
from zgain.report.document import build_report, write_report
from zgain.report.loading import load_results


def run(params: Params) -> None:
    sweep_temporaries(params.paths.reports_dir)
    results = load_results(params.paths.eval_dir, tuple(params.cvae.variants), params.cvae.seeds)
    write_report(build_report(results, params), params.paths.reports_dir)


def main() -> None:
    run(load_params())


if __name__ == "__main__":
    run_stage(main)
