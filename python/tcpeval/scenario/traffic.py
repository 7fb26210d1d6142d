"""Traffic tables: TCP flow groups ([[flow]], [[web]], [[reqresp]]) and background sources
without congestion control ([[cbr]], [[onoff]]).

Each table checks what it can alone (`check`, given its path such as `flow[2]`); what needs
the links, such as routes and RTTs, is checked by the Scenario.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, PlainValidator

from tcpeval.models import HEADER_BYTES
from tcpeval.scenario.conditions import RouteChangesField
from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import (
    AS_GIVEN,
    BufferField,
    CongestionControl,
    Direction,
    EcnMode,
    HeavyTailShape,
    NonNegativeTime,
    PositiveTime,
    RateField,
    Route,
    SelfSimilarShape,
    SizeField,
    Strict,
    ecn_modes,
)
from tcpeval.scenario.hosts import (
    PROFILES,
    SWITCHES,
    HostBehaviour,
    HostName,
    LossDetection,
    LostRetransmission,
    RtoInRecovery,
    WindowReduction,
)
from tcpeval.units import Duration, Rate, Size, parse_duration, parse_rate, parse_size

DEFAULT_MSS = parse_size(1448)
MSS_RANGE = (64, 65_000)  # bytes: a packet of mss + 52 header bytes fits an IP packet
MAX_STREAMS = 1000
# Bounds on counts, so that no number can ask for more flows, sources or exchanges than a run
# could hold (each flow costs its state and its time series; docs/contract.md).
MAX_FLOWS = 100_000  # TCP flows of [[flow]] and [[reqresp]] tables together; web flows alike
MAX_SOURCES = 10_000  # on/off sources of one [[onoff]] table
MAX_EXCHANGES = 10_000_000  # exchanges of one [[reqresp]] table
MAX_INITIAL_CWND = 1_000_000
MAX_DROP_EVERY = 2**32
MAX_PACKET_BYTES = 65535
UDP_PACKET_HEADER_BYTES = 28  # IPv4 and UDP


def parse_pacing(value: object) -> Duration | Rate:
    """A fixed gap between packets ('10us') or a cap on the sending rate ('500Mbps')."""
    try:
        gap = parse_duration(value)
    except ValueError:
        pass
    else:
        if gap.ns < 0:
            raise ValueError("must not be negative")
        return gap
    try:
        return parse_rate(value)
    except ValueError:
        raise ValueError("is neither a time (e.g. 10us) nor a rate (e.g. 500Mbps)") from None


PacingField = Annotated[Duration | Rate, PlainValidator(parse_pacing), AS_GIVEN]


def parse_mss(value: object) -> Size:
    mss = parse_size(value)
    low, high = MSS_RANGE
    if not low <= mss.bytes <= high:
        raise ValueError(f"must be {low}..{high} bytes")
    return mss


def parse_packet_size(value: object) -> Size:
    """A background source's packet on the wire, headers included."""
    size = parse_size(value)
    if size.bytes < UDP_PACKET_HEADER_BYTES:
        raise ValueError(f"must hold IP and UDP headers ({UDP_PACKET_HEADER_BYTES} bytes)")
    if size.bytes > MAX_PACKET_BYTES:
        raise ValueError(f"is larger than an IP packet ({MAX_PACKET_BYTES} B)")
    return size


MssField = Annotated[Size, PlainValidator(parse_mss), AS_GIVEN]
PacketSizeField = Annotated[Size, PlainValidator(parse_packet_size), AS_GIVEN]


def _check_window(path: str, start: Duration, stop: Duration | None) -> None:
    if stop is not None and stop.ns <= start.ns:
        raise ScenarioError(f"{path}.stop", stop.given, f"must be later than start ({start.given})")


class TcpTraffic(Strict):
    """What every TCP table has: an algorithm, a base RTT and a route."""

    cc: CongestionControl = Field(
        description="Congestion control: a name ('cubic') or a table with name and its "
        "parameters ({ name = 'htcp', beta_adaptive = false }). `tcpeval cc list` shows the "
        "simulator's algorithms with every parameter and its default, `tcpeval backends` what "
        "each backend runs; summary.json records the parameters a run used. Every algorithm "
        "grows its window by the packets an ACK acknowledges, as Linux does, so delayed ACKs "
        "do not slow it; reno and aimd count ACKs as RFC 5681 writes it with abc = false, and "
        "delayed ACKs then halve their growth (Mathis' √(3/4) constant). Required."
    )
    rtt: PositiveTime = Field(
        description="Base round-trip propagation delay; at least twice the one-way delays of "
        "the route's links. Required."
    )
    route: Route | None = Field(
        default=None,
        description="Names of the links the data crosses, in order. Default: the bottleneck "
        "(or the first [[link]]).",
    )
    host: HostName = Field(
        default="linux",
        description="The sending host's TCP beyond its congestion control (loss detection, "
        "window reduction in recovery, initial window, SACK compression): 'linux' (a current "
        "kernel: PRR, RACK, a lost retransmission resent in the same recovery, tail loss "
        "probes, SACK compression, initial window 10, TSO frames), 'linux-2.6' (the kernels of "
        "the 2003-2008 studies: rate halving, DupThresh, an ACK per segment during holes, RFC "
        "3390's initial window) or 'rfc' (the textbook: cwnd = ssthresh at once, DupThresh, a "
        "lost retransmission halves again, RFC 5681 §4.3; this simulator before host "
        "profiles). A [[flow]] table can set each switch of a profile alone; `tcpeval hosts` "
        "shows what each profile sets. Default: linux.",
    )
    ecn: EcnMode | None = Field(
        default=None,
        description="ECN: 'off' (Not-ECT: queues drop), 'classic' (ECT(0), RFC 3168 feedback; "
        "DCTCP's per-packet echo for dctcp) or 'l4s' (ECT(1), AccECN feedback, RFC 9768). "
        "Refused for a stack that cannot use it; `tcpeval cc list` shows which each stack runs "
        "with. Default: the stack's first: 'off' for the loss-based ones (a Linux host's "
        "tcp_ecn = 2 never asks for ECN), 'classic' for dctcp, 'l4s' for prague.",
    )

    @property
    def packet_bytes(self) -> int:
        return DEFAULT_MSS.bytes + HEADER_BYTES

    @property
    def mss_bytes(self) -> int:
        return DEFAULT_MSS.bytes

    def behaviour(self) -> HostBehaviour:
        """The host's switches: its profile's defaults."""
        return PROFILES[self.host]

    def ecn_mode(self) -> EcnMode:
        """The ECN setting asked for, else the stack's default (`off` for a stack the
        simulator does not know: the backend that runs it says what it can)."""
        if self.ecn is not None:
            return self.ecn
        return next(iter(ecn_modes(self.cc.name)), "off")

    def check(self, path: str) -> None:
        """Constraints between this table's own keys."""
        modes = ecn_modes(self.cc.name)
        if modes and self.ecn_mode() not in modes:
            reason = f"{self.cc.name} cannot use it (it runs with: {', '.join(modes)})"
            raise ScenarioError(f"{path}.ecn", self.ecn_mode(), reason)


class FlowGroup(TcpTraffic):
    """One [[flow]] table: `count` identical flows (or striped transfers)."""

    count: int = Field(
        default=1,
        ge=1,
        le=MAX_FLOWS,
        description=f"Identical flows in this group, at most {MAX_FLOWS:,} flows in all "
        "(count × streams, with [[reqresp]] flows). Default: 1.",
    )
    direction: Direction = Field(
        default="forward",
        description="'reverse': the data crosses the route's links backwards, sharing the ACK "
        "path of forward flows. Default: forward.",
    )
    forward_delay: NonNegativeTime | None = Field(
        default=None,
        description="The one-way delay of the data direction (sender to receiver), its "
        "route's links included, e.g. '40ms'; the ACKs take the rest of the RTT: a path "
        "slower one way than the other. At most the rtt, and each direction at least its "
        "links' delays. Default: none (the RTT split as the backend does: half and half in "
        "the lab, all on the ACK side in the simulator, which is the same for one "
        "bottleneck).",
    )
    mtu_probing: bool = Field(
        default=False,
        description="Linux's net.ipv4.tcp_mtu_probing = 1 on the sending host: after "
        "repeated timeouts it suspects a path-MTU black hole and falls back to a smaller "
        "MSS (RFC 4821 §7.7, tcp_base_mss). Lab only: the simulator's senders keep their "
        "MSS. Default: false (the kernel's default, 0).",
    )
    start: NonNegativeTime = Field(
        default=parse_duration("0s"), description="Time the sender starts. Default: 0s."
    )
    start_jitter: NonNegativeTime = Field(
        default=parse_duration("0s"),
        description="Each connection of the group starts a random time below this after "
        "start, drawn from the seed: without it a drop-tail dumbbell has no random process, "
        "and repeats with different seeds are the same run (its phase effects are fixed). "
        "Default: 0s.",
    )
    stop: NonNegativeTime | None = Field(
        default=None,
        description="Time the sender stops; later than start + start_jitter. Default: run to "
        "the end.",
    )
    size: SizeField | None = Field(
        default=None, description="Bytes to transfer, then stop. Default: bulk (unlimited)."
    )
    streams: int = Field(
        default=1,
        ge=1,
        le=MAX_STREAMS,
        description=f"Parallel TCP connections, 1..{MAX_STREAMS}, striping one transfer of "
        "size (as bbcp and GridFTP do); needs size. Default: 1.",
    )
    mss: MssField = Field(
        default=DEFAULT_MSS,
        description="Segment payload, 64..65000 bytes; a packet on the wire (the MTU) is mss "
        "+ 52 bytes, so '8948B' gives 9000-byte jumbo frames. Default: 1448.",
    )
    sack: bool = Field(default=True, description="Selective acknowledgements. Default: true.")
    delayed_ack: bool = Field(default=True, description="ACK every second packet. Default: true.")
    sack_compression: bool | None = Field(
        default=None,
        description="While a hole is open the receiver sends three duplicate ACKs at once, "
        "then one SACK per 1 ms (5% of the RTT below 20 ms) or per 45 segments, as Linux does "
        "from 4.18 (tcp_comp_sack_*). false: an ACK for every segment while a hole is open "
        "(RFC 5681 §4.2, older kernels). Default: the host's (linux, rfc: true; linux-2.6: "
        "false).",
    )
    window_reduction: WindowReduction | None = Field(
        default=None,
        description="How the flight falls to ssthresh in fast recovery: 'prr' (Proportional "
        "Rate Reduction, RFC 9937), 'rate-halving' (Linux 2.6) or 'rfc6675' (at once). "
        "Default: the host's (linux: prr; linux-2.6: rate-halving; rfc: rfc6675).",
    )
    loss_detection: LossDetection | None = Field(
        default=None,
        description="With SACK, when a hole is lost: 'rack' (once a segment sent after it is "
        "SACKed, in recovery or with three SACKed: RFC 8985 as Linux runs it) or 'dupthresh' "
        "(three SACKed segments above it, RFC 6675). Default: the host's (linux: rack; "
        "linux-2.6, rfc: dupthresh).",
    )
    lost_retransmission: LostRetransmission | None = Field(
        default=None,
        description="A retransmission found lost: 'resend' it within the same recovery "
        "(Linux) or 'reduce' the window a second time (RFC 5681 §4.3). Default: the host's "
        "(linux, linux-2.6: resend; rfc: reduce).",
    )
    tail_loss_probe: bool | None = Field(
        default=None,
        description="When the ACKs stop with nothing known lost, a probe segment two smoothed "
        "RTTs later, so that its SACK reveals the tail's losses before the RTO (RFC 8985 §7). "
        "Default: the host's (linux: true; linux-2.6, rfc: false).",
    )
    undo: bool | None = Field(
        default=None,
        description="The receiver reports duplicate segments (D-SACK, RFC 2883) and the sender "
        "undoes a window reduction once they show every retransmission of it unneeded (RFC "
        "3708, Linux tcp_dsack), or once data sent before a timeout is acknowledged after it "
        "(F-RTO, RFC 5682, Linux tcp_frto). Default: the host's (linux, linux-2.6: true; rfc: "
        "false).",
    )
    timestamps: bool | None = Field(
        default=None,
        description="Data segments carry timestamps and ACKs echo them (RFC 7323). With "
        "undo, a reduction is undone once an ACK echoes a segment sent before its first "
        "retransmission (Eifel detection, RFC 3522; Linux tcp_packet_delayed). Default: the "
        "host's (linux, linux-2.6: true; rfc: false).",
    )
    rto_in_recovery: RtoInRecovery | None = Field(
        default=None,
        description="A retransmission timeout during fast recovery: 'keep-ssthresh' as the "
        "recovery set it, cwnd to 1 (Linux tcp_enter_loss), or 'reduce' ssthresh again from "
        "the reduced window. Default: the host's (linux, linux-2.6: keep-ssthresh; rfc: "
        "reduce).",
    )
    tso: bool | None = Field(
        default=None,
        description="The sender hands out TSO/GSO frames: about 1 ms of its pacing rate "
        "(for all but BBR, 200% of cwnd/srtt in slow start, 120% after), at most 64 KB and "
        "half of cwnd, which reach the first link at one instant; a frame too small for a "
        "full one is held back while an ACK is due within min(srtt/2, 1 ms) (Linux "
        "tcp_tso_autosize, tcp_tso_should_defer). Default: the host's (linux: true; "
        "linux-2.6, rfc: false).",
    )
    window: BufferField | None = Field(
        default=None,
        description="Socket-buffer limit on the window: bytes ('2MB', whole segments), packets "
        "('1000pkt') or a share of this flow's own BDP at the slowest link of its route "
        "('100%bdp'). Default: unlimited.",
    )
    initial_cwnd: int | None = Field(
        default=None,
        ge=1,
        le=MAX_INITIAL_CWND,
        description=f"Initial window, packets, at most {MAX_INITIAL_CWND:,} (the simulator "
        "never sends more than a few times what the path holds). Default: the host's "
        "(linux, rfc: 10; linux-2.6: RFC 3390's, 3 segments of 1448 bytes).",
    )
    min_rto: PositiveTime = Field(
        default=parse_duration("200ms"), description="Lower bound of the RTO. Default: 200ms."
    )
    route_changes: RouteChangesField = Field(
        default=(),
        description="The route changes during the run: [[time, route], ...], e.g. [['20s', "
        "['b', 'c']]], each route written as `route` is. The flow keeps the private part of "
        "its RTT (rtt less twice its first route's delays), so its base RTT becomes that plus "
        "twice the new route's delays. Packets already sent finish the path they started on "
        "(those on the old links are delivered or dropped there, and a shorter new path may "
        "overtake them: reordering). Default: none.",
    )
    drop_at: list[NonNegativeTime] = Field(
        default_factory=list,
        description="Induced losses: the first packet of each flow of the group reaching the "
        "first link of its route at or after each time is dropped. Default: none.",
    )
    drop_every: int | None = Field(
        default=None,
        ge=2,
        le=MAX_DROP_EVERY,
        description="The receiver drops 1 data packet in N, 2..2^32. Default: none.",
    )
    pacing: PacingField | None = Field(
        default=None,
        description="A fixed gap between data packets ('10us') or a rate cap ('500Mbps'). "
        "Default: none.",
    )
    source_rate: RateField | None = Field(
        default=None,
        description="The sending application (disk) hands data to TCP at this rate. "
        "Default: unlimited.",
    )
    sink_rate: RateField | None = Field(
        default=None,
        description="The receiving application (disk) reads at this rate. Default: unlimited.",
    )

    @property
    def packet_bytes(self) -> int:
        return self.mss.bytes + HEADER_BYTES

    @property
    def mss_bytes(self) -> int:
        return self.mss.bytes

    def behaviour(self) -> HostBehaviour:
        """The host's switches: its profile's defaults, with those this table sets itself."""
        own = {key: getattr(self, key) for key in SWITCHES if getattr(self, key) is not None}
        return PROFILES[self.host].model_copy(update=own)

    def check(self, path: str) -> None:
        super().check(path)
        jitter = self.start_jitter
        latest_start = (
            Duration(f"{self.start.given} + {jitter.given}", self.start.ns + jitter.ns)
            if jitter.ns
            else self.start
        )
        _check_window(path, latest_start, self.stop)
        window = self.window
        if window is not None and window.bytes is not None and window.bytes < self.mss.bytes:
            reason = f"is smaller than one segment (mss {self.mss.bytes} B)"
            raise ScenarioError(f"{path}.window", window.given, reason)
        if self.streams > 1 and self.size is None:
            reason = "needs size (the streams share one finite transfer)"
            raise ScenarioError(f"{path}.streams", self.streams, reason)
        if self.size is not None and self.size.bytes < self.streams:
            reason = f"is less than one byte per stream ({self.streams} streams)"
            raise ScenarioError(f"{path}.size", self.size.given, reason)


class WebTraffic(TcpTraffic):
    """A [[web]] table: short TCP flows arriving as a Poisson process with Pareto sizes. The
    flows are drawn from the scenario's seed plus the table's index, so a scenario always gives
    the same flows."""

    arrival_rate: float = Field(gt=0, description="Mean flow arrivals per second. Required.")
    mean_size: SizeField = Field(description="Mean transfer size, e.g. '100KB'. Required.")
    shape: HeavyTailShape = Field(
        default=1.2, description="Pareto shape of the sizes, above 1. Default: 1.2."
    )
    start: NonNegativeTime = Field(
        default=parse_duration("0s"), description="First possible arrival. Default: 0s."
    )
    stop: NonNegativeTime | None = Field(
        default=None, description="Arrivals end here. Default: the end of the run."
    )

    def check(self, path: str) -> None:
        super().check(path)
        _check_window(path, self.start, self.stop)


class RequestResponse(TcpTraffic):
    """A [[reqresp]] table: a client's request, then the server's response, `count` times."""

    request: SizeField = Field(
        default=parse_size("64B"), description="Bytes the client sends. Default: 64B."
    )
    response: SizeField = Field(
        default=parse_size("1MB"), description="Bytes the server answers with. Default: 1MB."
    )
    think: NonNegativeTime = Field(
        default=parse_duration("0s"),
        description="Pause between a response and the next request. Default: 0s.",
    )
    count: int = Field(
        default=10,
        ge=1,
        le=MAX_EXCHANGES,
        description=f"Exchanges, at most {MAX_EXCHANGES:,}. Default: 10.",
    )


class Source(Strict):
    """What every background source has: a rate, packets, a time window and a route."""

    rate: RateField = Field(description="Sending rate (peak rate for on/off). Required.")
    packet_size: PacketSizeField = Field(
        default=parse_size("1500B"),
        description="Packet size on the wire, 28..65535 bytes. Default: 1500B.",
    )
    start: NonNegativeTime = Field(
        default=parse_duration("0s"), description="Time the source starts. Default: 0s."
    )
    stop: NonNegativeTime | None = Field(
        default=None, description="Time the source stops. Default: the end of the run."
    )
    route: Route | None = Field(
        default=None,
        description="Names of the links the packets cross, in order. Default: the bottleneck "
        "(or the first [[link]]).",
    )
    direction: Direction = Field(
        default="forward",
        description="'reverse': the packets cross the route's links backwards. Default: forward.",
    )

    def check(self, path: str) -> None:
        _check_window(path, self.start, self.stop)


class ConstantBitRate(Source):
    """A [[cbr]] table: UDP-like packets at a constant rate."""


class OnOff(Source):
    """An [[onoff]] table: `count` sources, each on at `rate` for Pareto-distributed periods and
    off for Pareto-distributed periods; their aggregate is self-similar with Hurst parameter
    H = (3 - shape)/2 (Willinger et al. 1997)."""

    count: int = Field(
        default=1,
        ge=1,
        le=MAX_SOURCES,
        description=f"Sources in the aggregate, at most {MAX_SOURCES:,}. Default: 1.",
    )
    shape: SelfSimilarShape = Field(
        default=1.5, description="Pareto shape of on and off periods, in (1, 2). Default: 1.5."
    )
    mean_on: PositiveTime = Field(
        default=parse_duration("100ms"), description="Mean on period. Default: 100ms."
    )
    mean_off: PositiveTime = Field(
        default=parse_duration("400ms"), description="Mean off period. Default: 400ms."
    )
