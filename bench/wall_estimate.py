"""The simulator's wall-time estimate (backends/sim/wall_estimate.py) beside the measured wall time.

    python bench/wall_estimate.py [examples/*.toml ...]

For each scenario (default: every example, then a few long, fast paths): the estimate, the
core's wall seconds and their ratio. The estimate is meant to err long, not short: a ratio
below 1 is a run the estimate would have let through under a `--max-time` it overran. A
benchmark prints numbers for people to compare; it asserts nothing, and on a busy machine the
measured times run long.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tcpeval import simulate
from tcpeval.backends.sim.wall_estimate import estimate_wall
from tcpeval.scenario import load_scenario, resolution

FAST_PATHS = [
    ["duration=20s", "bottleneck.rate=10Gbps", "bottleneck.queue=100%bdp"],
    ["duration=10s", "bottleneck.rate=40Gbps", "flow.*.cc=cubic"],
    ["duration=5s", "bottleneck.rate=100Gbps"],
]


def main(paths: list[str]) -> None:
    cases = [(path, []) for path in paths] or [
        *((str(path), []) for path in sorted(Path("examples").glob("*.toml"))),
        *(("examples/reno-100mbps.toml", sets) for sets in FAST_PATHS),
    ]
    print(f"{'scenario':60s} {'estimate s':>10s} {'measured s':>10s} {'ratio':>6s}  driven by")
    for path, sets in cases:
        scenario = load_scenario(path, sets)
        estimate = estimate_wall(scenario, resolution(scenario))
        measured = simulate(scenario).summary["backend"]["wall_seconds"]
        field, value, _ = estimate.largest()
        name = " ".join([Path(path).stem, *sets])
        ratio = estimate.total / measured if measured > 0 else float("inf")
        print(
            f"{name:60.60s} {estimate.total:10.2f} {measured:10.2f} {ratio:6.2f}  {field} = {value}"
        )


if __name__ == "__main__":
    main(sys.argv[1:])
