"""Simulator cost per delivered packet as the number of flows grows.

    python bench/bench_flows.py [--flows 10 100 1000 10000] [--seconds 20] [--big] [--repeat 1]

Every case shares one bottleneck, 100 ms RTT, queue = 1 BDP, Reno on the `linux` host, all
flows starting at once, measured over the second half of the run: 10 Gb/s for the flow counts
given, and with `--big` 100,000 flows on 100 Gb/s (the same 1 Mb/s per flow as 10,000 flows on
10 Gb/s). Each case runs in a process of its own, so its peak resident memory is its own.
Prints, per case: delivered packets, events per delivered packet, wall seconds of the event
loop (timed inside the core), ns per delivered packet, the ratio to the first case's ns per
packet, the wall seconds `simulate()` took besides the loop (resolving the scenario, building
the flows, the results, the window's measures), and peak RSS. With `--repeat N` each case runs
N times and its row is the run with the fastest loop, the slowest one's ns per packet beside it:
on a shared VM the same case has run at 1.5 times its best (docs/performance.md), and a ratio
between two cases means something only between runs that were not slowed. A benchmark prints
numbers; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time

ROW = "{:<22}{:>16}{:>11}{:>9}{:>9}{:>10}{:>8}{:>11}{:>10}"
HEADER = (
    "case",
    "delivered pkts",
    "events/pkt",
    "wall s",
    "ns/pkt",
    "slowest",
    "ratio",
    "outside s",
    "RSS",
)


def scenario(flows: int, rate_gbps: int, seconds: int) -> dict[str, object]:
    return {
        "name": f"flows-{flows}",
        "duration": f"{seconds}s",
        "sample_interval": "1s",
        "measure": "second half",
        "bottleneck": {"rate": f"{rate_gbps}Gbps", "queue": "100%bdp"},
        "flow": [{"cc": "reno", "rtt": "100ms", "count": flows}],
    }


def one_case(flows: int, rate_gbps: int, seconds: int) -> None:
    """Run one case here and print its figures as JSON (called in a child process)."""
    from tcpeval import simulate

    started = time.perf_counter()
    backend = simulate(scenario(flows, rate_gbps, seconds)).summary["backend"]
    whole_s = time.perf_counter() - started
    figures = backend["details"] | {"wall_seconds": backend["wall_seconds"]}
    figures["outside_s"] = whole_s - backend["wall_seconds"]
    figures["max_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(figures))


def run_case(flows: int, rate_gbps: int, seconds: int) -> dict[str, float]:
    args = [sys.executable, __file__, "--one", str(flows), str(rate_gbps), str(seconds)]
    done = subprocess.run(args, capture_output=True, text=True, check=True)
    return json.loads(done.stdout.splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--flows", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--seconds", type=int, default=20, help="simulated; default: 20")
    parser.add_argument("--big", action="store_true", help="add 100,000 flows on 100 Gb/s")
    parser.add_argument("--repeat", type=int, default=1, help="runs per case; default: 1")
    parser.add_argument("--one", type=int, nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        one_case(*args.one)
        return
    if args.repeat < 1:
        sys.exit(f"--repeat: {args.repeat} must be at least 1")
    cases = [(flows, 10) for flows in args.flows] + ([(100_000, 100)] if args.big else [])
    print(ROW.format(*HEADER))
    first_ns = None
    for flows, rate_gbps in cases:
        runs = [run_case(flows, rate_gbps, args.seconds) for _ in range(args.repeat)]
        runs.sort(key=lambda run: run["wall_seconds"])
        sim = runs[0]
        delivered = sim["packets_delivered"]
        ns_per_pkt = sim["wall_seconds"] * 1e9 / delivered
        first_ns = first_ns or ns_per_pkt
        print(
            ROW.format(
                f"{flows:,} flows, {rate_gbps} Gb/s",
                f"{delivered:,}",
                f"{sim['events'] / delivered:.2f}",
                f"{sim['wall_seconds']:.1f}",
                f"{ns_per_pkt:.0f}",
                f"{runs[-1]['wall_seconds'] * 1e9 / delivered:.0f}",
                f"{ns_per_pkt / first_ns:.2f}",
                f"{sim['outside_s']:.1f}",
                f"{sim['max_rss_mb']:.0f} MB",
            )
        )


if __name__ == "__main__":
    main()
