"""Names of zgain.stats still imported from here by the figures and the frontier
(zgain.report.figures, zgain.report.frontier), which have not switched to zgain.stats yet;
nothing is defined here. New code imports zgain.stats.intervals / rule / power directly."""

from zgain.stats.intervals import Interval, paired_differences, t_interval

__all__ = ["Interval", "paired_differences", "t_interval"]
