"""Imported by every Python process a fault test starts (its directory leads PYTHONPATH).

With ZGAIN_FAULTS_KILL_AT=<suffix>, the process SIGKILLs itself at the atomic rename of a
temporary (`.<name>.<random>.zgain-tmp`) onto a path ending in <suffix>: the temporary is on
disk, its target is not yet replaced, and nothing gets to clean up. Without the variable this
file does nothing; it lives only under tests/.
"""

import os
import signal

_KILL_AT = os.environ.get("ZGAIN_FAULTS_KILL_AT")

if _KILL_AT:
    _replace = os.replace

    def _replace_or_die(src, dst, *args, **kwargs):
        if str(src).endswith(".zgain-tmp") and str(dst).endswith(_KILL_AT):
            os.kill(os.getpid(), signal.SIGKILL)
        return _replace(src, dst, *args, **kwargs)

    os.replace = _replace_or_die
