"""The stacks the lab's kernel lacks (H-TCP, HighSpeed, FAST) against what their papers and the
Hamilton study published: the simulator's figures for the cases those statements
are about, with each mechanism that decides them switched off in turn.

    .venv/bin/python bench/stacks_vs_papers.py [--seeds 3]

Convergence: the Hamilton convergence case at its largest BDP (250 Mb/s, 324 ms, queue 20% of
the BDP; the second flow starts at 60 s of 600), timed as the suites time it (the late flow
holds 80% of its fair share; docs/methodology.md §3.7). The published anchors: H-TCP about 30 s
(Li's thesis), "convergence of AIMD with β = 0.5 takes ≈ 4 congestion epochs" (the H-TCP
draft), and "Scalable, HS-TCP and BIC show slow convergence" (Hamilton, 2005).

FAST: "Scalable-TCP and FAST consistently show substantial unfairness even when the competing
flows have identical path characteristics" (Hamilton, 2005), against FAST's equilibrium, in
which each flow keeps α packets queued and flows share equally whatever their RTTs, provided
the buffer holds them all, and a flow that starts when the queue is already there takes it
for propagation delay (the late joiner's over-estimated baseRTT).

A benchmark prints figures for people to compare; it asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import statistics
from typing import Any

from tcpeval import backends
from tcpeval.scenario import parse_scenario
from tcpeval.suites.measures import convergence

CONVERGENCE_STACKS: dict[str, Any] = {
    "htcp (Linux tcp_htcp.c)": "htcp",
    "htcp, β fixed at 0.5": {"name": "htcp", "beta_adaptive": False},
    "htcp, no bandwidth switch": {"name": "htcp", "bandwidth_switch": False},
    "htcp, draft's c = 0.5": {"name": "htcp", "alpha_quadratic": 0.5},
    "htcp, no RTT scaling": {"name": "htcp", "rtt_scaling": False},
    "highspeed": "highspeed",
    "reno": "reno",
}


def two_flows(
    cc: Any, rtts_ms: tuple[int, int], queue: str, start_s: float, seconds: float, seed: int
) -> dict[str, Any]:
    """Two flows on 250 Mb/s, the second starting at `start_s`."""
    flows = [{"cc": cc, "rtt": f"{rtt}ms", "start_jitter": "1s"} for rtt in rtts_ms]
    flows[1]["start"] = f"{start_s}s"
    return {
        "name": "stacks-vs-papers",
        "duration": f"{seconds}s",
        "seed": seed,
        "sample_interval": "1s",
        "measure": "second half",
        "bottleneck": {"rate": "250Mbps", "queue": queue},
        "flow": flows,
    }


def convergence_row(name: str, cc: Any, seeds: int) -> None:
    times = []
    for seed in range(1, seeds + 1):
        scenario = two_flows(cc, (324, 324), "20%bdp", 60, 600, seed)
        times.append(convergence(backends.run(parse_scenario(scenario), "sim"))["convergence_s"])
    cells = " ".join(f"{t:6.1f}" if math.isfinite(t) else "   inf" for t in times)
    print(f"{name:28} {cells}   median {statistics.median(times):6.1f} s", flush=True)


def fast_row(name: str, rtts_ms: tuple[int, int], queue: str, start_s: float) -> None:
    result = backends.run(parse_scenario(two_flows("fast", rtts_ms, queue, start_s, 300, 1)), "sim")
    flows = result.summary["flows"]
    mbps = [f["goodput_mbps"] for f in flows]
    events = [f["congestion_events"] for f in flows]
    print(
        f"{name:46} {mbps[0]:6.1f} {mbps[1]:6.1f}   ratio {max(mbps) / min(mbps):4.2f}"
        f"   congestion events {events[0]}, {events[1]}",
        flush=True,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--seeds", type=int, default=3)
    args = parser.parse_args()
    print("convergence, 250 Mb/s, 324 ms, 20% BDP: seconds for each seed")
    for name, cc in CONVERGENCE_STACKS.items():
        convergence_row(name, cc, args.seeds)
    print("\nFAST (α = 200), 250 Mb/s, 300 s, second half: Mb/s of each flow")
    fast_row("42 / 42 ms, 20% BDP (175 pkts, below 2α)", (42, 42), "20%bdp", 0)
    fast_row("42 / 82 ms, 20% of the 82 ms BDP (342 pkts)", (42, 82), "20%bdp", 0)
    fast_row("42 / 162 ms, 20% of the 162 ms BDP (675 pkts)", (42, 162), "20%bdp", 0)
    fast_row("42 / 42 ms, 1 BDP, the second at 60 s", (42, 42), "100%bdp", 60)
    fast_row("162 / 162 ms, 1 BDP, the second at 60 s", (162, 162), "100%bdp", 60)


if __name__ == "__main__":
    main()
