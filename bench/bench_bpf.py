"""The BPF stacks' cost in the kernel: each stack's programs as the kernel counted them
(`kernel.bpf_stats_enabled`, on for the bench and restored after), the per-ACK one's ns per
call, and the lab's goodput ceiling with each stack beside the built-in reno and cubic.

Each case is one flow on a path faster than the lab's hosts can fill (the emulator holds its
rate to 1.5 Gb/s; the two TCP ends and the bridge share one CPU), so the goodput is the
ceiling the sending host reaches with that stack. The kernel counts a program's run time only
while the statistics are on (two clock reads per call, in the figure).

    .venv/bin/python bench/bench_bpf.py [--seconds 15] [--rate 2Gbps] [--stacks aimd,htcp]
"""

from __future__ import annotations

import argparse
from pathlib import Path

from tcpeval import backends
from tcpeval.lab import bpf
from tcpeval.scenario import parse_scenario

STATS = Path("/proc/sys/kernel/bpf_stats_enabled")
BUILT_IN = ("reno", "cubic")
# The ops the kernel calls on every ACK that advances: cong_avoid, or cong_control instead.
PER_ACK_OPS = ("cong_avoid", "cong_control")
ECN = {"dctcp": "classic", "prague": "l4s"}


def case(stack: str, rate: str, seconds: float) -> dict:
    flow = {"cc": stack, "rtt": "10ms", "ecn": ECN.get(stack, "off")}
    link = {"rate": rate, "queue": "100%bdp"}
    return {
        "name": f"ceiling {stack}",
        "duration": f"{seconds}s",
        "bottleneck": link,
        "flow": [flow],
    }


def per_ack(programs: dict[str, dict[str, int]]) -> tuple[str, int, float]:
    """The per-ACK op: its name, its calls and its ns per call."""
    for name, counted in programs.items():
        if name.endswith(PER_ACK_OPS) and counted["calls"]:
            return name, counted["calls"], counted["run_ns"] / counted["calls"]
    return "-", 0, 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--seconds", type=float, default=15)
    parser.add_argument("--rate", default="2Gbps")
    parser.add_argument("--stacks", default=",".join(bpf.stacks()))
    args = parser.parse_args()
    stacks = [*BUILT_IN, *(s for s in args.stacks.split(",") if s)]
    before = STATS.read_text().strip()
    STATS.write_text("1")
    try:
        print(
            f"{'stack':10} {'goodput Mb/s':>13} {'valid':>6}  per-ACK op (calls, ns/call); others"
        )
        for stack in stacks:
            result = backends.run(parse_scenario(case(stack, args.rate, args.seconds)), "lab")
            goodput = result.summary["flows"][0]["goodput_mbps"]
            valid = result.summary["backend"]["valid"]
            held = result.summary["backend"]["details"]["bpf_stacks"]
            programs = next(iter(held.values()))["programs"] if held else {}
            op, calls, ns = per_ack(programs)
            others = ", ".join(
                f"{name} {c['calls']}×{c['run_ns'] / c['calls']:.0f} ns"
                for name, c in programs.items()
                if c["calls"] and name != op
            )
            cost = f"{op} ({calls}, {ns:.0f} ns)" if calls else "built in"
            print(f"{stack:10} {goodput:13.1f} {valid!s:>6}  {cost}; {others}", flush=True)
    finally:
        STATS.write_text(before)


if __name__ == "__main__":
    main()
