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
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from typing import Any

from tcpeval import backends
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--lab", action="store_true", help="run the lab's rows in the kernel")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--long-seconds", type=float, default=7000, help="the seeds' rows")
    parser.add_argument("--rows", default="", help="only rows whose name contains one of these")
    args = parser.parse_args()
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
