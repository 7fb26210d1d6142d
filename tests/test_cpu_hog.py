"""The CPU hog of the loaded diagnose cases (tests/cpu_hog.py) spins on every core, each
spinner on its own, and leaves nothing behind, even when the test inside it fails; the duty
cycle (tests/duty_cycle.py) stops a process part of the time and leaves it running. Needs
root (cgroups); about 2 s."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from cgroups import CGROUP_ROOT, PREFIX
from cpu_hog import cpu_hog
from duty_cycle import duty_cycled
from tcpeval.lab.ledger import host_lock
from tcpeval.lab.run import LOCK_WAIT_S
from tcpeval.lab.topology import EMULATOR_CPU

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="needs root (cgroups)")


def _hog_groups() -> list[Path]:
    """In the v1 cpu hierarchy or the unified tree, whichever the host has."""
    return [*CGROUP_ROOT.glob(f"*/{PREFIX}hog-*"), *CGROUP_ROOT.glob(f"{PREFIX}hog-*")]


def test_the_hog_spins_one_process_per_core_and_leaves_nothing() -> None:
    pids: list[int] = []
    # With the lab held: the hog must not load another test's lab run.
    with host_lock(LOCK_WAIT_S), pytest.raises(RuntimeError, match="a failing test"):
        _look_inside_then_fail(pids)
    assert pids
    assert not any(Path(f"/proc/{pid}").exists() for pid in pids)
    assert _hog_groups() == []


def _look_inside_then_fail(seen: list[int]) -> None:
    cores = os.cpu_count() or 1
    with cpu_hog() as pids:
        seen += pids
        assert len(pids) == cores
        assert [os.sched_getaffinity(pid) for pid in pids] == [{c} for c in range(cores)]
        # Idle-class on the emulator's CPU only (the path's, not the hosts').
        policies = [os.sched_getscheduler(pid) for pid in pids]
        assert policies == [
            os.SCHED_IDLE if c == EMULATOR_CPU else os.SCHED_OTHER for c in range(cores)
        ]
        groups = _hog_groups()
        assert len(groups) == 1
        assert sorted(int(p) for p in (groups[0] / "cgroup.procs").read_text().split()) == pids
        raise RuntimeError("a failing test")


def test_a_duty_cycled_process_is_stopped_part_of_the_time_and_left_running() -> None:
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        states = []
        with duty_cycled(sleeper.pid, stopped_s=0.05, period_s=0.1):
            for _ in range(40):
                states.append(_state(sleeper.pid))
                time.sleep(0.013)
        # Stopped about half of the time: at least a fifth and at most four fifths of 40
        # samples, whatever the scheduling of this thread and the cycling one.
        assert 8 <= states.count("T") <= 32, states
        assert _state(sleeper.pid) == "S"
    finally:
        sleeper.kill()
        sleeper.wait()


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
