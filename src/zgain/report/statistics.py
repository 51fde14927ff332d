"""Names of zgain.stats still imported from here by modules that have not yet switched to
zgain.stats (the figures, the frontier and `zgain check`); nothing is defined here. New code
imports zgain.stats.intervals / rule / power directly."""

from zgain.stats.intervals import Interval, half_width, paired_differences, t_interval, t_quantile

__all__ = ["Interval", "half_width", "paired_differences", "t_interval", "t_quantile"]
