"""Names of the reconstruction terms of SPEC §4.1–4.7, in table order (for params and losses)."""

RECON_TERMS = ("mean", "sum", "dist", "ex", "tok", "cc", "inv")
