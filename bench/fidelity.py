"""The fidelity table: each row one scenario, run through the models, the simulator
with each host profile (`flow.host`), and with --lab the kernel in the lab (real reno, cubic
and bbr); beside them the published figure where the repository keeps one (the DataTAG
measurements of the seeds: two flows sharing 1 Gb/s for 7000 s) and the kernel's figure the
lab recorded (`tcpeval.fidelity`, where the rows are defined).

Printed per row: the figure from each source, and the linux profile's ratio to the kernel
(this run's lab, or else the recorded figure) or else to the published figure. Goal: within
15% (goodput) and 0.05 (Jain).

    .venv/bin/python bench/fidelity.py [--lab] [--seconds 60] [--repeats 2]
        [--long-seconds 7000] [--rows mtu,rtt]   # rows whose name contains any of these

With --sample N it prints the fidelity map instead (tcpeval/fidelity_map.py): N scenarios
drawn with --seed S within the lab's range, each through the simulator's `linux` host and the
kernel, then the median, p90 and worst of their differences. Each case's figures are written
to --record (a JSON line per case) as it finishes; a run killed and started again with the same
seed and record skips the cases recorded. Goal: median goodput error ≤ 5%, p90 ≤ 15%.

    .venv/bin/python bench/fidelity.py --sample 100 --seed 1 [--seconds 20] [--record F]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path
from typing import Any

from tcpeval import backends, fidelity_map
from tcpeval.backends.protocol import BackendError
from tcpeval.fidelity import Figure, Row, on_host, rows
from tcpeval.result import Result
from tcpeval.scenario import ScenarioError, parse_scenario

PROFILES = ("rfc", "linux-2.6", "linux")


RUNS: dict[str, list[Result] | None] = {}
"""Runs already made, by scenario and backend: rows that read two figures of one case run it
once."""


def runs(scenario: dict[str, Any], backend: str, repeats: int) -> list[Result] | None:
    """`repeats` runs with seeds 1.., or None where the backend has no answer."""
    key = json.dumps([scenario, backend, repeats], sort_keys=True)
    if key not in RUNS:
        try:
            RUNS[key] = [
                backends.run(parse_scenario(scenario | {"seed": seed}), backend)
                for seed in range(1, repeats + 1)
            ]
        except (ScenarioError, BackendError):
            RUNS[key] = None
    return RUNS[key]


def measure(scenario: dict[str, Any], backend: str, figure: Figure, repeats: int) -> Any:
    """The mean figure over `repeats` seeds; 'n/a' where the backend has no answer; the lab's
    over its valid runs only ('void' when none was valid)."""
    results = runs(scenario, backend, repeats)
    if results is None:
        return "n/a"
    valid = [r for r in results if r.summary["backend"].get("valid", True)]
    figures = [f for f in map(figure, valid) if f is not None]
    if not figures:
        return "void" if not valid else "n/a"
    return statistics.fmean(figures)


def simulated(row: Row, host: str, repeats: int) -> Any:
    """The simulator's figure on `host`: the mean over the row's starts (`Row.starts`)."""
    scenarios = row.variants(on_host(row.scenario, host))
    figures = [measure(scenario, "sim", row.figure, repeats) for scenario in scenarios]
    missing = next((f for f in figures if not isinstance(f, float)), None)
    return missing if missing is not None else statistics.fmean(figures)


def print_row(row: Row, repeats: int, with_lab: bool) -> None:
    model = measure(row.scenario, "model", row.figure, 1)
    sims = [simulated(row, host, repeats) for host in PROFILES]
    lab = measure(row.scenario, "lab", row.figure, repeats) if with_lab and row.lab else "-"
    reference = next((r for r in (lab, row.kernel, row.published) if isinstance(r, float)), None)
    linux = sims[-1]
    ratio = linux / reference if isinstance(linux, float) and reference else None
    cells = [row.published, row.kernel, model, *sims, lab, ratio]
    print(f"{row.name:26}{row.unit:>11}" + "".join(f"{_cell(c):>10}" for c in cells), flush=True)
    for reason in voided(row.scenario, repeats) if with_lab and row.lab else []:
        print(f"    lab run voided: {reason}", flush=True)


def voided(scenario: dict[str, Any], repeats: int) -> list[str]:
    """Why the lab's self-check voided runs of this case (shown once, under its first row)."""
    key = json.dumps(scenario, sort_keys=True)
    if key in SHOWN_VOIDED:
        return []
    SHOWN_VOIDED.add(key)
    backend = [r.summary["backend"] for r in runs(scenario, "lab", repeats) or []]
    return [b.get("invalid_reason", "") for b in backend if not b.get("valid", True)]


SHOWN_VOIDED: set[str] = set()


def _cell(x: Any) -> str:
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:,.0f}"


def map_stacks() -> list[str]:
    """The stacks both worlds run that answer loss (fidelity_map's range)."""
    from tcpeval.scenario import cc_algorithms

    lab = backends.get("lab").algorithms()
    return [a["name"] for a in cc_algorithms() if a["name"] in lab and "off" in a["ecn"]]


def lab_result(scenario: dict[str, Any]) -> Result | None:
    """A valid lab run of `scenario`, tried twice; None when both were voided."""
    for _ in range(2):
        result = backends.run(parse_scenario(scenario), "lab")
        if result.summary["backend"]["valid"]:
            return result
    return None


def map_case(scenario: dict[str, Any]) -> dict[str, Any]:
    """One case of the map as its record: the figures of each world and their differences."""
    sim = backends.run(parse_scenario(fidelity_map.on_linux(scenario)), "sim")
    lab = lab_result(scenario)
    record: dict[str, Any] = {"name": scenario["name"], "scenario": scenario, "valid": bool(lab)}
    if lab is None:
        return record
    figures = {
        "goodput_mbps": [fidelity_map.total_goodput(r) for r in (sim, lab)],
        "jain": [r.summary["jain_index"] for r in (sim, lab)],
        "retransmissions_per_packet": [
            fidelity_map.retransmissions_per_packet(r) for r in (sim, lab)
        ],
        "mean_queue_pkts": [r.summary["bottleneck"]["mean_queue_pkts"] for r in (sim, lab)],
    }
    return record | {"figures": figures, "differences": fidelity_map.differences(sim, lab)}


def print_map(count: int, seed: int, seconds: float, record: Path, worst: int) -> None:
    rng = random.Random(seed)
    stacks = map_stacks()
    done = {}
    if record.exists():
        done = {c["name"]: c for c in map(json.loads, record.read_text().splitlines())}
    print(f"fidelity map: {count} cases, seed {seed}, {seconds:g} s each, stacks {stacks}")
    cases = []
    for index in range(count):
        scenario = fidelity_map.draw(rng, stacks, seconds, index)
        case = done.get(scenario["name"])
        if case is None:
            case = map_case(scenario)
            with record.open("a") as out:
                out.write(json.dumps(case) + "\n")
        cases.append(case)
        shown = case.get("figures", {}).get("goodput_mbps", "void")
        print(f"  {case['name']:64} goodput sim/kernel {shown}", flush=True)
    valid = [c for c in cases if c["valid"]]
    print(f"{len(valid)} of {len(cases)} cases valid in the lab (twice voided: left out)")
    for measure in fidelity_map.MEASURES:
        found = fidelity_map.spread(measure, valid, worst)
        if found is None:
            continue
        show = measure.shown.format
        print(f"{measure.name:28} over {found.count}: median {show(found.median)}, "
              f"p90 {show(found.p90)}; worst:")  # fmt: skip
        for difference, name in found.worst:
            print(f"    {show(difference):>9}  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--lab", action="store_true", help="run the lab's rows in the kernel")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--long-seconds", type=float, default=7000, help="the seeds' rows")
    parser.add_argument("--rows", default="", help="only rows whose name contains one of these")
    parser.add_argument("--sample", type=int, default=0, help="print the fidelity map of N cases")
    parser.add_argument("--seed", type=int, default=1, help="the map's draw")
    parser.add_argument("--record", type=Path, help="the map's cases, one JSON line each")
    parser.add_argument("--worst", type=int, default=5, help="the map's worst cases shown")
    args = parser.parse_args()
    if args.sample:
        record = args.record or Path(f"out/fidelity-map-{args.seed}.jsonl")
        record.parent.mkdir(parents=True, exist_ok=True)
        print_map(args.sample, args.seed, args.seconds, record, args.worst)
        return
    wanted = [w for w in args.rows.split(",") if w]
    started = time.monotonic()
    header = ["published", "kernel", "model", *(f"sim {h}" for h in PROFILES), "lab", "linux/ref"]
    print(f"{'row':26}{'figure':>11}" + "".join(f"{h[-10:]:>10}" for h in header))
    for row in rows(args.seconds, args.long_seconds):
        if not wanted or any(w in row.name for w in wanted):
            print_row(row, args.repeats, args.lab)
    print(
        "kernel: recorded in the lab (tcpeval/fidelity.py). linux/ref: the linux profile over "
        "the lab where it ran, else the recorded kernel, else the published figure. "
        f"{time.monotonic() - started:.0f} s wall."
    )


if __name__ == "__main__":
    main()
