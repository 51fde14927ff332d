"""Sections of the summary and its views: each module owns the text and tables of its sections
(the Findings and verdicts, the Setup and scope, the claims over bases, the rate check, twins,
damage check and figures), reading the Context's finished tables."""
