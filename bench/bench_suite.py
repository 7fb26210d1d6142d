"""Where a suite's CPU goes: the simulator core against everything else.

    python bench/bench_suite.py [--suite hamilton ...] [--cc cubic] [--jobs 2] [--full]
        [--command PATH]

Runs `tcpeval suite NAME --cc CC --quick` (simulator backend) in a temporary directory, as a
user does, and prints the packets its runs delivered, its wall time, its CPU time (user + sys
of the command and of every process it started, this one their subreaper: `RUSAGE_CHILDREN`,
read before and after) and the core's time two ways: the sum of each run's
`backend.wall_seconds`, which the core times around the simulation alone (its CPU time on an
idle core, more on a busy one), and the CPU time of the same simulations run again in this
process, which the core's share is taken from. Then the CPU of `tcpeval --help`, the cost of
starting the command.

With `--full` it runs the suite's full grid instead (the Hamilton suite: 1,050 runs, minutes on
two cores) and leaves out the second simulation of every run, so the core's CPU and share are
not printed; its wall time from the summaries is. `--command` can name another tree's
installed `tcpeval`, to time an older version the same way (its results may differ, hence the
packets). On a shared machine wall times vary with the load; CPU times vary far less, so
compare those. A benchmark prints numbers for people to compare; it asserts nothing.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from tcpeval import _core
from tcpeval.scenario import parse_scenario, resolve
from tcpeval.suites import grid_of, load_suite
from tcpeval.sweep import expand, load_grid

PR_SET_CHILD_SUBREAPER = 36  # prctl(2)


@dataclass(frozen=True)
class Cost:
    wall_s: float
    cpu_s: float


def measured(command: list[str]) -> Cost:
    """Wall and CPU (user + sys) of a command and of every process it started. This process is
    made a subreaper, so that those the command leaves behind (the pool's fork server, which
    exits after it and reaps the workers) come back here and are waited for and counted."""
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    wall = time.perf_counter() - started
    _reap_all()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return Cost(wall, cpu)


def _reap_all() -> None:
    """Wait for every child left, the command's orphans included."""
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            return


@dataclass(frozen=True)
class Simulated:
    """What a suite directory's summaries say the core did."""

    runs: int
    wall_s: float
    """The core's wall time, summed over the runs."""
    delivered_pkts: int


def simulated(out: Path) -> Simulated:
    backends = [
        json.loads(path.read_text())["backend"] for path in out.glob("*/runs/*/summary.json")
    ]
    return Simulated(
        runs=len(backends),
        wall_s=sum(backend["wall_seconds"] for backend in backends),
        delivered_pkts=sum(backend["details"]["packets_delivered"] for backend in backends),
    )


def core_cpu_seconds(suite: str, cc: str) -> float:
    """The CPU the core takes for the suite's quick runs, simulated again here one after the
    other: the scenario resolved beforehand, only `_core.simulate` timed. Unlike the core's
    wall time in the summaries this does not grow when the machine is busy."""
    chosen = load_suite(suite)
    seconds = 0.0
    for test in chosen.test:
        for spec in expand(load_grid(grid_of(test, chosen, [cc, "reno"], quick=True))):
            resolved = json.dumps(resolve(parse_scenario(spec.scenario)))
            started = time.process_time()
            _core.simulate(resolved, _core.Progress())
            seconds += time.process_time() - started
    return seconds


def installed() -> Path:
    """The `tcpeval` script installed beside this Python: what a user runs (a pool's workers
    start by importing the script that started their parent, which `python -m` would hide)."""
    return Path(sys.executable).with_name("tcpeval")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", nargs="+", default=["hamilton"])
    parser.add_argument("--cc", default="cubic")
    parser.add_argument("--jobs", type=int, default=None, help="Default: one per CPU.")
    parser.add_argument("--full", action="store_true", help="The full grid, not --quick.")
    parser.add_argument("--command", type=Path, default=installed(), help="Default: %(default)s")
    options = parser.parse_args()
    jobs = [] if options.jobs is None else ["--jobs", str(options.jobs)]
    grid = [] if options.full else ["--quick"]
    print(f"{'suite':<10}{'runs':>5}{'M pkts':>8}{'wall s':>8}{'CPU s':>7}", end="")
    print(f"{'core wall s':>12}{'core CPU s':>11}{'core share':>11}")
    for suite in options.suite:
        with tempfile.TemporaryDirectory() as scratch:
            out = Path(scratch) / suite
            arguments = ["suite", suite, "--cc", options.cc, *grid, "--out", str(out), *jobs]
            cost = measured([str(options.command), *arguments])
            core = simulated(out)
        print(f"{suite:<10}{core.runs:>5}{core.delivered_pkts / 1e6:>8.0f}", end="")
        print(f"{cost.wall_s:>8.1f}{cost.cpu_s:>7.1f}{core.wall_s:>12.1f}", end="")
        if options.full:
            print(f"{'–':>11}{'–':>11}")
            continue
        core_cpu = core_cpu_seconds(suite, options.cc)
        print(f"{core_cpu:>11.1f}{core_cpu / cost.cpu_s:>11.0%}")
    help_cost = measured([str(options.command), "--help"])
    print(f"tcpeval --help: {help_cost.cpu_s:.2f} s CPU, {help_cost.wall_s:.2f} s wall")


if __name__ == "__main__":
    main()
