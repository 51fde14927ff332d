"""A study larger than one session, trained in parts and combined (docs/usage.md#a-study-in-parts).

A part is the confirming runs of one `dvc repro` / `dvc exp run` (its params differ from the
other parts' only in the replicate lists: `base.seeds`, `cvae.confirm.bases`,
`cvae.confirm.seeds`, `cvae.confirm.variants`, and in the screening tier's `cvae.rates` and
`cvae.seeds`), exported to a folder as part.json: the training code digest, the params,
and each confirming run's metrics with the md5 of its per-example table. Parts combine only when
they share the digest and every other param, and when every run that two parts hold has the
same bytes in both (`zgain.parts.record`). The combined runs then answer the claims over bases
(`zgain.parts.over_bases`).
"""
