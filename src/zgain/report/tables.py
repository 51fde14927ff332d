"""Names still imported from this old path by the figures and the frontier (zgain.report.figures,
zgain.report.frontier), which have not switched to the new one yet; nothing is defined here. New
code imports zgain.report.analysis.tables."""

from zgain.report.analysis.tables import DECOMPOSITION, ORACLE

__all__ = ["DECOMPOSITION", "ORACLE"]
