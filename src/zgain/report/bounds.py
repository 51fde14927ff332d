"""Names still imported from this old path by the figures and the frontier (zgain.report.figures,
zgain.report.frontier), which have not switched to the new one yet; nothing is defined here. New
code imports zgain.report.analysis.bounds."""

from zgain.report.analysis.bounds import clip_to_bounds

__all__ = ["clip_to_bounds"]
