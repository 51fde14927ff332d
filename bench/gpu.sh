#!/usr/bin/env bash
# The prepared GPU check (≤ 8 minutes on a CUDA machine): install, run the tiny DAG on the GPU,
# time one default-size group and a short default study slice, write bench/gpu-results.md
# (device, runs per hour, ms per step, host syncs per step, utilization from nvidia-smi).
#   bash bench/gpu.sh
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bench/gpu-results.md
python3 -m venv .venv-gpu
# The pinned torch from PyPI is a CUDA build on Linux x86_64; requirements.lock pins it.
.venv-gpu/bin/pip install --quiet --disable-pip-version-check -r requirements.lock
.venv-gpu/bin/pip install --quiet --disable-pip-version-check --no-deps -e .
export PATH=$PWD/.venv-gpu/bin:$PATH ZGAIN_DEVICE=cuda TQDM_DISABLE=1
python - <<'PY'
import torch
assert torch.cuda.is_available(), "bench/gpu.sh needs a CUDA device"
PY
(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader -l 1 > /tmp/zgain-smi.csv 2>/dev/null &) || true
timeout 420 python -m bench.gpu_check --out "$OUT"
pkill -f "nvidia-smi --query-gpu" || true
if [ -s /tmp/zgain-smi.csv ]; then
  { echo; echo "nvidia-smi utilization over the check (%, MiB), one line a second:"; echo;
    echo '```'; cat /tmp/zgain-smi.csv; echo '```'; } >> "$OUT"
fi
echo "wrote $OUT"
