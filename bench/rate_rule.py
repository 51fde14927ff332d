"""The rate controller: how many runs end within 10% of their target under each setting.

    python -m bench.rate_rule REPO [--variants token_inverse_cc mean_inv] [--seeds 0 1 2]
        [--set penalty_from=0.0 ...]
    python -m bench.rate_rule REPO --against OTHER --out bench/rate-rule-grid-results.md

REPO holds a completed default run, trained under the controller its params name
(`REPO/params.yaml`, `cvae.common.rate_target`). The listed variants are trained and evaluated
again at every default rate and seed under another controller, on REPO's upstream outputs
(world, base, surprisal, normalizer) with this checkout's params otherwise, in a scratch folder
(never in REPO): REPO's settings with each `--set KEY=VALUE` of rate_target (or of
`cvae.common.weight_average`, the weights saved and so read at test), or, with none, the other
rule. bench/rate-rule-results.md (generated) then gives, per controller and run, the test
KL against its target (the report's rate check: off when more than 10% away) and the runs'
capture; and the seconds one (variant, seed) group took to train and evaluate here. With
`--against OTHER` (another completed default run on the same base, under another controller)
nothing is trained: every variant's runs of both are read.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import yaml

from bench.timing import machine
from bench.workload import on_completed_run, train_and_evaluate
from zgain.core.runs import Run
from zgain.params import Params
from zgain.report.frontier import outside_tolerance

RESULTS = Path(__file__).with_name("rate-rule-results.md")
RULES = ("difference", "log_ratio")
EVAL_DIR = "data/eval"  # REPO's runs (params.yaml paths.eval_dir)
COMMON_KEYS = ("weight_average",)
"""cvae.common keys that `--set` also takes: which weights are saved, and so read at test."""


def repo_params_raw(repo: Path) -> dict:
    return yaml.safe_load((repo / "params.yaml").read_text())


def rate_target(params: Params | dict) -> dict:
    """The controller's settings, with the weights it is read on (`cvae.common` keys of
    COMMON_KEYS); a run made before the rule was a key used `difference`, one made before the
    exact penalty had none, and one made before the weight average saved the last iterate."""
    if isinstance(params, Params):
        common = params.cvae.common
        return {**common.rate_target.model_dump(), "weight_average": common.weight_average}
    common = params["cvae"]["common"]
    return {
        "rule": "difference",
        "penalty": 0.0,
        **common["rate_target"],
        "weight_average": common.get("weight_average", 0.0),
    }


def label(settings: dict) -> str:
    """The controller in a few words: its rule, its exact penalty and the weight average where
    it has them."""
    text = settings["rule"]
    if settings.get("penalty"):
        start = settings.get("penalty_from", 0.0)
        text += f" + penalty {settings['penalty']:g} from {start:g} of the steps"
    if settings.get("weight_average"):
        text += f", saved weights averaged (EMA {settings['weight_average']:g})"
    return text


def cvae_update(settings: dict, seeds: list[int]) -> dict:
    """The cvae block's update that trains under `settings` (rate_target keys, and COMMON_KEYS
    in cvae.common)."""
    target = {k: v for k, v in settings.items() if k not in COMMON_KEYS}
    common = {k: v for k, v in settings.items() if k in COMMON_KEYS}
    return {"common": {"rate_target": target, **common}, "seeds": seeds}


def parse_set(items: list[str]) -> dict:
    """--set KEY=VALUE pairs of rate_target (or COMMON_KEYS), each VALUE read as YAML."""
    update = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise SystemExit(f"--set takes KEY=VALUE, got {item!r}")
        update[key] = yaml.safe_load(value)
    return update


def run_rows(params: Params, rule: str, variants: list[str], eval_dir: Path) -> list[dict]:
    rows = []
    for variant in variants:
        for rate in params.cvae.rates:
            for seed in params.cvae.seeds:
                where = Run(variant, rate, seed, params.base.screening).eval_dir(eval_dir)
                metrics = json.loads((where / "metrics.json").read_text())
                error = metrics["kl"] / rate - 1
                off = outside_tolerance(np.array([metrics["kl"]]), np.array([rate]))
                rows.append(
                    {
                        "rule": rule,
                        "variant": variant,
                        "rate": rate,
                        "seed": seed,
                        "kl": metrics["kl"],
                        "relative_error": error,
                        "off": bool(off[0]),
                        "capture": metrics["capture"],
                    }
                )
    return rows


def measure(
    repo: Path, settings: dict, variants: list[str], seeds: list[int]
) -> tuple[list, float]:
    with tempfile.TemporaryDirectory() as scratch:
        params = on_completed_run(repo, Path(scratch), cvae_update(settings, seeds))
        seconds = train_and_evaluate(params, variants, seeds, label(settings))
        return run_rows(params, label(settings), variants, Path(params.paths.eval_dir)), seconds


def markdown(rows: list[dict], command: str, where: list[str], timing: dict[str, str]) -> str:
    lines = [
        "# The rate controller",
        "",
        f"Generated by `{command}`; do not edit by hand.",
        "",
        *where,
        "",
        "Runs more than 10% off their target rate (test `kl` against C), per controller:",
        "",
        "| controller | variant | runs | off | off runs (C, seed: KL/C − 1) | mean capture |",
        "|---|---|---|---|---|---|",
    ]
    controllers = list(dict.fromkeys(r["rule"] for r in rows))
    for rule in controllers:
        for variant in dict.fromkeys(r["variant"] for r in rows):
            mine = [r for r in rows if r["rule"] == rule and r["variant"] == variant]
            if not mine:
                continue
            off = [r for r in mine if r["off"]]
            named = ", ".join(
                f"{r['rate']:g}, {r['seed']}: {r['relative_error']:+.2f}" for r in off
            )
            capture = sum(r["capture"] for r in mine) / len(mine)
            lines.append(
                f"| {rule} | {variant} | {len(mine)} | {len(off)} | {named} | {capture:.3f} |"
            )
    lines += ["", "In all:", ""]
    for rule in controllers:
        mine = [r for r in rows if r["rule"] == rule]
        if mine:
            off = sum(r["off"] for r in mine)
            lines.append(f"- {rule}: {off} of {len(mine)} runs off ({off / len(mine):.1%})")
    if timing:
        lines += ["", "Seconds per (variant, seed) group, train + evaluate in one process:", ""]
        lines += [f"- {rule}: {text}" for rule, text in timing.items()]
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("repo", type=Path, help="a clone with a completed default run")
    parser.add_argument("--variants", nargs="+", default=["token_inverse_cc", "mean_inv"])
    parser.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    parser.add_argument("--out", type=Path, default=RESULTS, help="the results file to write")
    parser.add_argument("--against", type=Path, help="a completed run under another controller")
    parser.add_argument(
        "--set",
        nargs="+",
        default=[],
        metavar="KEY=VALUE",
        help="rate_target settings (or weight_average) to rerun",
    )
    args = parser.parse_args()
    repo = args.repo.resolve()
    mine = rate_target(repo_params_raw(repo))
    repo_params = on_completed_run(repo, repo, {"seeds": args.seeds})
    command = "python -m bench.rate_rule REPO"
    if args.against is None:
        variants = args.variants
        update = parse_set(args.set)
        if not update:
            (other_rule,) = [r for r in RULES if r != mine["rule"]]
            update = {"rule": other_rule}
        theirs = {**rate_target(repo_params), **update}  # this checkout's settings, updated
        rows = run_rows(repo_params, label(mine), variants, repo / EVAL_DIR)
        rows_other, seconds = measure(repo, theirs, variants, args.seeds)
        timing = {
            label(mine): "the completed run's own groups (not timed here)",
            label(theirs): f"{seconds:.0f}",
        }
        command += " " + " ".join(["--variants", *variants, "--seeds", *map(str, args.seeds)])
        command += "".join(f" --set {item}" for item in args.set)
    else:
        against = args.against.resolve()
        variants = list(repo_params.cvae.variants)
        theirs = rate_target(repo_params_raw(against))
        rows = run_rows(repo_params, label(mine), variants, repo / EVAL_DIR)
        rows_other = run_rows(repo_params, label(theirs), variants, against / EVAL_DIR)
        timing = {}
        command += " --seeds " + " ".join(map(str, args.seeds)) + " --against OTHER"
    command += "" if args.out == RESULTS else f" --out {args.out}"
    settings = {"REPO's runs": mine, "the other runs": theirs}
    where = [*machine()] + [
        f"- {name}: `cvae.common.rate_target` and `weight_average` = {values}"
        for name, values in settings.items()
    ]
    args.out.write_text(markdown(rows + rows_other, command, where, timing))
    print(args.out.read_text())


if __name__ == "__main__":
    main()
