"""Worker slots: concurrent stages on one host get distinct devices and a fair share of threads."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from zgain.core.environment import (
    available_cpus,
    claim_worker,
    resolve_device,
    resolve_threads,
    resolve_workers,
    setup_torch,
)
from zgain.core.errors import ParamsError

# One stage process: set up torch as a stage does, print what it records, hold the slot until
# stdin closes (so the test controls which workers run at the same time).
WORKER = (
    "import json, sys\n"
    "from zgain.core.environment import setup_torch\n"
    "_, environment = setup_torch(0)\n"
    "print(json.dumps(environment.as_dict()), flush=True)\n"
    "sys.stdin.read()\n"
)


def start_stage(code: str, directory: Path, **settings: str) -> subprocess.Popen:
    """`code` in a fresh Python process, with no thread or worker setting but `settings`."""
    env = {k: v for k, v in os.environ.items() if k not in ("ZGAIN_THREADS", "ZGAIN_WORKERS")}
    env |= {"ZGAIN_WORKER_DIR": str(directory), **settings}
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def start_worker(slots: Path, workers: int) -> subprocess.Popen:
    return start_stage(WORKER, slots, ZGAIN_WORKERS=str(workers), ZGAIN_DEVICE="auto")


def recorded(worker: subprocess.Popen) -> dict:
    line = worker.stdout.readline()
    assert line, worker.stderr.read()
    return json.loads(line)


def stop(worker: subprocess.Popen) -> None:
    worker.communicate("")
    assert worker.returncode == 0


@pytest.mark.skipif(torch.cuda.is_available(), reason="checks the CPU records")
def test_concurrent_workers_record_distinct_slots_and_share_the_cpus(tmp_path):
    first = start_worker(tmp_path, 2)
    one = recorded(first)
    second = start_worker(tmp_path, 2)
    two = recorded(second)
    share = max(1, available_cpus() // 2)
    assert {one["worker"], two["worker"]} == {0, 1}
    for environment in (one, two):
        assert environment["device"] == "cpu"
        assert environment["threads"] == share
        assert environment["host"] == socket.gethostname()

    third = start_worker(tmp_path, 2)  # a third stage while both slots are held: refused
    _, err = third.communicate("")
    assert third.returncode != 0
    assert "workers: all 2 worker slots" in err and "ZGAIN_WORKERS=2" in err

    stop(first)  # its slot is free again once its process ends
    again = start_worker(tmp_path, 2)
    assert recorded(again)["worker"] == one["worker"]
    stop(again)
    stop(second)


# A stage entry point with no threads or workers set: claim the CPUs, print the threads it
# will use, hold them until stdin closes.
CLAIMING_STAGE = (
    "import os, sys\n"
    "from zgain.core.environment import divide_cpus_by_default\n"
    "divide_cpus_by_default()\n"
    "print(os.environ['ZGAIN_THREADS'], flush=True)\n"
    "sys.stdin.read()\n"
)


def start_claiming_stage(directory: Path) -> subprocess.Popen:
    return start_stage(CLAIMING_STAGE, directory)


def test_stages_started_at_once_by_default_never_hold_more_threads_than_cpus(tmp_path):
    """With neither ZGAIN_THREADS nor ZGAIN_WORKERS, the first stage takes every free CPU and a
    second one waits (saying why) until the first exits, then takes them."""
    first = start_claiming_stage(tmp_path)
    assert int(first.stdout.readline()) == available_cpus()
    second = start_claiming_stage(tmp_path)
    line = second.stderr.readline()
    assert "waiting for a free CPU" in line and "ZGAIN_THREADS" in line
    first.communicate("")
    assert int(second.stdout.readline()) == available_cpus()
    second.communicate("")
    assert first.returncode == second.returncode == 0


def test_a_user_choice_of_threads_or_workers_claims_no_cpu(tmp_path, monkeypatch):
    from zgain.core.environment import divide_cpus_by_default

    monkeypatch.setenv("ZGAIN_WORKER_DIR", str(tmp_path))
    monkeypatch.setenv("ZGAIN_THREADS", "1")
    divide_cpus_by_default()
    assert list(tmp_path.iterdir()) == []


def test_a_single_worker_claims_no_slot_and_takes_every_cpu(tmp_path, monkeypatch):
    monkeypatch.delenv("ZGAIN_WORKERS", raising=False)
    monkeypatch.delenv("ZGAIN_THREADS", raising=False)
    assert claim_worker(1, tmp_path) is None
    assert list(tmp_path.iterdir()) == []
    _, environment = setup_torch(0, device="cpu")
    assert environment.worker is None
    assert environment.threads == available_cpus()
    assert environment.host == socket.gethostname()


def test_a_slot_is_claimed_once_per_process(tmp_path):
    assert claim_worker(3, tmp_path) == claim_worker(3, tmp_path) == 0


def test_auto_takes_the_gpus_round_robin(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert [str(resolve_device("auto", k)) for k in range(4)] == [
        "cuda:0",
        "cuda:1",
        "cuda:0",
        "cuda:1",
    ]
    assert str(resolve_device("auto")) == "cuda"  # outside a pool: the current device
    assert str(resolve_device("cuda:1", 0)) == "cuda:1"  # an explicit device wins


def test_threads_are_a_fair_share_unless_given(monkeypatch):
    monkeypatch.delenv("ZGAIN_THREADS", raising=False)
    cpus = available_cpus()
    assert resolve_threads(None, workers=1) == cpus
    assert resolve_threads(None, workers=cpus + 5) == 1
    assert resolve_threads(3, workers=4) == 3


@pytest.mark.parametrize("raw", ["0", "-2", "two"])
def test_a_bad_worker_count_names_the_setting(raw):
    with pytest.raises(ParamsError, match=rf"workers: must be a positive integer, got '{raw}'"):
        resolve_workers(raw)


def test_setup_turns_on_deterministic_algorithms_in_warn_only_mode() -> None:
    """What torch.use_deterministic_algorithms(True, warn_only=True) sets for eager ops; run in
    a fresh interpreter so that the flags start off, and without importing torch._inductor."""
    code = (
        "import sys, torch\n"
        "assert not torch.are_deterministic_algorithms_enabled()\n"
        "from zgain.core.environment import setup_torch\n"
        "setup_torch(0, device='cpu', threads=1)\n"
        "print(torch.are_deterministic_algorithms_enabled(),\n"
        "      torch.is_deterministic_algorithms_warn_only_enabled(),\n"
        "      'torch._inductor.config' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True", "True", "False"]
