"""Rendering: the Markdown primitives (number and interval formatting, labels, the pivot, the
captions and their automatic numbering) and the glossary. Draws finished tables, computes
nothing."""
