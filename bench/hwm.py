"""Run a module as `python -m MODULE ARGS…` and write its peak RSS (VmHWM, KiB) to a file.

    python -m bench.hwm OUT_FILE MODULE [ARGS…]

VmHWM belongs to the address space created at exec, so unlike a child's ru_maxrss it does not
include the launching process's memory at fork time.
"""

from __future__ import annotations

import atexit
import runpy
import sys
from pathlib import Path


def _write_peak(out: Path) -> None:
    status = Path("/proc/self/status").read_text()
    peak = next(line.split()[1] for line in status.splitlines() if line.startswith("VmHWM:"))
    out.write_text(peak)


if __name__ == "__main__":
    out_file, module, *args = sys.argv[1:]
    atexit.register(_write_peak, Path(out_file))
    sys.argv = [module, *args]
    runpy.run_module(module, run_name="__main__", alter_sys=True)
