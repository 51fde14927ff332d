"""The project's statistics, each defined once (numpy and scipy only): intervals (the t interval,
the jackknife, bounds on a spread and a range), the verdict rule (p → Holm → TOST → verdict) and
power (the t-test's power, sample sizes, detectable differences, variance components over bases,
seeds per base, `zgain check`'s inside-probability). Formulas: docs/method.md.
"""
