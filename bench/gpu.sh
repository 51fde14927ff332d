#!/usr/bin/env bash
# The prepared GPU check on a CUDA machine: install, check that torch sees a CUDA device and
# imports zgain, then the member axis (bench/members.py, at most 8 minutes) on the GPU: stacked
# against lockstep at 1 to 44 members, the stacked forward under torch.compile at 44 (its
# compile time included), host syncs per train step (CUDA's sync debug mode) and what a 40-base
# study's training would take, written to bench/members-MACHINE.md (MACHINE the GPU's model)
# with nvidia-smi's utilization over the benchmark appended.
#   bash bench/gpu.sh
# PYTHON (default python3.11) creates the check's own environment .venv-gpu from
# requirements.lock. ZGAIN_GPU_NO_INSTALL=1 skips that and runs $PYTHON as it is: it must
# already import torch with CUDA and zgain, e.g. PYTHON=.venv/bin/python (docs/scale.md).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3.11}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "bench/gpu.sh: no interpreter '$PYTHON' (set PYTHON to a Python 3.11 or later)" >&2
  exit 1
fi

work=$(mktemp -d)
smi_pid=""
cleanup() {
  if [ -n "$smi_pid" ]; then kill "$smi_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

if [ "${ZGAIN_GPU_NO_INSTALL:-0}" = 1 ]; then
  py=$PYTHON
else
  "$PYTHON" -m venv .venv-gpu
  # requirements.lock pins torch; whether pip gets a CUDA build of it depends on the package
  # index (PyPI's Linux x86-64 wheel is one; an index of +cpu builds is not): docs/scale.md.
  .venv-gpu/bin/pip install --quiet --disable-pip-version-check -r requirements.lock
  .venv-gpu/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
  py=.venv-gpu/bin/python
fi
export ZGAIN_DEVICE=cuda TQDM_DISABLE=1
"$py" - <<'PY'
import sys

import torch

if not torch.cuda.is_available():
    sys.exit(
        f"bench/gpu.sh: torch {torch.__version__} (CUDA build: {torch.version.cuda}) sees no "
        "CUDA device; docs/scale.md says how to install a CUDA build"
    )
try:
    import zgain  # noqa: F401
except ImportError:
    sys.exit(f"bench/gpu.sh: {sys.executable} cannot import zgain (pip install --no-deps -e .)")
PY
# bench/members-MACHINE.md, MACHINE the GPU's model (bench.common.results_path)
OUT=$("$py" -c 'from bench.common import results_path; print(results_path("members"))')

if command -v nvidia-smi >/dev/null 2>&1; then
  nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 1 \
    >"$work/smi.csv" 2>/dev/null &
  smi_pid=$!
fi
# a confirming group is 4 members, a screening seed's whole grid 44
timeout 480 "$py" -m bench.members --steps 20 --repeats 3 --members 1,4,16,44 --compile 44
if [ -n "$smi_pid" ]; then
  kill "$smi_pid" 2>/dev/null || true
  wait "$smi_pid" 2>/dev/null || true
  smi_pid=""
fi
if [ -s "$work/smi.csv" ]; then
  { echo; echo "nvidia-smi utilization over the benchmark (%, MiB), one line a second:"; echo;
    echo '```'; cat "$work/smi.csv"; echo '```'; } >>"$OUT"
fi
echo "wrote $OUT"
