#!/usr/bin/env bash
# Keep a finished study's report as an example:
#   bash examples/keep_report.sh CLONE NAME
# copies the report of the checkout CLONE (summary.md and the views it links, details.md and
# diagnostics.md, tables/, figures/, metrics.json) and the params.yaml it came from into reports/examples/NAME/ of this repository, replacing what was
# there, and points the pages' links to docs/ from where the copy sits (NAME may hold a
# folder: worlds/late). The caller writes
# the example's run.json (the command, its time, the commit, and `train_code_digest` from
# `python examples/code_digest.py`) beside it.
set -euo pipefail
[ $# -eq 2 ] || { echo "usage: bash examples/keep_report.sh CLONE NAME" >&2; exit 2; }
clone=$1
name=$2
root=$(git rev-parse --show-toplevel)
for part in reports/summary.md reports/tables reports/figures reports/metrics.json params.yaml; do
  [ -e "$clone/$part" ] || { echo "error: $clone/$part not found: is $clone a finished study?" >&2; exit 2; }
done
out="$root/reports/examples/$name"
rm -rf "$out" && mkdir -p "$out"
cp -r "$clone"/reports/summary.md "$clone"/reports/tables "$clone"/reports/figures \
  "$clone"/reports/metrics.json "$clone"/params.yaml "$out/"
for view in details.md diagnostics.md; do
  [ ! -e "$clone/reports/$view" ] || cp "$clone/reports/$view" "$out/"
done
# the pages' links to docs/ are relative to reports/; this copy sits two levels deeper, and
# one more for each folder in NAME (e.g. worlds/late)
up="../../../"
slashes=${name//[^\/]/}
for ((i = 0; i < ${#slashes}; i++)); do up="../$up"; done
for page in "$out"/*.md; do sed -i "s#](\.\./docs/#](${up}docs/#g" "$page"; done
echo "$out"
