"""The fidelity table (issue 16): each row one scenario, run through the models, the simulator
with each host profile (`flow.host`), and with --lab the kernel in the lab (real reno, cubic
and bbr); beside them the published figure where the repository keeps one (the DataTAG
measurements of the seeds: two flows sharing 1 Gb/s for 7000 s).

Printed per row: the figure from each source, and the linux profile's ratio to the kernel
(lab) or else to the published figure. Goal: within 15% (goodput) and 0.05 (Jain).

    .venv/bin/python bench/fidelity.py [--lab] [--seconds 60] [--repeats 2]
        [--long-seconds 7000] [--rows mtu,rtt]   # rows whose name contains any of these
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcpeval import backends
from tcpeval.backends.protocol import BackendError
from tcpeval.compare import value
from tcpeval.result import Result
from tcpeval.scenario import ScenarioError, parse_scenario

PROFILES = ("rfc", "linux-2.6", "linux")
STACKS = ("reno", "cubic", "bbr")
Figure = Callable[[Result], "float | None"]


def goodput(result: Result) -> float | None:
    return value(result, "goodput total")


def jain(result: Result) -> float | None:
    return value(result, "Jain index")


def first_share(result: Result) -> float | None:
    flows = [f["goodput_mbps"] for f in result.summary["flows"]]
    return None if None in flows or not sum(flows) else flows[0] / sum(flows)


def first_over_second(result: Result) -> float | None:
    flows = [f["goodput_mbps"] for f in result.summary["flows"]]
    return None if None in flows or not flows[1] else flows[0] / flows[1]


def recovery(result: Result) -> float | None:
    return value(result, "recovery flow 0")


@dataclass
class Row:
    name: str
    scenario: dict[str, Any]
    figure: Figure
    unit: str
    published: float | None = None
    lab: bool = True  # within what the lab delivers on this machine (docs/lab.md)


def dumbbell(name: str, seconds: float, link: dict[str, Any], flows: list[dict]) -> dict:
    return {"name": name, "duration": f"{seconds}s", "bottleneck": link, "flow": flows}


def rows(seconds: float, long_seconds: float) -> list[Row]:
    """The rows of issue 16: the lab's five fidelity cases, Reno's recovery, Mathis, the
    seeds' MTU and RTT cases, ten flows at 1 Gb/s."""
    link = {"rate": "100Mbps", "queue": "100%bdp"}
    table = []
    for stack in STACKS:
        one = dumbbell(f"1 {stack}", seconds, link, [{"cc": stack, "rtt": "60ms"}])
        two = dumbbell(f"2 {stack}", seconds, link, [{"cc": stack, "rtt": "40ms", "count": 2}])
        table += [
            Row(f"1 {stack} 100M 60ms", one, goodput, "Mb/s"),
            Row(f"2 {stack} 100M 40ms", two, goodput, "Mb/s"),
            Row(f"2 {stack} 100M 40ms", two, jain, "Jain"),
        ]
    mixed = [{"cc": "reno", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}]
    table.append(
        Row(
            "reno+cubic 100M 40ms",
            dumbbell("mixed", seconds, link, mixed),
            first_share,
            "reno share",
        )
    )
    lossy = link | {"loss": 1e-3}
    for stack in STACKS:
        flows = [{"cc": stack, "rtt": "60ms"}]
        table.append(
            Row(f"1 {stack} loss 1e-3", dumbbell("lossy", seconds, lossy, flows), goodput, "Mb/s")
        )
    shallow = link | {"queue": "10%bdp"}
    bbr = dumbbell("bbr", seconds, shallow, [{"cc": "bbr", "rtt": "40ms"}])
    table.append(Row("1 bbr 100M 40ms 10%BDP", bbr, goodput, "Mb/s"))
    table.append(rtt_unfairness_row(seconds))
    table += recovery_rows() + mathis_rows() + seed_rows(long_seconds) + many_rows(seconds)
    return table


def rtt_unfairness_row(seconds: float) -> Row:
    """The Hamilton RTT-unfairness case the simulator's Reno looked too fair in (issue 16):
    Reno at 82 and 162 ms sharing 250 Mb/s, a queue of 20% of the long flow's BDP. The short
    flow's share over the long one's; the kernel in the lab says what Reno does here."""
    link = {"rate": "250Mbps", "queue": "20%bdp"}
    flows = [{"cc": "reno", "rtt": "82ms"}, {"cc": "reno", "rtt": "162ms"}]
    scenario = dumbbell("rtt-unfair", seconds, link, flows)
    return Row("reno 82/162ms 250M", scenario, first_over_second, "ratio")


def recovery_rows() -> list[Row]:
    """Reno back at W after one loss at 1 Gb/s: the demo's examples, (W/2)·RTT beside."""
    made = []
    for rtt_ms, seconds in ((6, 10), (25, 40), (200, 2400)):
        window = {
            "cc": "reno",
            "rtt": f"{rtt_ms}ms",
            "window": "100%bdp",
            "delayed_ack": False,
            "drop_at": ["2s" if rtt_ms < 200 else "20s"],
        }
        link = {"rate": "1Gbps", "queue": "200%bdp"}
        scenario = dumbbell(f"recovery {rtt_ms}", seconds, link, [window])
        scenario["sample_interval"] = "100ms"
        made.append(Row(f"reno recovery 1G {rtt_ms}ms", scenario, recovery, "s", lab=False))
    return made


def mathis_rows() -> list[Row]:
    """One Reno flow under random loss at 1 Gb/s, 60 ms: Mathis beside it."""
    link = {"rate": "1Gbps", "queue": "100%bdp"}
    reno = [{"cc": "reno", "rtt": "60ms"}]
    return [
        Row(
            f"reno mathis p={p:g}",
            dumbbell("mathis", 300, link | {"loss": p}, reno),
            goodput,
            "Mb/s",
            lab=False,
        )
        for p in (1e-3, 1e-4)
    ]


def seed_rows(seconds: float) -> list[Row]:
    """The seeds' DataTAG cases (2003): two Reno-era flows sharing 1 Gb/s for 7000 s. MTU:
    9000 vs 3000 bytes at 117 ms gave 464 and 243 Mb/s; RTT: 117 vs 181 ms, MTU 9000, gave
    514 and 202 Mb/s. The router's buffer is not stated; 20% of the BDP is assumed here."""
    link = {"rate": "1Gbps", "queue": "20%bdp"}
    mtu = [
        {"cc": "reno", "rtt": "117ms", "mss": "8948B"},
        {"cc": "reno", "rtt": "117ms", "mss": "2948B"},
    ]
    rtt = [
        {"cc": "reno", "rtt": "117ms", "mss": "8948B"},
        {"cc": "reno", "rtt": "181ms", "mss": "8948B"},
    ]
    return [
        Row(
            "mtu 9000/3000 1G 117ms",
            dumbbell("mtu", seconds, link, mtu),
            first_over_second,
            "ratio",
            published=464 / 243,
            lab=False,
        ),
        Row(
            "rtt 117/181ms 1G",
            dumbbell("rtt", seconds, link, rtt),
            first_over_second,
            "ratio",
            published=514 / 202,
            lab=False,
        ),
    ]


def many_rows(seconds: float) -> list[Row]:
    link = {"rate": "1Gbps", "queue": "100%bdp"}
    made = []
    for stack in ("reno", "cubic"):
        scenario = dumbbell("ten", seconds, link, [{"cc": stack, "rtt": "100ms", "count": 10}])
        made += [
            Row(f"10 {stack} 1G 100ms", scenario, goodput, "Mb/s", lab=False),
            Row(f"10 {stack} 1G 100ms", scenario, jain, "Jain", lab=False),
        ]
    return made


def on_host(scenario: dict[str, Any], host: str) -> dict[str, Any]:
    return scenario | {"flow": [flow | {"host": host} for flow in scenario["flow"]]}


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


def print_row(row: Row, repeats: int, with_lab: bool) -> None:
    model = measure(row.scenario, "model", row.figure, 1)
    sims = [measure(on_host(row.scenario, host), "sim", row.figure, repeats) for host in PROFILES]
    lab = measure(row.scenario, "lab", row.figure, repeats) if with_lab and row.lab else "-"
    reference = lab if isinstance(lab, float) else row.published
    linux = sims[-1]
    ratio = linux / reference if isinstance(linux, float) and reference else None
    cells = [row.published, model, *sims, lab, ratio]
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
    header = ["published", "model", *(f"sim {h}" for h in PROFILES), "lab", "linux/ref"]
    print(f"{'row':26}{'figure':>11}" + "".join(f"{h[-10:]:>10}" for h in header))
    for row in rows(args.seconds, args.long_seconds):
        if not wanted or any(w in row.name for w in wanted):
            print_row(row, args.repeats, args.lab)
    print(
        f"linux/ref: the linux profile over the lab where it ran, else the published figure. "
        f"{time.monotonic() - started:.0f} s wall."
    )


if __name__ == "__main__":
    main()
