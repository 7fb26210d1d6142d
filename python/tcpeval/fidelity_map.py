"""The fidelity map: scenarios drawn at random within the lab's faithful range, each run through
the simulator (the `linux` host) and the kernel in the lab, and the distribution of their
differences — where the simulator can be trusted, rather than a list of chosen cases.

The range (docs/lab.md): rate 10 Mb/s to 1 Gb/s (the emulator holds its rate to 1.5 Gb/s,
the hosts' goodput tops out near 1.3), RTT 5–300 ms, buffer 0.1–2 BDP, 1–4 flows of one or two
stacks, random loss none or 1e-4–1e-2, a policer at a fraction of the rate or none. Rates,
RTTs, buffers and loss rates are drawn log-uniformly: each decade weighs the same. The stacks
are those both worlds run that answer loss (the ECN stacks need a marking AQM, which the
classic-ECN rows of the fidelity table cover).

`bench/fidelity.py --sample N --seed S` prints the map; docs/hosts.md carries it.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from tcpeval.result import Result
from tcpeval.units import parse_size

RATE_BPS = (10e6, 1e9)
RTT_MS = (5.0, 300.0)
BUFFER_BDP = (0.1, 2.0)
LOSS = (1e-4, 1e-2)
MAX_FLOWS = 4
# A policer polices at 20–80% of the link's rate, with the default burst (10 ms at its rate).
POLICED_FRACTION = (0.2, 0.8)
LOSSY_SHARE = 0.5
POLICED_SHARE = 0.25
TWO_STACKS_SHARE = 0.5


def _log_uniform(rng: random.Random, low: float, high: float) -> float:
    return math.exp(rng.uniform(math.log(low), math.log(high)))


def draw(rng: random.Random, stacks: list[str], seconds: float, index: int) -> dict[str, Any]:
    """One scenario of the range, named by what it is."""
    rate_mbps = round(_log_uniform(rng, *RATE_BPS) / 1e6, 1)
    rtt_ms = round(_log_uniform(rng, *RTT_MS), 1)
    buffer = round(_log_uniform(rng, *BUFFER_BDP), 2)
    count = rng.randint(1, MAX_FLOWS)
    chosen = rng.sample(stacks, 2) if count > 1 and rng.random() < TWO_STACKS_SHARE else []
    chosen = chosen or [rng.choice(stacks)]
    groups = [
        {"cc": stack, "rtt": f"{rtt_ms}ms", "count": share}
        for stack, share in zip(chosen, _split(count, len(chosen)), strict=True)
    ]
    link: dict[str, Any] = {"rate": f"{rate_mbps}Mbps", "queue": f"{round(100 * buffer)}%bdp"}
    loss = round(_log_uniform(rng, *LOSS), 6) if rng.random() < LOSSY_SHARE else 0.0
    if loss:
        link["loss"] = loss
    policed = rng.random() < POLICED_SHARE
    if policed:
        link["policer"] = {"rate": f"{round(rate_mbps * rng.uniform(*POLICED_FRACTION), 1)}Mbps"}
    stacks_named = "+".join(f"{g['count']} {g['cc']}" for g in groups)
    name = f"#{index} {stacks_named} {rate_mbps:g}M {rtt_ms:g}ms {buffer:g}BDP"
    name += (f" loss {loss:g}" if loss else "") + (" policed" if policed else "")
    return {"name": name, "duration": f"{seconds}s", "bottleneck": link, "flow": groups}


def _split(count: int, parts: int) -> list[int]:
    return [count - count // 2, count // 2] if parts == 2 else [count]


def on_linux(scenario: dict[str, Any]) -> dict[str, Any]:
    return scenario | {"flow": [group | {"host": "linux"} for group in scenario["flow"]]}


def total_goodput(result: Result) -> float:
    return float(sum(f["goodput_mbps"] or 0.0 for f in result.summary["flows"]))


def goodput_error(sim: Result, lab: Result) -> float | None:
    """|sim / kernel − 1| of the total goodput."""
    kernel = total_goodput(lab)
    return abs(total_goodput(sim) / kernel - 1) if kernel else None


def jain_difference(sim: Result, lab: Result) -> float | None:
    if len(lab.summary["flows"]) < 2:
        return None
    return abs(sim.summary["jain_index"] - lab.summary["jain_index"])


def retransmissions_per_packet(result: Result) -> float:
    flows = result.summary["flows"]
    retransmits = sum(f["retransmits"] or 0 for f in flows)
    mss_bytes = parse_size(result.summary["scenario"]["flow"][0]["mss"]).bytes
    delivered_pkts = sum(f["bytes_delivered"] or 0 for f in flows) / mss_bytes
    return retransmits / delivered_pkts if delivered_pkts else 0.0


def retransmission_difference(sim: Result, lab: Result) -> float | None:
    """|sim − kernel| of the retransmissions per packet delivered."""
    return abs(retransmissions_per_packet(sim) - retransmissions_per_packet(lab))


def queue_difference(sim: Result, lab: Result) -> float | None:
    """|sim − kernel| of the mean queue, as a fraction of the buffer."""
    sim_link, lab_link = sim.summary["bottleneck"], lab.summary["bottleneck"]
    capacity = lab_link.get("capacity_pkts") or sim_link.get("capacity_pkts")
    if not capacity:
        return None
    return abs(sim_link["mean_queue_pkts"] - lab_link["mean_queue_pkts"]) / capacity


@dataclass(frozen=True)
class Measure:
    name: str
    difference: Callable[[Result, Result], float | None]
    """sim against the kernel; None where it does not apply (Jain of one flow)."""
    shown: str
    """How a difference prints."""


MEASURES = (
    Measure("goodput error", goodput_error, "{:.1%}"),
    Measure("Jain difference", jain_difference, "{:.3f}"),
    Measure("retransmissions per packet", retransmission_difference, "{:.2e}"),
    Measure("mean queue (of the buffer)", queue_difference, "{:.1%}"),
)

GOODPUT_MEDIAN_GOAL = 0.05
GOODPUT_P90_GOAL = 0.15


def differences(sim: Result, lab: Result) -> dict[str, float | None]:
    return {measure.name: measure.difference(sim, lab) for measure in MEASURES}


@dataclass(frozen=True)
class Spread:
    """A measure's differences over the map: median, p90, and the worst with their cases."""

    measure: Measure
    count: int
    median: float
    p90: float
    worst: list[tuple[float, str]]


def spread(measure: Measure, cases: list[dict[str, Any]], worst: int) -> Spread | None:
    """Over `cases` (each a record with `name` and `differences`)."""
    found = [
        (difference, case["name"])
        for case in cases
        if (difference := case["differences"][measure.name]) is not None
    ]
    if not found:
        return None
    values = sorted(difference for difference, _ in found)
    p90 = values[math.ceil(0.9 * len(values)) - 1]
    largest = sorted(found, reverse=True)[:worst]
    return Spread(measure, len(values), statistics.median(values), p90, largest)
