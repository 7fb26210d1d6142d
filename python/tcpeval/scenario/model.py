"""The Scenario: every table of the file, and the checks that need more than one of them
(routes over declared links, RTTs that fit the route's delays, the captured link)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import PositiveTime, Strict
from tcpeval.scenario.links import Link, NamedLink, resolve_link
from tcpeval.scenario.queue import Crossing
from tcpeval.scenario.traffic import (
    MAX_FLOWS,
    ConstantBitRate,
    FlowGroup,
    OnOff,
    RequestResponse,
    Source,
    TcpTraffic,
    WebTraffic,
)
from tcpeval.scenario.window import DEFAULT_WINDOW, WindowField
from tcpeval.units import Duration, parse_duration

BOTTLENECK = "bottleneck"
DEFAULT_PACKET_BYTES = 1500  # counts a queue in bytes when nothing crosses the link


class Scenario(Strict):
    """A scenario file's top level. Flow groups are numbered table by table, the [[flow]] tables
    first, then [[web]], then [[reqresp]]: a flow's `group` in the results is its table's
    position in that order."""

    name: str = Field(default="scenario", description="Label of the run. Default: 'scenario'.")
    duration: PositiveTime = Field(description="Simulated time. Required.")
    seed: int = Field(
        default=1, ge=0, lt=2**64, description="Seed of every random process. Default: 1."
    )
    sample_interval: PositiveTime = Field(
        default=parse_duration("100ms"), description="Time-series resolution. Default: 100ms."
    )
    measure: WindowField = Field(
        default=DEFAULT_WINDOW,
        description="What the summary's figures cover: 'whole run' (default), 'second half' or "
        "'START..END', e.g. '60s..' to leave out a 60 s warm-up (docs/methodology.md §3.1).",
    )
    bottleneck: Link | None = Field(
        default=None, description="The shared link, named 'bottleneck'; link 0 if given."
    )
    link: list[NamedLink] = Field(
        default_factory=list, description="[[link]] tables: links of a multi-link topology."
    )
    flow: list[FlowGroup] = Field(
        default_factory=list, description="[[flow]] tables: groups of bulk or finite TCP flows."
    )
    web: list[WebTraffic] = Field(
        default_factory=list, description="[[web]] tables: short TCP flows."
    )
    reqresp: list[RequestResponse] = Field(
        default_factory=list, description="[[reqresp]] tables: request-response exchanges."
    )
    cbr: list[ConstantBitRate] = Field(
        default_factory=list, description="[[cbr]] tables: constant-bit-rate UDP."
    )
    onoff: list[OnOff] = Field(
        default_factory=list, description="[[onoff]] tables: self-similar UDP background."
    )
    pcap: str | None = Field(
        default=None,
        description="Name of a link whose forward direction is captured into capture.pcap: "
        "one record per packet leaving its queue (raw IPv4 with TCP/UDP headers, payload left "
        "out), for Wireshark or tshark. Default: none.",
    )

    # Views the resolution and the checks share.

    def links(self) -> list[tuple[str, str, Link]]:
        """(field path, name, link) of every link, `[bottleneck]` first."""
        named: list[tuple[str, str, Link]] = [
            (f"link[{i}]", link.name, link) for i, link in enumerate(self.link)
        ]
        if self.bottleneck is None:
            return named
        return [(BOTTLENECK, BOTTLENECK, self.bottleneck), *named]

    def tcp_tables(self) -> list[tuple[str, TcpTraffic]]:
        """(field path, table) of every TCP table; the position is the flows' `group`."""
        return [
            *((f"flow[{i}]", table) for i, table in enumerate(self.flow)),
            *((f"web[{i}]", table) for i, table in enumerate(self.web)),
            *((f"reqresp[{i}]", table) for i, table in enumerate(self.reqresp)),
        ]

    def routed_tables(self) -> list[tuple[str, TcpTraffic | Source]]:
        """(field path, table) of every table whose traffic takes a route: TCP, then sources."""
        return [*self.tcp_tables(), *self.sources()]

    def sources(self) -> list[tuple[str, Source]]:
        return [
            *((f"cbr[{i}]", table) for i, table in enumerate(self.cbr)),
            *((f"onoff[{i}]", table) for i, table in enumerate(self.onoff)),
        ]

    def route(self, table: TcpTraffic | Source) -> list[str]:
        """The table's route, or the first link when it names none."""
        return table.route if table.route is not None else [self.links()[0][1]]

    def routes(self, table: TcpTraffic) -> list[list[str]]:
        """Every route the table's flows take during the run, the first first."""
        later = table.route_changes if isinstance(table, FlowGroup) else ()
        return [self.route(table), *(change.route for change in later)]

    def link_named(self, name: str) -> Link:
        return next(link for _, link_name, link in self.links() if link_name == name)

    def route_rate_bps(self, route: list[str]) -> int:
        """The rate of the slowest link of a route."""
        return min(self.link_named(name).rate.bps for name in route)

    def stop_ns(self, stop: Duration | None) -> int:
        return self.duration.ns if stop is None else stop.ns

    def crossing(self, name: str) -> Crossing:
        """The largest base RTT and packet of the traffic whose route crosses link `name`."""
        flows = [
            table
            for _, table in self.tcp_tables()
            if any(name in route for route in self.routes(table))
        ]
        sources = [table for _, table in self.sources() if name in self.route(table)]
        packets = [table.packet_bytes for table in flows]
        packets += [table.packet_size.bytes for table in sources]
        return Crossing(
            largest_rtt_s=max((table.rtt.seconds for table in flows), default=None),
            largest_packet_bytes=max(packets, default=DEFAULT_PACKET_BYTES),
        )

    def resolved_links(self) -> list[dict[str, Any]]:
        """The core's `links` entries, in declaration order."""
        return [
            resolve_link(path, name, link, self.crossing(name)) for path, name, link in self.links()
        ]

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.sample_interval.ns > self.duration.ns:
            raise ScenarioError(
                "sample_interval", self.sample_interval.given, "is longer than the duration"
            )
        self._check_window()
        self._check_links()
        if not self.tcp_tables():
            raise ScenarioError("flow", None, "needs at least 1 entry (or a [[web]], [[reqresp]])")
        for path, table in self.routed_tables():
            table.check(path)
            self._check_route(path, table)
            start = getattr(table, "start", None)  # request-response exchanges start at 0s
            if start is not None:
                self._check_starts_in_run(path, start)
        for path, table in self.tcp_tables():
            table.cc.check(f"{path}.cc")
            self._check_rtt(path, table)
        for index, group in enumerate(self.flow):
            self._check_route_changes(f"flow[{index}]", group)
        self._check_flow_count()
        for index, web in enumerate(self.web):
            self._check_web_load(f"web[{index}]", web)
        self.resolved_links()  # raises for queues and thresholds that cannot be worked out
        names = [name for _, name, _ in self.links()]
        if self.pcap is not None and self.pcap not in names:
            raise ScenarioError("pcap", self.pcap, f"is not a link (declared: {', '.join(names)})")
        return self

    def measure_span_s(self) -> tuple[float, float]:
        """The measurement window in seconds of the run."""
        return self.measure.span_s(self.duration.seconds)

    def _check_window(self) -> None:
        start_s, end_s = self.measure_span_s()
        if end_s > self.duration.seconds or start_s >= self.duration.seconds:
            reason = f"does not fit in the run's duration ({self.duration.given})"
            raise ScenarioError("measure", self.measure.given, reason)

    def _check_links(self) -> None:
        if not self.links():
            raise ScenarioError("bottleneck", None, "missing (required): [bottleneck] or [[link]]")
        seen: set[str] = set()
        for path, name, link in self.links():
            if name in seen:
                raise ScenarioError(f"{path}.name", name, "is declared twice")
            seen.add(name)
            for key, outages in (("outage", link.outage), ("ack_outage", link.ack_outage)):
                for index, (_, end) in enumerate(outages):
                    if end.ns > self.duration.ns:
                        reason = f"ends after the run (duration {self.duration.given})"
                        raise ScenarioError(f"{path}.{key}[{index}]", end.given, reason)
            for index, (time, _) in enumerate(link.rate.steps):
                if time.ns >= self.duration.ns:
                    reason = f"is not before the end of the run (duration {self.duration.given})"
                    raise ScenarioError(f"{path}.rate[{index}]", time.given, reason)

    def _check_route(self, path: str, table: TcpTraffic | Source) -> None:
        self._check_route_names(f"{path}.route", self.route(table))

    def _check_route_names(self, path: str, route: list[str]) -> None:
        names = [name for _, name, _ in self.links()]
        for index, name in enumerate(route):
            if name not in names:
                reason = f"is not a declared link (declared: {', '.join(names)})"
                raise ScenarioError(f"{path}[{index}]", name, reason)
            if name in route[:index]:
                raise ScenarioError(f"{path}[{index}]", name, "appears twice in the route")

    def _check_route_changes(self, path: str, group: FlowGroup) -> None:
        for index, change in enumerate(group.route_changes):
            field = f"{path}.route_changes[{index}]"
            if change.at.ns >= self.duration.ns:
                reason = f"is not before the end of the run (duration {self.duration.given})"
                raise ScenarioError(field, change.at.given, reason)
            self._check_route_names(f"{field}.route", change.route)

    def _check_rtt(self, path: str, table: TcpTraffic) -> None:
        route = self.route(table)
        one_way_ns = sum(self.link_named(name).delay.ns for name in route)
        if table.rtt.ns < 2 * one_way_ns:
            reason = (
                f"is shorter than twice the one-way delay of its route "
                f"({' + '.join(route)}: 2 × {one_way_ns / 1e6:g}ms)"
            )
            raise ScenarioError(f"{path}.rtt", table.rtt.given, reason)
        forward = getattr(table, "forward_delay", None)
        if forward is None:
            return
        if forward.ns > table.rtt.ns:
            raise ScenarioError(
                f"{path}.forward_delay", forward.given, f"exceeds the rtt ({table.rtt.given})"
            )
        if forward.ns < one_way_ns or table.rtt.ns - forward.ns < one_way_ns:
            reason = (
                f"leaves a direction less than its route's links' delay "
                f"({' + '.join(route)}: {one_way_ns / 1e6:g}ms each way)"
            )
            raise ScenarioError(f"{path}.forward_delay", forward.given, reason)

    def _check_starts_in_run(self, path: str, start: Duration) -> None:
        """A table starting at or after the end would report nothing (0 goodput) silently."""
        if start.ns >= self.duration.ns:
            reason = f"is not before the end of the run (duration {self.duration.given})"
            raise ScenarioError(f"{path}.start", start.given, reason)

    def _check_flow_count(self) -> None:
        """[[flow]] and [[reqresp]] flows together (web flows have their own bound)."""
        counts: list[tuple[str, int | None, int]] = [
            (f"flow[{i}].count", t.count, t.count * t.streams) for i, t in enumerate(self.flow)
        ]
        counts += [(f"reqresp[{i}]", None, 2) for i in range(len(self.reqresp))]
        if sum(flows for _, _, flows in counts) > MAX_FLOWS:
            field, value, _ = max(counts, key=lambda entry: entry[2])
            reason = f"makes more than {MAX_FLOWS:,} flows in the scenario (count × streams)"
            raise ScenarioError(field, value, reason)

    def _check_web_load(self, path: str, web: WebTraffic) -> None:
        window_s = (self.stop_ns(web.stop) - web.start.ns) / 1e9
        if web.arrival_rate * window_s > MAX_FLOWS:
            expected = web.arrival_rate * window_s
            reason = f"would start about {expected:,.0f} flows (at most {MAX_FLOWS:,})"
            raise ScenarioError(f"{path}.arrival_rate", web.arrival_rate, reason)
