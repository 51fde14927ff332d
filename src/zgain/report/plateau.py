"""Names still imported from this old path by the figures and the frontier (zgain.report.figures,
zgain.report.frontier), which have not switched to the new one yet; nothing is defined here. New
code imports zgain.report.analysis.plateau."""

from zgain.report.analysis.plateau import mean_curves, plateau_window, validated, window_name

__all__ = ["mean_curves", "plateau_window", "validated", "window_name"]
