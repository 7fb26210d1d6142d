"""Links: `[bottleneck]` and `[[link]]` tables, their queue disciplines and loss models, and
their resolution into the core's `links` entries (docs/contract.md, "Conditions")."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    PlainValidator,
    Tag,
)

from tcpeval.scenario.aqm import AQM_NAMES, Aqm, AqmContext, DropTail
from tcpeval.scenario.conditions import OutagesField, RateScheduleField
from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import (
    AS_GIVEN,
    BufferField,
    LossProbability,
    NonNegativeTime,
    PositiveTime,
    Probability,
    RateField,
    SizeField,
    Strict,
    UnitInterval,
)
from tcpeval.scenario.queue import Crossing, QueueCounts, queue_limit
from tcpeval.units import Size, parse_buffer, parse_duration, parse_size

# A token bucket must hold what its rate earns in one timer tick, rate/HZ (tc-tbf(8)); at the
# HZ of 100 the tc documentation assumes, 10 ms. Never less than a few full packets, or even a
# flow below the rate would lose packets that arrive together (an ACK releases two).
POLICER_BURST_S = 0.01
POLICER_MIN_BURST_PKTS = 10
# An IPv4 hop's MTU: RFC 791's smallest, and the largest IP packet.
MTU_RANGE = (68, 65535)


def parse_mtu(value: object) -> Size:
    mtu = parse_size(value)
    low, high = MTU_RANGE
    if not low <= mtu.bytes <= high:
        raise ValueError(f"must be {low}..{high} bytes (an IPv4 hop's MTU)")
    return mtu


MtuField = Annotated[Size, PlainValidator(parse_mtu), AS_GIVEN]


class GilbertElliott(Strict):
    """Bursty loss: a good and a bad state, each with its own loss probability."""

    model: Literal["gilbert_elliott"] = Field(description="'gilbert_elliott'. Required.")
    p: Probability = Field(description="Per-packet probability of going from good to bad.")
    r: UnitInterval = Field(description="Per-packet probability of going from bad to good.")
    loss_good: Probability = Field(default=0.0, description="Loss in the good state.")
    loss_bad: Probability = Field(default=1.0, description="Loss in the bad state.")


# The union's tags are written <like-this> so error paths can leave them out.


def _loss_tag(value: object) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "<probability>"
    model = value.get("model") if isinstance(value, dict) else getattr(value, "model", None)
    return "<gilbert_elliott>" if model == "gilbert_elliott" else None


Loss = Annotated[
    Annotated[LossProbability, Tag("<probability>")]
    | Annotated[GilbertElliott, Tag("<gilbert_elliott>")],
    Discriminator(
        _loss_tag,
        custom_error_type="choice",
        custom_error_message="must be a probability or a table with model = 'gilbert_elliott'",
    ),
]


class Policer(Strict):
    """A token bucket at the link's entry, as an ISP's rate limit (`tc ... action police`):
    packets beyond its rate and burst are dropped, never queued. Forward direction only."""

    rate: RateField = Field(
        description="Policed rate, e.g. '20Mbps'; at most the link's rate. Required."
    )
    burst: SizeField | None = Field(
        default=None,
        description="Bucket depth: the bytes let through back to back after an idle period, "
        "e.g. '64KB'; at least the largest packet crossing the link. Default: 10 ms at the "
        "policed rate (tc-tbf(8)'s rate/HZ at HZ=100), at least 10 of the largest packets.",
    )


class Reorder(Strict):
    """Reordering without loss: a share of the packets leaving the link held back a fixed
    extra delay, so that those sent after them overtake them. Forward direction only."""

    share: UnitInterval = Field(
        description="Probability that a packet is held back, in (0, 1]. Required."
    )
    delay: PositiveTime = Field(
        description="How much later a held-back packet arrives, e.g. '2ms'. Required."
    )


class Link(Strict):
    """A link's conditions; `[bottleneck]` is one of these named "bottleneck"."""

    rate: RateScheduleField = Field(
        description="Link rate, e.g. '250Mbps', or a schedule of [time, rate] pairs from 0s, "
        "e.g. [['0s', '1Gbps'], ['30s', '100Mbps']]: both directions change at each time, and "
        "a packet being sent finishes at the rate it started with. Queues, thresholds and "
        "windows in %bdp are sized at the first rate. Required."
    )
    delay: NonNegativeTime = Field(
        default=parse_duration("0s"), description="One-way propagation delay. Default: 0s."
    )
    queue: BufferField = Field(
        default=parse_buffer("100%bdp"),
        description="Buffer, counting the packet being sent: packets ('100pkt'), bytes "
        "('1.5MB', at least one packet) or a share of the BDP at the largest base RTT of the "
        "flows crossing the link ('20%bdp', rounded to whole packets of the largest size "
        "crossing the link, at least one). Default: 100%bdp.",
    )
    queue_counts: QueueCounts | None = Field(
        default=None,
        description="How the buffer counts packets of mixed sizes: 'packets' (as Linux's "
        "pfifo) or 'bytes' (bfifo, routers' memory); a limit written in the other unit "
        "converts at the largest packet crossing the link (see How a queue counts). Default: "
        "as the queue is written, packets for 'pkt', bytes for a size or '%bdp'.",
    )
    aqm: Aqm = Field(
        default=DropTail(name="droptail"),
        description=f"Queue discipline: one of {', '.join(AQM_NAMES)}, or a table with name "
        "and parameters (tc's names and defaults). An ECN-capable packet is marked CE where the "
        "discipline would drop it only with the discipline's ecn = true; past the queue's limit "
        "every discipline drops. Default: droptail.",
    )
    loss: Loss = Field(
        default=0.0,
        description="Random loss of data packets: a probability in [0, 1) or a "
        "Gilbert-Elliott table. Default: 0.0.",
    )
    ack_loss: Loss = Field(
        default=0.0,
        description="Loss in the reverse direction (ACKs, reverse traffic), same forms as "
        "loss. Default: 0.0.",
    )
    policer: Policer | None = Field(
        default=None,
        description="A token-bucket policer before the queue: { rate = '20Mbps', burst = "
        "'64KB' }; packets beyond the rate and the burst are dropped (policer_drops), not "
        "queued. Default: none.",
    )
    outage: OutagesField = Field(
        default=(),
        description="Periods the link is down: [[start, end], ...], e.g. [['10s', '12s']]; "
        "every packet entering it then is dropped (counted in induced_drops), what it already "
        "holds goes on. Default: none.",
    )
    ack_outage: OutagesField = Field(
        default=(),
        description="Periods the reverse direction (ACKs, reverse traffic) is down, same "
        "form as outage: with it alone, a forward flow loses all its feedback. Default: none.",
    )
    reorder: Reorder | None = Field(
        default=None,
        description="Reordering without loss: { share = 0.01, delay = '2ms' } holds back that "
        "share of the packets leaving the link (forward direction) by that delay, so later "
        "ones overtake them. Linux's RACK waits a quarter of the minimum RTT once it has seen "
        "the path reorder; DupThresh hosts take 3 overtaking packets for a loss. Default: none.",
    )
    mtu_black_hole: MtuField | None = Field(
        default=None,
        description="A path-MTU black hole (RFC 2923 §2.1): IP packets longer than this, e.g. "
        "1400 (bytes), vanish in the forward direction with no ICMP 'fragmentation needed' "
        "(black_hole_drops); a segment is mss + 52 bytes. A sender finds it only by probing "
        "after timeouts (flow.mtu_probing, the lab's Linux); the simulator's never do, so "
        "their flows then deliver nothing. Default: none.",
    )


class NamedLink(Link):
    """A [[link]] table: a link of a multi-bottleneck topology."""

    name: str = Field(
        min_length=1,
        description="Unique name, used in routes ([[link]] only: [bottleneck] is named "
        "'bottleneck'). Required.",
    )


def resolve_link(field: str, name: str, link: Link, crossing: Crossing) -> dict[str, Any]:
    queue_pkts, queue_bytes = queue_limit(
        f"{field}.queue", link.queue, link.queue_counts, link.rate.bps, crossing
    )
    if queue_bytes is not None:
        queue_size = queue_bytes / crossing.largest_packet_bytes
    else:
        assert queue_pkts is not None  # a limit is in packets or in bytes
        queue_size = float(queue_pkts)
    return {
        "name": name,
        "rate_bps": link.rate.bps,
        "rate_changes": [
            {"at_ns": time.ns, "rate_bps": rate.bps} for time, rate in link.rate.changes
        ],
        "delay_ns": link.delay.ns,
        "queue_pkts": queue_pkts,
        "queue_bytes": queue_bytes,
        "aqm": link.aqm.resolved(AqmContext(f"{field}.aqm", link.rate.bps, crossing, queue_size)),
        "loss": resolve_loss(link.loss),
        "reverse_loss": resolve_loss(link.ack_loss),
        "policer": resolve_policer(f"{field}.policer", link, crossing),
        "outages_ns": [[start.ns, end.ns] for start, end in link.outage],
        "reverse_outages_ns": [[start.ns, end.ns] for start, end in link.ack_outage],
        "reorder": None
        if link.reorder is None
        else {"share": link.reorder.share, "delay_ns": link.reorder.delay.ns},
        "mtu_black_hole_bytes": None if link.mtu_black_hole is None else link.mtu_black_hole.bytes,
    }


def resolve_policer(field: str, link: Link, crossing: Crossing) -> dict[str, int] | None:
    """The policer's rate and burst in bits/s and bytes, the burst at its default if unset."""
    policer = link.policer
    if policer is None:
        return None
    if policer.rate.bps > link.rate.bps:
        reason = f"is above the link's rate ({link.rate.given}): the queue would set the rate"
        raise ScenarioError(f"{field}.rate", policer.rate.given, reason)
    packet_bytes = crossing.largest_packet_bytes
    if policer.burst is None:
        burst_bytes = max(
            round(policer.rate.bps * POLICER_BURST_S / 8), POLICER_MIN_BURST_PKTS * packet_bytes
        )
    elif policer.burst.bytes < packet_bytes:
        reason = f"is smaller than one packet ({packet_bytes} B with headers): nothing conforms"
        raise ScenarioError(f"{field}.burst", policer.burst.given, reason)
    else:
        burst_bytes = policer.burst.bytes
    return {"rate_bps": policer.rate.bps, "burst_bytes": burst_bytes}


def resolve_loss(loss: float | GilbertElliott) -> dict[str, Any]:
    if isinstance(loss, GilbertElliott):
        return loss.model_dump()
    return {"model": "bernoulli", "p": loss} if loss > 0 else {"model": "none"}
