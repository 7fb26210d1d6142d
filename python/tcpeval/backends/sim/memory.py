"""What a simulation will take in memory, worked out from the resolved scenario before it runs,
so that a scenario beyond the budget is refused with the estimate and the key that drives it
instead of filling the machine (or failing) minutes in.

The estimate is an upper bound made of four parts, each charged to the key that drives it:

- the time series: a row per active flow per sample (flows are sampled from their start to
  their end, crates/sim/src/record.rs) and per queued link per sample, held three times at the
  peak (the core's columns, the DataFrame, Parquet's buffers): `sample_interval`, or the
  table whose flows make most of the rows (`web[0].arrival_rate`, `flow[0].count`). A finite
  transfer is taken to last at most 1000 RTTs or ten times its size at the route's rate (the
  one part that is not a bound: web traffic would otherwise be charged as if every flow lived
  to the end);
- packets in the network: what the links' queues and delays hold, which bounds the senders'
  scoreboards (windows are capped at a few times what the path holds,
  crates/sim/src/flow.rs): the link's `queue` or `rate`;
- each flow's own state and its entries in the resolved scenario and the summary: the table
  with most flows;
- a capture (`pcap`): a record per data packet crossing the captured link; the latencies of
  request-response exchanges (`reqresp[0].count`).

The budget defaults to half of this machine's memory, or less under a `ulimit -v`.
"""

from __future__ import annotations

import os
import resource
from typing import Any

from tcpeval.backends.estimate import Estimate, Tally
from tcpeval.scenario import Resolution, Scenario, ScenarioError

# Bytes, measured on runs of 10^5 flows and 10^7 samples (bench/fuzz_scenarios.py --memory).
BASE_BYTES = 160 * 2**20  # the interpreter with numpy, pandas, pyarrow and the core
FLOW_ROW_BYTES = 3 * 96  # thirteen columns, three copies at the peak
LINK_ROW_BYTES = 3 * 44  # six columns
PACKET_BYTES = 4 * 80  # a packet slot in a link's FIFO, its scoreboard entry, the window cap
FLOW_BYTES = 16 * 2**10  # a flow's state, its resolved entry, its summary in JSON and Python
EXCHANGE_BYTES = 3 * 8 + 64
PCAP_RECORD_BYTES = 2 * 90  # record header and packet headers, then the copy handed to Python
PACKET_SIZE_BYTES = 1500  # what a capture and a queue count in
BUDGET_SHARE = 0.5
TRANSFER_RTTS = 1000
TRANSFER_SLACK = 10


def default_budget_bytes() -> int:
    """Half of this machine's memory, or of the address space a `ulimit -v` allows."""
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    limit = machine if soft == resource.RLIM_INFINITY else min(machine, soft)
    return int(BUDGET_SHARE * limit)


def check_budget(scenario: Scenario, resolution: Resolution, budget_bytes: int) -> None:
    """Raise ScenarioError naming the key that drives the estimate when it is above budget."""
    estimate = estimate_memory(scenario, resolution)
    if estimate.total <= budget_bytes:
        return
    field, value, size = estimate.largest()
    reason = (
        f"makes the run need about {_gb(estimate.total)} of memory ({_gb(size)} for this key), "
        f"more than the budget of {_gb(budget_bytes)} (--max-memory)"
    )
    raise ScenarioError(field, value, reason)


def estimate_memory(scenario: Scenario, resolution: Resolution) -> Estimate:
    tally = Tally()
    charge = tally.charge
    resolved = resolution.resolved
    _time_series(scenario, resolution, charge)
    _flow_state(resolution, charge)
    for (path, _, link), entry in zip(scenario.links(), resolved["links"], strict=True):
        _network(path, link, entry, scenario, charge)
    for index, table in enumerate(scenario.reqresp):  # each exchange's latency, kept
        charge(f"reqresp[{index}].count", table.count, table.count * EXCHANGE_BYTES)
    if scenario.pcap is not None:
        link = scenario.link_named(scenario.pcap)
        packets = link.rate.bps * scenario.duration.seconds / 8 / PACKET_SIZE_BYTES
        charge("pcap", scenario.pcap, packets * PCAP_RECORD_BYTES)
    return tally.estimate(BASE_BYTES)


def _time_series(scenario: Scenario, resolution: Resolution, charge: Any) -> None:
    """Rows of every flow from its start to its stop (or the end), and of every link."""
    resolved = resolution.resolved
    interval_ns, end_ns = resolved["sample_interval_ns"], resolved["duration_ns"]
    rows_by_table: dict[str, int] = {}
    flows_by_table: dict[str, int] = {}
    for flow, path in zip(resolved["flows"], resolution.origins["flows"], strict=True):
        stop_ns = end_ns if flow["stop_ns"] is None else min(flow["stop_ns"], end_ns)
        life_ns = max(0, stop_ns - flow["start_ns"])
        if flow["size_bytes"] is not None:
            rate_bps = scenario.route_rate_bps(flow["route"])
            transfer_ns = TRANSFER_SLACK * flow["size_bytes"] * 8 * 10**9 // rate_bps
            life_ns = min(life_ns, max(TRANSFER_RTTS * flow["rtt_ns"], transfer_ns))
        rows = life_ns // interval_ns + 1
        rows_by_table[path] = rows_by_table.get(path, 0) + rows
        flows_by_table[path] = flows_by_table.get(path, 0) + 1
    link_rows = len(resolved["links"]) * 2 * (end_ns // interval_ns + 1)
    interval = ("sample_interval", scenario.sample_interval.given)
    charge(*interval, link_rows * LINK_ROW_BYTES)
    samples = end_ns // interval_ns + 1
    for path, rows in rows_by_table.items():
        many_flows = flows_by_table[path] > samples
        field, value = _count_field(scenario, path) if many_flows else interval
        charge(field, value, rows * FLOW_ROW_BYTES)


def _flow_state(resolution: Resolution, charge: Any) -> None:
    counts: dict[str, int] = {}
    for path in resolution.origins["flows"]:
        counts[path] = counts.get(path, 0) + 1
    for path, flows in counts.items():
        charge(f"{path}", None, flows * FLOW_BYTES)


def _network(path: str, link: Any, entry: dict[str, Any], scenario: Scenario, charge: Any) -> None:
    """What the link holds at most: a full queue and its delay line full at its rate, in
    both directions."""
    queue_pkts = entry["queue_pkts"] or entry["queue_bytes"] / PACKET_SIZE_BYTES
    in_delay_pkts = link.rate.bps * (link.delay.ns / 1e9 + _longest_rtt_s(scenario)) / 8
    in_delay_pkts /= PACKET_SIZE_BYTES
    charge(f"{path}.queue", link.queue.given, 2 * queue_pkts * PACKET_BYTES)
    charge(f"{path}.rate", link.rate.given, 2 * in_delay_pkts * PACKET_BYTES)


def _longest_rtt_s(scenario: Scenario) -> float:
    return max(table.rtt.seconds for _, table in scenario.tcp_tables())


def _count_field(scenario: Scenario, path: str) -> tuple[str, object]:
    """The key that sets how many flows table `path` has."""
    kind, _, rest = path.partition("[")
    table = getattr(scenario, kind)[int(rest.rstrip("]"))]
    if kind == "web":
        return f"{path}.arrival_rate", table.arrival_rate
    if kind == "flow":
        return f"{path}.count", table.count
    return path, None


def _gb(size: float) -> str:
    return f"{size / 1e9:.1f} GB" if size >= 1e9 else f"{size / 1e6:.0f} MB"
