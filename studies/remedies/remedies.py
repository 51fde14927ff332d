"""The remedies study: free bits, a bag-of-words loss, aggressive encoder training and
embedding-only z injection over token_mean, at the same target rate and replicates as the
weightings, on the default world and on the world where the weightings differ most.

    python -m studies.remedies.remedies REPO --reference VARIANT [--worlds default decoys]

REPO is a clone with a completed default run (`make repro`). Each world of WORLDS is one
`dvc exp run` in REPO: its params.yaml gains the REMEDIES variants (docs/method.md#remedies),
its confirming tier trains token_mean, the reference weighting VARIANT (declared before the
run: a reference read from the runs it is then tested against would make its verdicts post hoc)
and the remedies, and report.pairs sets each remedy against that weighting, so the report's one
rule gives each remedy's verdict against token_mean and against the weighting, over bases. The
default world keeps the default design (5 bases: its runs are reused); `decoys` takes the
worlds study's knobs on three bases (studies/worlds/worlds.py: `design(3)`). Each report and
params.yaml is kept in OUT/<world>/, its wall time recorded in bench/wall-times.json
(`dvc exp run remedies <world>`), and REPO's params.yaml and dvc.lock are restored before the
next. Last, `zgain worlds-report` lays the verdicts of the worlds side by side in OUT.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import yaml

from studies.worlds import worlds

OVER = {"mean": 1.0}  # every remedy is added over token_mean's weights
REMEDIES = {
    # the floor per dimension at which the 4 dimensions together hold the headline C = 1.0
    "free_bits": {"weights": OVER, "free_bits": 0.25},
    # BoW_i sums over the ~4 target tokens: 0.25 puts it on the token-mean reconstruction's scale
    "bow": {"weights": OVER, "bow_weight": 0.25},
    # 3 encoder-only updates before each of the first quarter's joint updates
    "aggressive": {"weights": OVER, "aggressive": {"encoder_steps": 3, "until": 100}},
    "embedding_only": {"weights": OVER, "z_memory": False},
}
# per world: its settings beyond the defaults
WORLDS = {
    "default": (),
    # two confirming bases (the committed example's design, made before the worlds study took a
    # third): too few for the rule to decide
    "decoys": (*worlds.design(3), *worlds.WORLDS["decoys"]),
}
OUT = Path("reports/examples/remedies")
RATE = 1.0  # the headline rate the remedies are trained and compared at


def study_params(params: Path, settings: tuple[str, ...], best: str) -> None:
    """Rewrite REPO's params.yaml for one world's remedies study."""
    raw = worlds.apply_settings(yaml.safe_load(params.read_text()), settings)
    raw["cvae"]["variants"] |= REMEDIES
    raw["cvae"]["confirm"]["variants"] = ["token_mean", best, *REMEDIES]
    raw["report"]["pairs"] = [*raw["report"]["pairs"], *([name, best] for name in REMEDIES)]
    params.write_text(yaml.safe_dump(raw, sort_keys=False))


def run_world(repo: Path, name: str, settings: tuple[str, ...], best: str) -> float:
    """One world's `dvc exp run` in REPO, its report copied to OUT/name; the seconds it took."""
    study_params(repo / "params.yaml", settings, best)
    return worlds.timed_exp_run(
        repo,
        ["-n", f"remedies-{name}"],
        f"remedies/{name}",
        f"dvc exp run remedies {name}",
        f"python -m studies.remedies.remedies REPO --worlds {name}",
        f"dvc exp run in a clone with the default run done, params.yaml as kept in {OUT / name}/",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone with a completed default run")
    parser.add_argument(
        "--reference",
        required=True,
        help="the weighting each remedy is compared with beside token_mean, declared before the "
        "run (a variant of params.yaml)",
    )
    parser.add_argument("--worlds", nargs="*", default=list(WORLDS), choices=list(WORLDS))
    args = parser.parse_args()
    for name in args.worlds:
        print(f"remedies on world {name}: reference weighting {args.reference}")
        seconds = run_world(args.repo, name, WORLDS[name], args.reference)
        print(f"remedies on world {name}: {seconds:.0f} s", flush=True)
    folders = [str(OUT / name) for name in WORLDS if (OUT / name / "summary.md").exists()]
    view = [sys.executable, "-m", "zgain.cli.app", "worlds-report", "--out", str(OUT), *folders]
    subprocess.run(view, check=True)


if __name__ == "__main__":
    main()
