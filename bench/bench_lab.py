"""Figures for the lab: the simulator against the kernel on the same scenario files, and the
emulator's capacity (the highest rate it delivers within its own tolerances).

Fidelity cases, each for reno, cubic and bbr unless said, `--repeats` each, on
the simulator (seeds 1..N) and the lab:
  1  one flow, 100 Mb/s, 60 ms, 1 BDP
  2  two flows of one stack, 100 Mb/s, 40 ms, 1 BDP (Jain)
  3  one reno + one cubic, 100 Mb/s, 40 ms, 1 BDP (shares)
  4  one flow, random loss 1e-3, 100 Mb/s, 60 ms (goodput; Mathis beside it)
  5  one bbr flow, 100 Mb/s, 40 ms, 10% BDP (goodput, queue)
  6  one flow, 100 Mb/s, 40 ms, 1 BDP, policed at 20 Mb/s with a 64 KB bucket
Prints per case and stack: mean goodput (Mb/s) sim and lab, their ratio, Jain, mean queue,
the share of the flows' packets retransmitted, and how many lab runs the self-check voided.
Needs root; the lab cleans up after itself.

    .venv/bin/python bench/bench_lab.py [--seconds 60] [--repeats 3] [--cases 1,2,3,4,5,6]
    .venv/bin/python bench/bench_lab.py --capacity [--seconds 20]
"""

from __future__ import annotations

import argparse
import statistics
from typing import Any

from tcpeval import backends
from tcpeval.models import mathis_goodput_bps
from tcpeval.scenario import parse_scenario

STACKS = ("reno", "cubic", "bbr")
MSS_BYTES = 1448


def case(number: int, stack: str, seconds: int) -> dict[str, Any]:
    base: dict[str, Any] = {"name": f"case{number}-{stack}", "duration": f"{seconds}s"}
    link = {"rate": "100Mbps", "queue": "100%bdp"}
    flows: list[dict[str, Any]]
    if number == 1:
        flows = [{"cc": stack, "rtt": "60ms"}]
    elif number == 2:
        flows = [{"cc": stack, "rtt": "40ms", "count": 2}]
    elif number == 3:
        flows = [{"cc": "reno", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}]
    elif number == 4:
        flows = [{"cc": stack, "rtt": "60ms"}]
        link["loss"] = 1e-3  # type: ignore[assignment]
    elif number == 5:
        flows = [{"cc": "bbr", "rtt": "40ms"}]
        link["queue"] = "10%bdp"
    else:
        flows = [{"cc": stack, "rtt": "40ms"}]
        link["policer"] = {"rate": "20Mbps", "burst": "64KB"}  # type: ignore[assignment]
    return base | {"bottleneck": link, "flow": flows}


def stacks_of(number: int) -> tuple[str, ...]:
    return ("reno+cubic",) if number == 3 else ("bbr",) if number == 5 else STACKS


def measure(data: dict[str, Any], backend: str, seed: int) -> dict[str, Any]:
    summary = backends.run(parse_scenario(data | {"seed": seed}), backend).summary
    flows = summary["flows"]
    return {
        "goodput": [f["goodput_mbps"] for f in flows],
        "jain": summary["jain_index"],
        "queue": summary["bottleneck"]["mean_queue_pkts"],
        "retransmitted": sum(f["retransmits"] for f in flows)
        / sum(f["packets_sent"] for f in flows),
        "valid": summary["backend"].get("valid", True),
        "why": summary["backend"].get("invalid_reason"),
    }


def fidelity(cases: list[int], seconds: int, repeats: int) -> None:
    print(f"{seconds} s runs, {repeats} repeats; goodput in Mb/s (total of the flows; "
          "case 3: reno's share)")  # fmt: skip
    print("lab: over its valid runs (over all runs when none was valid); ratio = lab / sim")
    header = f"{'case':5}{'stack':12}{'sim':>8}{'lab':>8}{'ratio':>7}{'lab all':>8}{'jain sim':>9}"
    print(header + f"{'jain lab':>9}{'queue sim':>10}{'queue lab':>10}{'retr% sim':>10}"
          f"{'retr% lab':>10}  lab voided")  # fmt: skip
    for number in cases:
        for stack in stacks_of(number):
            data = case(number, stack, seconds)
            sim = [measure(data, "sim", seed) for seed in range(1, repeats + 1)]
            lab = [measure(data, "lab", seed) for seed in range(1, repeats + 1)]
            _print_row(number, stack, sim, lab)
            voided = [run["why"] for run in lab if not run["valid"]]
            for why in voided:
                print(f"      voided: {why}")
        if number == 4:
            mathis = mathis_goodput_bps(MSS_BYTES, 0.060, 1e-3) / 1e6
            print(f"      Mathis at p=1e-3, 60 ms: {mathis:.1f} Mb/s")


def _print_row(number: int, stack: str, sim: list[dict], lab: list[dict]) -> None:
    def figure(runs: list[dict]) -> float:
        if number == 3:  # reno's share of the pair
            return statistics.mean(r["goodput"][0] / sum(r["goodput"]) for r in runs)
        return statistics.mean(sum(r["goodput"]) for r in runs)

    def mean(runs: list[dict], key: str) -> float:
        return statistics.mean(r[key] for r in runs)

    valid = [r for r in lab if r["valid"]] or lab
    s, k = figure(sim), figure(valid)
    every = figure(lab)
    print(f"{number:<5}{stack:12}{s:8.3g}{k:8.3g}{k / s:7.3f}{every:8.3g}{mean(sim, 'jain'):9.3f}"
          f"{mean(valid, 'jain'):9.3f}{mean(sim, 'queue'):10.1f}{mean(valid, 'queue'):10.1f}"
          f"{100 * mean(sim, 'retransmitted'):10.2f}{100 * mean(valid, 'retransmitted'):10.2f}"
          f"  {len(lab) - len([r for r in lab if r['valid']])}/{len(lab)}")  # fmt: skip


def capacity(seconds: int) -> None:
    print("one cubic flow, queue 1 BDP: rate asked → goodput, the self-check's verdict")
    for rtt in ("100ms", "300ms"):
        for rate_mbps in (100, 200, 500, 800, 1000, 1500, 2000):
            data = {
                "name": f"capacity-{rate_mbps}-{rtt}",
                "duration": f"{seconds}s",
                "bottleneck": {"rate": f"{rate_mbps}Mbps", "queue": "100%bdp"},
                "flow": [{"cc": "cubic", "rtt": rtt}],
            }
            # Every rate is tried: a stall of the VM voids a run at any rate (docs/lab.md),
            # so the first invalid run is not yet the ceiling; the reasons tell them apart.
            run = measure(data, "lab", 1)
            verdict = "valid" if run["valid"] else f"INVALID: {run['why']}"
            print(f"{rtt:>6} {rate_mbps:5} Mb/s → {sum(run['goodput']):7.1f} Mb/s  {verdict}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=60)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--cases", default="1,2,3,4,5,6")
    parser.add_argument("--capacity", action="store_true")
    args = parser.parse_args()
    if args.capacity:
        capacity(args.seconds)
    else:
        fidelity([int(c) for c in args.cases.split(",")], args.seconds, args.repeats)


if __name__ == "__main__":
    main()
