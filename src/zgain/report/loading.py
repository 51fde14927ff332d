"""Names still imported from this old path by the figures and the frontier (zgain.report.figures,
zgain.report.frontier), which have not switched to the new one yet; nothing is defined here. New
code imports zgain.report.load.runs."""

from zgain.report.load.runs import EvalResults, per_run

__all__ = ["EvalResults", "per_run"]
