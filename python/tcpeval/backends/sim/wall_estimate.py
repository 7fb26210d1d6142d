"""What a simulation will take in wall time, worked out from the resolved scenario before it
runs (as its memory is, sim/memory.py), so that a run of hours is asked about or refused with
the estimate and the key that drives it, instead of being found out from a bar that hardly
moves.

The simulator's work is per packet per link it crosses: each hop is an arrival, a departure and
an ACK on the way back. A link carries at most its rate, and at most what the traffic crossing
it can deliver: each flow at its route's slowest rate over its life (a finite transfer: its
size), each CBR or on-off source at its rate. The estimate is that count of hops at
HOP_PACKETS_PER_S, plus a fixed cost per flow; each link's hops are charged to the key that
bounds them: its own rate when the traffic fills it, else the key that bounds most of the
traffic crossing it (a slower link on the flows' route, a source's rate, a transfer table).
`bench/wall_estimate.py` prints the estimate beside the measured wall time for the examples.
"""

from __future__ import annotations

from typing import Any

from tcpeval.backends.estimate import Estimate, Tally
from tcpeval.scenario import Resolution, Scenario

# bench/bench_sim.py delivers about 13 M packets per wall-second on one link (10 Reno flows,
# drop-tail, 2-core machine); BBR's model, AQMs and many links cost more per packet.
HOP_PACKETS_PER_S = 8e6
FLOW_S = 20e-6  # a flow's set-up, summary and time-series rows
DURATION_FIELD = "duration"


def estimate_wall(scenario: Scenario, resolution: Resolution) -> Estimate:
    tally = Tally()

    def charge(key: Key, seconds: float) -> None:
        tally.charge(*key, seconds)

    offered = _offered_bytes(scenario, resolution)
    duration_s = resolution.resolved["duration_ns"] / 1e9
    for path, name, link in scenario.links():
        packet_bytes = scenario.crossing(name).largest_packet_bytes
        by_key = offered.get(name, {})
        capacity_bytes = link.rate.bps * duration_s / 8
        carried_bytes = min(capacity_bytes, sum(by_key.values()))
        seconds = carried_bytes / packet_bytes / HOP_PACKETS_PER_S
        if carried_bytes < capacity_bytes:
            charge(max(by_key, key=by_key.__getitem__), seconds)
        else:
            charge((f"{path}.rate", link.rate.given), seconds)
    flows = len(resolution.resolved["flows"])
    charge((DURATION_FIELD, scenario.duration.given), flows * FLOW_S)
    return tally.estimate()


Key = tuple[str, object]
"""A scenario key and its value as given."""


def _offered_bytes(scenario: Scenario, resolution: Resolution) -> dict[str, dict[Key, float]]:
    """Link name → the key that bounds some traffic crossing it → bytes of that traffic: a
    source's rate; a flow's route (its slowest link's rate), or its table when the transfer's
    size ends it sooner."""
    resolved = resolution.resolved
    end_ns = resolved["duration_ns"]
    offered: dict[str, dict[Key, float]] = {}
    traffic = [
        *zip(resolved["flows"], resolution.origins["flows"], strict=True),
        *zip(resolved["sources"], resolution.origins["sources"], strict=True),
    ]
    for entry, table in traffic:
        life_s = _life_ns(entry, end_ns) / 1e9
        if "rate_bps" in entry:  # a source
            sent_bytes, key = entry["rate_bps"] * life_s / 8, _table_key(scenario, table)
        else:
            sent_bytes, key = _flow_bytes(scenario, entry, table, life_s)
        for name in entry["route"]:
            by_key = offered.setdefault(name, {})
            by_key[key] = by_key.get(key, 0.0) + sent_bytes
    return offered


def _flow_bytes(
    scenario: Scenario, entry: dict[str, Any], table: str, life_s: float
) -> tuple[float, Key]:
    slowest = min(entry["route"], key=lambda name: scenario.link_named(name).rate.bps)
    path, rate = next((p, link.rate) for p, n, link in scenario.links() if n == slowest)
    sent_bytes = rate.bps * life_s / 8
    size = entry["size_bytes"]
    if size is not None and size < sent_bytes:
        return size, _table_key(scenario, table)
    return sent_bytes, (f"{path}.rate", rate.given)


def _life_ns(entry: dict[str, Any], end_ns: int) -> int:
    stop_ns = end_ns if entry["stop_ns"] is None else min(entry["stop_ns"], end_ns)
    return max(0, stop_ns - entry["start_ns"])


def _table_key(scenario: Scenario, path: str) -> Key:
    """The key that sets how much traffic table `path` offers: its rate or how many flows."""
    kind, _, rest = path.partition("[")
    table = getattr(scenario, kind)[int(rest.rstrip("]"))]
    for key in ("rate", "arrival_rate", "count"):
        if hasattr(table, key):
            value = getattr(table, key)
            return f"{path}.{key}", getattr(value, "given", value)
    return path, None
