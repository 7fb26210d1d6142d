"""Simulator speed on the reference dumbbell: 1 Gb/s, 100 ms, queue = 1 BDP, 30 s.

    python bench/bench_sim.py [--cc reno cubic bbr] [--repeat 3] [--sack-compression]

Prints, for one flow and for ten of each algorithm: packets delivered, events, wall seconds
(timed inside the core, so Python start-up is not counted; the fastest of `--repeat` runs of
the same deterministic scenario, so that other work on the machine does not count either) and
the rates per wall-second, and each algorithm's 10-flow rate as a share of the first one's. A
benchmark prints numbers for people to compare; it asserts nothing. `--sack-compression` gives
every flow Linux 4.18's receiver (docs/architecture.md), which halves the ACKs of flows that
keep losing.
"""

from __future__ import annotations

import argparse
from typing import Any

from tcpeval import simulate
from tcpeval.scenario import cc_algorithms


def dumbbell(cc: str, flows: int, sack_compression: bool) -> dict[str, Any]:
    return {
        "name": f"bench-{flows}x{cc}",
        "duration": "30s",
        "sample_interval": "1s",
        "bottleneck": {"rate": "1Gbps", "queue": "100%bdp"},
        "flow": [{"cc": cc, "rtt": "100ms", "count": flows, "sack_compression": sack_compression}],
    }


ROW = "{:<14}{:>16}{:>14}{:>9}{:>14}{:>14}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [algorithm["name"] for algorithm in cc_algorithms()]
    parser.add_argument(
        "--cc", nargs="+", default=["reno"], choices=names, help="default: reno", metavar="CC"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; default: 3")
    parser.add_argument(
        "--sack-compression", action="store_true", help="receivers compress SACKs (Linux 4.18)"
    )
    args = parser.parse_args()
    stacks = args.cc
    print(ROW.format("case", "delivered pkts", "events", "wall s", "pkts/wall-s", "events/wall-s"))
    ten_flow_rates = {}
    for cc in stacks:
        for flows in (1, 10):
            scenario = dumbbell(cc, flows, args.sack_compression)
            runs = [simulate(scenario).summary["sim"] for _ in range(args.repeat)]
            sim = min(runs, key=lambda run: run["wall_seconds"])
            delivered, events, wall_s = sim["packets_delivered"], sim["events"], sim["wall_seconds"]
            print(
                ROW.format(
                    f"{flows} x {cc}",
                    f"{delivered:,}",
                    f"{events:,}",
                    f"{wall_s:.2f}",
                    f"{delivered / wall_s:,.0f}",
                    f"{events / wall_s:,.0f}",
                )
            )
            if flows == 10:
                ten_flow_rates[cc] = delivered / wall_s
    reference = stacks[0]
    for cc, rate in list(ten_flow_rates.items())[1:]:
        share = rate / ten_flow_rates[reference]
        print(f"10 x {cc}: {share:.0%} of {reference}'s delivered packets per wall-second")


if __name__ == "__main__":
    main()
