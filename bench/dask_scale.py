"""Sweep speed against Dask workers: the same sweep on a LocalCluster of 1, 2, … single-threaded
worker processes, started from examples/clusters/local.toml as `--scheduler` starts it.

    python bench/dask_scale.py [--test symmetric] [--repeats 2] [--max-workers 4]

The sweep is one test of the Hamilton suite over its full grid (3 rates × 5 RTTs for
`symmetric`), for cubic and its reno baseline, `--repeats` seeds each: 60 runs of 300 s by
default, about 40 s on one worker. Each count of workers sweeps into a fresh directory, timed
from the sweep's start (all workers already running) to its last run written. Prints runs per
second, the speed-up over one worker, the efficiency (speed-up per core the workers can use:
beyond the CPU count, more workers only take turns on the same cores) and the load average
as the sweep ended, since on a shared host other users' work takes cores too. A benchmark
prints numbers for people to compare; it asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from pathlib import Path
from typing import Any

from distributed import Client

import tcpeval
from tcpeval.suites import grid_of, load_suite
from tcpeval.sweep.dask import load_cluster, started

LOCAL_CLUSTER_FILE = Path(__file__).parent.parent / "examples" / "clusters" / "local.toml"
STACKS = ["cubic", "reno"]
CPUS = os.cpu_count() or 1
ROW = "{:>8}{:>6}{:>8}{:>10}{:>12}{:>10}"


def hamilton_grid(test_name: str, repeats: int) -> dict[str, Any]:
    suite = load_suite("hamilton")
    test = next(test for test in suite.test if test.name == test_name)
    return grid_of(test, suite, STACKS, quick=False) | {"repeats": repeats}


def runs_per_second(grid: dict[str, Any], workers: int, out: Path) -> tuple[int, float]:
    """The runs written and their rate, on `workers` workers all joined before the clock
    starts: a worker that joins late would count its start-up against the sweep."""
    spec = load_cluster(LOCAL_CLUSTER_FILE).model_copy(update={"workers": workers})
    with started(spec) as address:
        with Client(address) as client:
            client.wait_for_workers(workers)
        report = tcpeval.sweep(grid, out, scheduler=address, progress=False)
    return report.done, report.done / report.wall_seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--test", default="symmetric", help="A test of the Hamilton suite.")
    parser.add_argument("--repeats", type=int, default=2, help="Seeds per grid point.")
    parser.add_argument("--max-workers", type=int, default=4)
    args = parser.parse_args()

    grid = hamilton_grid(args.test, args.repeats)
    print(f"hamilton/{args.test}, {'+'.join(STACKS)}, {args.repeats} repeats; {CPUS} CPUs here")
    print(ROW.format("workers", "runs", "runs/s", "speed-up", "efficiency", "load"))
    with tempfile.TemporaryDirectory(prefix="dask-scale-") as scratch:
        one_worker = None
        for workers in range(1, args.max_workers + 1):
            runs, rate = runs_per_second(grid, workers, Path(scratch) / str(workers))
            one_worker = one_worker or rate
            print(row(workers, runs, rate, rate / one_worker), flush=True)


def row(workers: int, runs: int, rate: float, speed_up: float) -> str:
    efficiency = speed_up / min(workers, CPUS)
    load = os.getloadavg()[0]
    return ROW.format(
        workers, runs, f"{rate:.2f}", f"{speed_up:.2f}×", f"{efficiency:.0%}", f"{load:.1f}"
    )


if __name__ == "__main__":
    main()
