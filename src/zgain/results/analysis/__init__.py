"""Analysis: the finished tables of reports/tables/ (values adjusted to exactly C, verdicts,
claims over bases, the rate check, the plateau, the seed tables, the metrics' ranges). Reads
zgain.stats for every statistic; no Markdown, no matplotlib."""
