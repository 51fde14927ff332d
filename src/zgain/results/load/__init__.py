"""Loading: each run's evaluation outputs read once into one row per run (runs.py), and every
base's runs with its mismatch (bases.py). No statistics, no Markdown."""
