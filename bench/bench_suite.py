"""Where a quick suite's CPU goes: the simulator core against everything else.

    python bench/bench_suite.py [--suite hamilton ...] [--cc cubic] [--jobs 2]

Runs `tcpeval suite NAME --cc CC --quick` (simulator backend) in a temporary directory, as a
user does, and prints its wall time, its CPU time (user + sys of the command and of the worker
processes it waited for: `RUSAGE_CHILDREN`, read before and after), the CPU inside the core
(the sum of each run's `backend.wall_seconds`, which the core times around the simulation
alone: single-threaded, so its wall time is its CPU time on an idle core, more on a busy one)
and the core's share. Then the CPU of `tcpeval --help`, the cost of starting the command. On a
shared machine wall times vary with the load; CPU times vary far less, so compare those. A
benchmark prints numbers for people to compare; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Cost:
    wall_s: float
    cpu_s: float


def measured(command: list[str]) -> Cost:
    """Wall and CPU (user + sys, the command and every process it waited for) of a command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Cost(wall, cpu)


def core_seconds(out: Path) -> tuple[int, float]:
    """The runs of a suite directory and the seconds the core spent simulating them."""
    summaries = list(out.glob("*/runs/*/summary.json"))
    seconds = sum(json.loads(path.read_text())["backend"]["wall_seconds"] for path in summaries)
    return len(summaries), seconds


def tcpeval(*arguments: str) -> list[str]:
    """The `tcpeval` command installed beside this Python, as a user runs it (a pool's
    workers start by importing the script that started their parent, which `-m` would not
    show)."""
    return [str(Path(sys.executable).with_name("tcpeval")), *arguments]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", nargs="+", default=["hamilton"])
    parser.add_argument("--cc", default="cubic")
    parser.add_argument("--jobs", type=int, default=None, help="Default: one per CPU.")
    options = parser.parse_args()
    jobs = [] if options.jobs is None else ["--jobs", str(options.jobs)]
    print(f"{'suite':<10}{'runs':>6}{'wall s':>9}{'CPU s':>9}{'core s':>9}{'core share':>12}")
    for suite in options.suite:
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / suite
            cost = measured(
                tcpeval("suite", suite, "--cc", options.cc, "--quick", "--out", str(out), *jobs)
            )
            runs, core = core_seconds(out)
        share = core / cost.cpu_s
        print(
            f"{suite:<10}{runs:>6}{cost.wall_s:>9.1f}{cost.cpu_s:>9.1f}{core:>9.1f}{share:>12.0%}"
        )
    help_cost = measured(tcpeval("--help"))
    print(f"tcpeval --help: {help_cost.cpu_s:.2f} s CPU, {help_cost.wall_s:.2f} s wall")


if __name__ == "__main__":
    main()
