"""Stage `report`: tables, figures and metrics of every listed run.

Reads the screening runs (the variants of `cvae.variants`, the rates of `cvae.rates` and the
seeds of `cvae.seeds` on the first base) and the contested variants' runs on every base of
`base.seeds`; outputs of a run since removed from params may stay on disk, and are ignored.
Screening intervals are over seeds given the first base (docs/method.md#uncertainty-over-seeds);
the procedure's are over bases (docs/method.md#claims-about-the-procedure); the comparison is
at equal rate (docs/method.md#comparison-at-equal-rate).
"""

from __future__ import annotations

from zgain.core.cli import run_stage
from zgain.core.io import sweep_temporaries
from zgain.params import Params, load_params
from zgain.report.document import build_report, write_report
from zgain.results.analysis.controller import controller_ends
from zgain.results.analysis.plateau import QUANTITY
from zgain.results.curves import CURVE_QUANTITIES, confirming_curves, learning_curves
from zgain.results.frontier import headline_rate
from zgain.results.load.bases import load_bases
from zgain.results.load.runs import load_results


def run(params: Params) -> None:
    sweep_temporaries(params.paths.reports_dir)
    variants, rates, seeds = tuple(params.cvae.variants), params.cvae.rates, params.cvae.seeds
    screening = params.base.screening
    by_rate = {
        rate: load_results(params.paths.eval_dir, variants, seeds, rate, base=screening)
        for rate in rates
    }
    headline = headline_rate(rates, by_rate[rates[0]].split_value("oracle_info"))
    curves = {
        quantity: learning_curves(
            params.paths.cvae_live, variants, headline, seeds, quantity, screening
        )
        for quantity in CURVE_QUANTITIES
    }
    controller = controller_ends(params.paths.cvae_live, by_rate)
    bases = load_bases(params)
    confirming = confirming_curves(params, headline, QUANTITY)
    report = build_report(by_rate, params, controller, curves, bases, confirming)
    write_report(report, params.paths.reports_dir)


def main() -> None:
    run(load_params())


if __name__ == "__main__":
    run_stage(main)
