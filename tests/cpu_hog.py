"""An unrelated CPU hog: one process spinning on each core, as a build or a batch job would
keep a busy host's cores, in a cgroup of its own that weighs as much as that many ordinary
(nice 0) processes.

It loads the hosts, not the path: the lab's emulator stands for the routers of a real path,
which are not on the host, and keeps one CPU to itself (lab/topology.py). A nice-0 spinner
there, even against the emulator's nice -20, takes time slices of a few milliseconds: the
lab's self-check then finds packets up to 17 ms late (p99.9 lateness 8 ms on a 40 ms path).
So the spinner on that CPU is SCHED_IDLE: it runs whenever the emulator leaves the CPU, and
the emulator, waking, preempts it at once.

Each spinner is pinned to its core, so the lab's clearing of its emulator's CPU (which moves
every thread that may run elsewhere) leaves it there: the hog loads both cores whenever it was
started. It dies with the thread that started it (PR_SET_PDEATHSIG), so a killed test leaves
no spinner behind; its cgroup is removed on the way out, or by the next test that makes one.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

from cgroups import cpu_weight
from tcpeval.lab.topology import EMULATOR_CPU
from tcpeval.processes import die_with_parent

SPIN = ["sh", "-c", "while :; do :; done"]


@contextmanager
def cpu_hog(cores: int | None = None) -> Iterator[list[int]]:
    """Spinning processes on every core (or the first `cores`) while inside; yields their
    pids."""
    count = cores or os.cpu_count() or 1
    with cpu_weight("hog", count) as procs, ExitStack() as stack:
        spinners = []
        for core in range(count):
            spinner = subprocess.Popen(SPIN, preexec_fn=_enter(procs, core))
            stack.callback(_stop, spinner)
            spinners.append(spinner)
        yield [s.pid for s in spinners]


def _enter(procs_file: Path, core: int) -> Callable[[], None]:
    """Run in the child before it execs: into the cgroup, onto its core, dying with us."""

    def enter() -> None:
        procs_file.write_text(str(os.getpid()))
        os.sched_setaffinity(0, {core})
        if core == EMULATOR_CPU:
            os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        die_with_parent()

    return enter


def _stop(spinner: subprocess.Popen[bytes]) -> None:
    spinner.kill()
    spinner.wait()
