"""Resolution: the numbers the core runs with (docs/contract.md, "Conditions"), and `describe`,
the same scenario in the user's own units for the saved result.

Flows are listed table by table: [[flow]] groups (`count` × `streams` flows each), then the
flows [[web]] tables draw, then two flows per [[reqresp]] table. A flow's `group` is the
position of its table in that order, so groups never collide between kinds of table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tcpeval.models import bdp_pkts
from tcpeval.scenario.aqm import Red
from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.model import Scenario
from tcpeval.scenario.queue import counts, round_pkts
from tcpeval.scenario.traffic import (
    DEFAULT_MSS,
    FlowGroup,
    OnOff,
    RequestResponse,
    Source,
    TcpTraffic,
    WebTraffic,
)
from tcpeval.units import Duration, Rate


@dataclass(frozen=True)
class Transfer:
    """A [[flow]] transfer of `bytes` striped over the flows `flows`."""

    id: int
    group: int
    flows: list[int]
    bytes: int


@dataclass(frozen=True)
class Resolution:
    """The resolved scenario, where each of its entries came from (a field path of the user's
    scenario per entry of `flows`, `links`, `sources` and `exchanges`) and the transfers."""

    resolved: dict[str, Any]
    origins: dict[str, list[str]]
    transfers: list[Transfer]


def resolve(scenario: Scenario) -> dict[str, Any]:
    """The resolved scenario the core runs: base units, one entry per flow and per source."""
    return resolution(scenario).resolved


def resolution(scenario: Scenario) -> Resolution:
    flows: list[dict[str, Any]] = []
    flow_origins: list[str] = []
    transfers: list[Transfer] = []
    exchanges: list[dict[str, Any]] = []
    for group, (path, table) in enumerate(scenario.tcp_tables()):
        first = len(flows)
        if isinstance(table, FlowGroup):
            new, striped = _group_flows(scenario, group, table)
            transfers += [
                Transfer(len(transfers) + i, group, [first + f for f in ids], table_bytes)
                for i, (ids, table_bytes) in enumerate(striped)
            ]
        elif isinstance(table, WebTraffic):
            new = _web_flows(scenario, group, _at(path), table)
        else:
            assert isinstance(table, RequestResponse)
            new = _request_response_flows(scenario, group, table)
            exchanges.append(_exchange(table, first))
        flows += new
        flow_origins += [path] * len(new)
    if not flows:
        raise ScenarioError("web", None, "drew no flow: raise arrival_rate or widen start/stop")
    sources = [
        (path, entry) for path, table in scenario.sources() for entry in _source(scenario, table)
    ]
    resolved = {
        "name": scenario.name,
        "duration_ns": scenario.duration.ns,
        "seed": scenario.seed,
        "sample_interval_ns": scenario.sample_interval.ns,
        "links": scenario.resolved_links(),
        "flows": flows,
        "sources": [entry for _, entry in sources],
        "exchanges": exchanges,
        "pcap_link": scenario.pcap,
    }
    origins = {
        "flows": flow_origins,
        "links": [path for path, _, _ in scenario.links()],
        "sources": [path for path, _ in sources],
        "exchanges": [path for path, _ in scenario.tcp_tables() if path.startswith("reqresp")],
    }
    return Resolution(resolved, origins, transfers)


# TCP flows


def _flow(scenario: Scenario, group: int, table: TcpTraffic) -> dict[str, Any]:
    """A flow of `table` with every key the contract asks for at its default (the host's,
    where its profile sets one)."""
    host = table.behaviour()
    return {
        "group": group,
        "cc": table.cc.resolved(),
        "rtt_ns": table.rtt.ns,
        "forward_delay_ns": None,
        "start_ns": 0,
        "stop_ns": None,
        "size_bytes": None,
        "mss_bytes": DEFAULT_MSS.bytes,
        "sack": True,
        "delayed_ack": True,
        "sack_compression": host.sack_compression,
        "ecn": table.ecn_mode(),
        "window_reduction": host.window_reduction,
        "loss_detection": host.loss_detection,
        "lost_retransmission": host.lost_retransmission,
        "tail_loss_probe": host.tail_loss_probe,
        "undo": host.undo,
        "timestamps": host.timestamps,
        "rto_in_recovery": host.rto_in_recovery,
        "tso": host.tso,
        "window_pkts": None,
        "initial_cwnd_pkts": host.initial_cwnd_pkts(table.mss_bytes),
        "min_rto_ns": 200_000_000,
        "drop_at_ns": [],
        "route": scenario.route(table),
        "route_changes": [],
        "reverse": False,
        "drop_every": None,
        "pacing_gap_ns": None,
        "pacing_rate_bps": None,
        "source_rate_bps": None,
        "sink_rate_bps": None,
    }


def _group_flows(
    scenario: Scenario, group: int, table: FlowGroup
) -> tuple[list[dict[str, Any]], list[tuple[list[int], int]]]:
    """`count` transfers of `streams` flows each, and (flow indices, bytes) per transfer when
    the group has a size."""
    flow = _flow(scenario, group, table) | {
        "start_ns": table.start.ns,
        "stop_ns": None if table.stop is None else table.stop.ns,
        "forward_delay_ns": None if table.forward_delay is None else table.forward_delay.ns,
        "mss_bytes": table.mss.bytes,
        "sack": table.sack,
        "delayed_ack": table.delayed_ack,
        "window_pkts": window_pkts(
            f"flow[{group}]", table, scenario.route_rate_bps(scenario.route(table))
        ),
        "min_rto_ns": table.min_rto.ns,
        "drop_at_ns": [time.ns for time in table.drop_at],
        "route_changes": [
            {"at_ns": change.at.ns, "route": change.route} for change in table.route_changes
        ],
        "reverse": table.direction == "reverse",
        "drop_every": table.drop_every,
        "pacing_gap_ns": table.pacing.ns if isinstance(table.pacing, Duration) else None,
        "pacing_rate_bps": table.pacing.bps if isinstance(table.pacing, Rate) else None,
        "source_rate_bps": None if table.source_rate is None else table.source_rate.bps,
        "sink_rate_bps": None if table.sink_rate is None else table.sink_rate.bps,
    }
    starts = start_times_ns(scenario.seed, group, table, table.count * table.streams)
    if table.size is None:
        return [flow | {"start_ns": start} for start in starts], []
    shares = stream_bytes(table.size.bytes, table.streams) * table.count
    flows = [
        flow | {"size_bytes": share, "start_ns": start}
        for share, start in zip(shares, starts, strict=True)
    ]
    streams = table.streams
    striped = [
        (list(range(t * streams, (t + 1) * streams)), table.size.bytes) for t in range(table.count)
    ]
    return flows, striped


START_JITTER_STREAM = 1
"""Tells the start-jitter draws apart from the seed's other uses (web flows use seed + index)."""


def start_times_ns(seed: int, group: int, table: FlowGroup, connections: int) -> list[int]:
    """When each connection of a group starts: `start`, plus a uniform draw below
    `start_jitter` from the seed and the group's number, so a seed always gives the same
    starts and adding a group does not move another's."""
    start, jitter = table.start.ns, table.start_jitter.ns
    if jitter == 0:
        return [start] * connections
    rng = np.random.default_rng([seed, START_JITTER_STREAM, group])
    return [start + int(offset) for offset in rng.integers(0, jitter, size=connections)]


def stream_bytes(size: int, streams: int) -> list[int]:
    """`size` split over `streams`: equal shares, the first ones a byte larger if needed."""
    share, extra = divmod(size, streams)
    return [share + 1 if stream < extra else share for stream in range(streams)]


def window_pkts(path: str, group: FlowGroup, route_rate_bps: int) -> int | None:
    """The group's window limit in segments, or None for unlimited.

    Bytes count whole segments; `%bdp` is of the flow's own RTT at the rate of the slowest link
    of its route, rounded to the nearest packet and never below one.
    """
    window = group.window
    if window is None:
        return None
    if window.bdp_percent is not None:
        bdp = bdp_pkts(route_rate_bps, group.rtt.seconds, group.packet_bytes)
        return round_pkts(window.bdp_percent / 100 * bdp, f"{path}.window", window.given)
    if window.bytes is not None:
        return window.bytes // group.mss.bytes
    return window.pkts


def _web_flows(
    scenario: Scenario, group: int, index: int, table: WebTraffic
) -> list[dict[str, Any]]:
    """Poisson arrivals in [start, stop), Pareto sizes; drawn with the seed plus the table's
    index in [[web]], so the same scenario always draws the same flows."""
    rng = np.random.default_rng(scenario.seed + index)
    start_ns, stop_ns = table.start.ns, scenario.stop_ns(table.stop)
    count = rng.poisson(table.arrival_rate * (stop_ns - start_ns) / 1e9)
    starts = np.sort(rng.integers(start_ns, stop_ns, size=count))
    scale = table.mean_size.bytes * (table.shape - 1) / table.shape
    sizes = np.ceil(scale * (1 + rng.pareto(table.shape, size=count))).astype(np.int64)
    flow = _flow(scenario, group, table)
    return [
        flow | {"start_ns": int(start), "size_bytes": int(size)}
        for start, size in zip(starts, sizes, strict=True)
    ]


def _request_response_flows(
    scenario: Scenario, group: int, table: RequestResponse
) -> list[dict[str, Any]]:
    """The request flow (client to server: the route's reverse direction), then the response
    flow; the exchanges give them their data."""
    flow = _flow(scenario, group, table)
    return [flow | {"reverse": True}, dict(flow)]


def _exchange(table: RequestResponse, request_flow: int) -> dict[str, Any]:
    return {
        "request_flow": request_flow,
        "response_flow": request_flow + 1,
        "request_bytes": table.request.bytes,
        "response_bytes": table.response.bytes,
        "think_ns": table.think.ns,
        "count": table.count,
    }


# Background sources


def _source(scenario: Scenario, table: Source) -> list[dict[str, Any]]:
    entry = {
        "kind": "cbr",
        "route": scenario.route(table),
        "reverse": table.direction == "reverse",
        "rate_bps": table.rate.bps,
        "packet_bytes": table.packet_size.bytes,
        "start_ns": table.start.ns,
        "stop_ns": None if table.stop is None else table.stop.ns,
    }
    if not isinstance(table, OnOff):
        return [entry]
    onoff = entry | {
        "kind": "onoff",
        "shape": table.shape,
        "mean_on_ns": table.mean_on.ns,
        "mean_off_ns": table.mean_off.ns,
    }
    return [dict(onoff) for _ in range(table.count)]


# The scenario as written, for summary.json


def describe(scenario: Scenario) -> dict[str, Any]:
    """The scenario as the user wrote it, every default filled in (routes and the algorithms'
    parameters too), plus the resolved limits: each link's `queue_counts` (how its queue
    counts, made explicit), `queue_pkts`/`queue_bytes` (and RED's thresholds in packets, a
    policer's `burst_bytes`), each [[flow]] group's `window_pkts`."""
    described = scenario.model_dump(mode="json")
    for (path, _, link), resolved in zip(scenario.links(), scenario.resolved_links(), strict=True):
        entry = described["bottleneck"] if path == "bottleneck" else described["link"][_at(path)]
        entry |= {
            "queue_counts": counts(link.queue, link.queue_counts),
            "queue_pkts": resolved["queue_pkts"],
            "queue_bytes": resolved["queue_bytes"],
        }
        if isinstance(link.aqm, Red):
            aqm = resolved["aqm"]
            entry["aqm"] |= {"min_th_pkts": aqm["min_th_pkts"], "max_th_pkts": aqm["max_th_pkts"]}
        if resolved["policer"] is not None:
            entry["policer"]["burst_bytes"] = resolved["policer"]["burst_bytes"]
    for path, table in scenario.routed_tables():
        entry = described[path.partition("[")[0]][_at(path)]
        entry["route"] = scenario.route(table)
        if isinstance(table, TcpTraffic):
            entry["cc"] = table.cc.with_defaults()
            entry |= _host_switches(table)
    for index, (group, entry) in enumerate(zip(scenario.flow, described["flow"], strict=True)):
        rate_bps = scenario.route_rate_bps(scenario.route(group))
        entry["window_pkts"] = window_pkts(f"flow[{index}]", group, rate_bps)
    return described


def _host_switches(table: TcpTraffic) -> dict[str, Any]:
    """The switches the table's host profile resolves to, its initial window in segments."""
    host = table.behaviour()
    return host.model_dump() | {"initial_cwnd": host.initial_cwnd_pkts(table.mss_bytes)}


def _at(path: str) -> int:
    """The index in a path such as `link[2]`."""
    return int(path.partition("[")[2].rstrip("]"))
