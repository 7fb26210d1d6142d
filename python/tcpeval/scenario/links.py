"""Links: `[bottleneck]` and `[[link]]` tables, their queue disciplines and loss models, and
their resolution into the core's `links` entries (docs/contract.md, version 2)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import (
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
from tcpeval.scenario.queue import Crossing, QueueCounts, buffer_pkts, queue_limit
from tcpeval.units import Buffer, Duration, parse_buffer, parse_duration, parse_size

RED_MIN_TH_SHARE = 0.25
RED_MAX_TH_SHARE = 0.75
# A token bucket must hold what its rate earns in one timer tick, rate/HZ (tc-tbf(8)); at the
# HZ of 100 the tc documentation assumes, 10 ms. Never less than a few full packets, or even a
# flow below the rate would lose packets that arrive together (an ACK releases two).
POLICER_BURST_S = 0.01
POLICER_MIN_BURST_PKTS = 10


class _Discipline(Strict):
    """A queue discipline, written as its name alone or as a table with `name`."""

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: object) -> object:
        return {"name": value} if isinstance(value, str) else value


class DropTail(_Discipline):
    name: Literal["droptail"] = Field(description="Drop arrivals at a full queue.")


class Red(_Discipline):
    """Random Early Detection (Floyd and Jacobson 1993), gentle variant by default."""

    name: Literal["red"]
    min_th: BufferField | None = Field(
        default=None,
        description="Average queue below which nothing is dropped: '20pkt', '30KB' or "
        "'5%bdp'. Default: 1/4 of the queue limit.",
    )
    max_th: BufferField | None = Field(
        default=None,
        description="Average queue at which the drop probability reaches max_p. "
        "Default: 3/4 of the queue limit.",
    )
    max_p: UnitInterval = Field(default=0.1, description="Drop probability at max_th.")
    weight: UnitInterval = Field(default=0.002, description="EWMA weight of the average queue.")
    gentle: bool = Field(default=True, description="Ramp from max_p to 1 up to 2·max_th.")
    ecn: bool = Field(
        default=False,
        description="Mark ECN-capable packets CE instead of dropping them (RFC 3168 §7, "
        "`tc red ecn`). Default: false.",
    )
    harddrop: bool = Field(
        default=False,
        description="With ecn: drop, not mark, once the average is beyond max_th (gentle: "
        "2·max_th), as `tc red harddrop`. Default: false.",
    )


class CoDel(_Discipline):
    """Controlled Delay (RFC 8289): drop when the sojourn time stays above target."""

    name: Literal["codel"]
    interval: PositiveTime = Field(
        default=parse_duration("100ms"),
        description="Window over which the minimum sojourn time is taken. Default: 100ms.",
    )
    target: PositiveTime = Field(
        default="5ms",  # parsed, so that it is checked against interval too
        validate_default=True,
        description="Acceptable standing queue delay, below interval. Default: 5ms.",
    )

    ecn: bool = Field(
        default=False,
        description="Mark ECN-capable packets CE instead of dropping them (`tc codel ecn`). "
        "Default: false.",
    )
    ce_threshold: PositiveTime | None = Field(
        default=None,
        description="Also mark every ECN-capable packet whose sojourn exceeds this, a "
        "shallow step for DCTCP and L4S senders (`tc codel ce_threshold`). Default: none.",
    )

    @field_validator("target")
    @classmethod
    def _below_interval(cls, target: Duration, info: ValidationInfo) -> Duration:
        interval = info.data.get("interval")
        if interval is not None and target.ns >= interval.ns:
            raise ValueError(f"must be shorter than interval ({interval.given})")
        return target


class Pie(_Discipline):
    """PIE (RFC 8033): a drop (or mark) probability steered every tupdate by the queueing
    delay's distance from target and its trend, after a burst allowance. Defaults as `tc pie`."""

    name: Literal["pie"]
    target: PositiveTime = Field(
        default=parse_duration("15ms"), description="Target queueing delay. Default: 15ms."
    )
    tupdate: PositiveTime = Field(
        default=parse_duration("15ms"), description="Probability update interval. Default: 15ms."
    )
    alpha: float = Field(
        default=0.125, ge=0, le=100, description="Integral gain, Hz. Default: 0.125."
    )
    beta: float = Field(
        default=1.25, ge=0, le=100, description="Proportional gain, Hz. Default: 1.25."
    )
    max_burst: NonNegativeTime = Field(
        default=parse_duration("150ms"),
        description="Burst allowance after an idle queue. Default: 150ms.",
    )
    ecn: bool = Field(default=False, description="Mark instead of drop. Default: false.")
    mark_ecn_threshold: UnitInterval = Field(
        default=0.1,
        description="With ecn, ECN-capable packets are dropped too above this probability "
        "(RFC 8033 §5.1). Default: 0.1.",
    )
    bytemode: bool = Field(
        default=False, description="Scale the probability by packet size. Default: false."
    )


class Step(_Discipline):
    """DCTCP's marker (Alizadeh et al., SIGCOMM 2010 §3.1): an ECN-capable packet that finds more
    than `threshold` queued is marked CE; Not-ECT packets pass to the hard limit."""

    name: Literal["step"]
    threshold: BufferField = Field(
        description="K: packets ('65pkt'), bytes ('97KB') or a share of the BDP ('15%bdp'), "
        "below the queue limit. The DCTCP paper's rule for full throughput: K > C·RTT/7. "
        "Required."
    )


class FqCodel(_Discipline):
    """FQ-CoDel (RFC 8290): flows hashed into queues served round robin, newly active flows
    first, each queue under its own CoDel. The default qdisc of most Linux distributions;
    defaults as `tc fq_codel`."""

    name: Literal["fq_codel"]
    flows: int = Field(default=1024, ge=1, le=65536, description="Flow queues. Default: 1024.")
    quantum: SizeField = Field(
        default=parse_size(1514),
        description="Bytes a queue may send per round (the DRR quantum). Default: 1514.",
    )
    target: PositiveTime = Field(
        default=parse_duration("5ms"), description="CoDel's target sojourn. Default: 5ms."
    )
    interval: PositiveTime = Field(
        default=parse_duration("100ms"), description="CoDel's interval. Default: 100ms."
    )
    ecn: bool = Field(default=True, description="Mark instead of drop. Default: true, as Linux.")
    ce_threshold: PositiveTime | None = Field(
        default=None,
        description="Mark ECN-capable packets above this sojourn (L4S's shallow step in "
        "fq_codel). Default: none.",
    )
    drop_batch: int = Field(
        default=64,
        ge=1,
        le=65536,
        description="Most packets dropped from the fattest queue when the buffer is full. "
        "Default: 64.",
    )


class DualPi2(_Discipline):
    """DualPI2 (RFC 9332): an L queue for L4S traffic (ECT(1) and CE) with a shallow step
    marker, a classic queue under a PI2 controller, the two coupled (p_CL = k·p', p_C = p'²)
    and served by a time-shifted FIFO. Defaults as `tc dualpi2`."""

    name: Literal["dualpi2"]
    target: PositiveTime = Field(
        default=parse_duration("15ms"), description="Classic queue's target delay. Default: 15ms."
    )
    tupdate: PositiveTime = Field(
        default=parse_duration("16ms"), description="PI update interval. Default: 16ms."
    )
    alpha: float = Field(
        default=0.16, ge=0, le=100, description="Integral gain, Hz. Default: 0.16."
    )
    beta: float = Field(
        default=3.2, ge=0, le=100, description="Proportional gain, Hz. Default: 3.2."
    )
    coupling_factor: float = Field(
        default=2.0, ge=1, le=100, description="k, the coupling of L to classic. Default: 2."
    )
    step_thresh: PositiveTime = Field(
        default=parse_duration("1ms"),
        description="L queue sojourn at which its packets are marked. Default: 1ms.",
    )
    drop_overload: bool = Field(
        default=True,
        description="Once k·p' reaches 1, drop L4S packets too rather than let the queue grow. "
        "Default: true.",
    )


class GilbertElliott(Strict):
    """Bursty loss: a good and a bad state, each with its own loss probability."""

    model: Literal["gilbert_elliott"]
    p: Probability = Field(description="Per-packet probability of going from good to bad.")
    r: UnitInterval = Field(description="Per-packet probability of going from bad to good.")
    loss_good: Probability = Field(default=0.0, description="Loss in the good state.")
    loss_bad: Probability = Field(default=1.0, description="Loss in the bad state.")


# Tags of the unions below are written <like-this> so error paths can leave them out.


def _aqm_tag(value: object) -> str | None:
    name = value if isinstance(value, str) else None
    name = value.get("name") if isinstance(value, dict) else getattr(value, "name", name)
    return f"<{name}>" if name in AQM_NAMES else None


def _loss_tag(value: object) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "<probability>"
    model = value.get("model") if isinstance(value, dict) else getattr(value, "model", None)
    return "<gilbert_elliott>" if model == "gilbert_elliott" else None


AQM_NAMES = ("droptail", "red", "codel", "pie", "step", "fq_codel", "dualpi2")
Aqm = Annotated[
    Annotated[DropTail, Tag("<droptail>")]
    | Annotated[Red, Tag("<red>")]
    | Annotated[CoDel, Tag("<codel>")]
    | Annotated[Pie, Tag("<pie>")]
    | Annotated[Step, Tag("<step>")]
    | Annotated[FqCodel, Tag("<fq_codel>")]
    | Annotated[DualPi2, Tag("<dualpi2>")],
    Discriminator(
        _aqm_tag,
        custom_error_type="choice",
        custom_error_message=f"is not a supported AQM (allowed: {', '.join(AQM_NAMES)})",
    ),
]
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


class Link(Strict):
    """A link's conditions; `[bottleneck]` is one of these named "bottleneck"."""

    rate: RateField = Field(description="Link rate, e.g. '250Mbps'. Required.")
    delay: NonNegativeTime = Field(
        default=parse_duration("0s"), description="One-way propagation delay. Default: 0s."
    )
    queue: BufferField = Field(
        default=parse_buffer("100%bdp"),
        description="Buffer: packets ('100pkt'), bytes ('1.5MB') or a share of the BDP at the "
        "largest base RTT of the flows crossing the link ('20%bdp'). Default: 100%bdp.",
    )
    queue_counts: QueueCounts | None = Field(
        default=None,
        description="How the buffer counts packets of mixed sizes: 'packets' (as Linux's "
        "pfifo) or 'bytes' (bfifo, routers' memory). Default: as the queue is written, "
        "packets for 'pkt', bytes for a size or '%bdp' (scenario/queue.py).",
    )
    aqm: Aqm = Field(
        default=DropTail(name="droptail"),
        description=f"One of {', '.join(AQM_NAMES)}, or a table with name and parameters.",
    )
    loss: Loss = Field(
        default=0.0,
        description="Random loss of data: a probability in [0, 1) or a Gilbert-Elliott table.",
    )
    ack_loss: Loss = Field(
        default=0.0, description="Loss in the reverse direction (ACKs), same forms as loss."
    )
    policer: Policer | None = Field(
        default=None,
        description="A token-bucket policer before the queue: { rate = '20Mbps', burst = "
        "'64KB' }. Default: none.",
    )


class NamedLink(Link):
    """A [[link]] table: a link of a multi-bottleneck topology."""

    name: str = Field(min_length=1, description="Unique name, used in routes. Required.")


def resolve_link(field: str, name: str, link: Link, crossing: Crossing) -> dict[str, Any]:
    queue_pkts, queue_bytes = queue_limit(
        f"{field}.queue", link.queue, link.queue_counts, link.rate.bps, crossing
    )
    queue_size = queue_pkts if queue_bytes is None else queue_bytes / crossing.largest_packet_bytes
    return {
        "name": name,
        "rate_bps": link.rate.bps,
        "delay_ns": link.delay.ns,
        "queue_pkts": queue_pkts,
        "queue_bytes": queue_bytes,
        "aqm": resolve_aqm(f"{field}.aqm", link, crossing, queue_size),
        "loss": resolve_loss(link.loss),
        "reverse_loss": resolve_loss(link.ack_loss),
        "policer": resolve_policer(f"{field}.policer", link, crossing),
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


def resolve_aqm(field: str, link: Link, crossing: Crossing, queue_pkts: float) -> dict[str, Any]:
    """The queue discipline; RED's thresholds in packets, by default 1/4 and 3/4 of the queue."""
    aqm = link.aqm
    if isinstance(aqm, CoDel):
        return {
            "name": "codel",
            "target_ns": aqm.target.ns,
            "interval_ns": aqm.interval.ns,
            "ecn": aqm.ecn,
            "ce_threshold_ns": _ns(aqm.ce_threshold),
        }
    if isinstance(aqm, Pie):
        return {
            "name": "pie",
            "target_ns": aqm.target.ns,
            "tupdate_ns": aqm.tupdate.ns,
            "alpha": aqm.alpha,
            "beta": aqm.beta,
            "max_burst_ns": aqm.max_burst.ns,
            "ecn": aqm.ecn,
            "mark_ecn_threshold": aqm.mark_ecn_threshold,
            "bytemode": aqm.bytemode,
        }
    if isinstance(aqm, Step):
        return resolve_step(f"{field}.threshold", aqm.threshold, link, crossing, queue_pkts)
    if isinstance(aqm, FqCodel):
        return {
            "name": "fq_codel",
            "flows": aqm.flows,
            "quantum_bytes": aqm.quantum.bytes,
            "target_ns": aqm.target.ns,
            "interval_ns": aqm.interval.ns,
            "ecn": aqm.ecn,
            "ce_threshold_ns": _ns(aqm.ce_threshold),
            "drop_batch_pkts": aqm.drop_batch,
        }
    if isinstance(aqm, DualPi2):
        return {
            "name": "dualpi2",
            "target_ns": aqm.target.ns,
            "tupdate_ns": aqm.tupdate.ns,
            "alpha": aqm.alpha,
            "beta": aqm.beta,
            "coupling_factor": aqm.coupling_factor,
            "step_threshold_ns": aqm.step_thresh.ns,
            "drop_overload": aqm.drop_overload,
        }
    if isinstance(aqm, DropTail):
        return {"name": "droptail"}

    def threshold(key: str, given: Buffer | None, share: float) -> float:
        if given is None:
            return share * queue_pkts
        return buffer_pkts(f"{field}.{key}", given, link.rate.bps, crossing)

    min_th = threshold("min_th", aqm.min_th, RED_MIN_TH_SHARE)
    max_th = threshold("max_th", aqm.max_th, RED_MAX_TH_SHARE)
    if not min_th < max_th:
        given = f"{max_th:g}pkt" if aqm.max_th is None else aqm.max_th.given
        raise ScenarioError(f"{field}.max_th", given, f"must be above min_th ({min_th:g} pkt)")
    return {
        "name": "red",
        "min_th_pkts": min_th,
        "max_th_pkts": max_th,
        "max_p": aqm.max_p,
        "weight": aqm.weight,
        "gentle": aqm.gentle,
        "ecn": aqm.ecn,
        "harddrop": aqm.harddrop,
    }


def resolve_step(
    field: str, threshold: Buffer, link: Link, crossing: Crossing, queue_pkts: float
) -> dict[str, Any]:
    """K in packets (or bytes, as written), below the queue it marks."""
    pkts = buffer_pkts(field, threshold, link.rate.bps, crossing)
    if pkts >= queue_pkts:
        reason = f"is not below the queue ({queue_pkts:g} pkt): nothing would be marked"
        raise ScenarioError(field, threshold.given, reason)
    if threshold.bytes is not None:
        return {"name": "step", "threshold_pkts": None, "threshold_bytes": threshold.bytes}
    return {"name": "step", "threshold_pkts": round(pkts), "threshold_bytes": None}


def _ns(duration: Duration | None) -> int | None:
    return None if duration is None else duration.ns


def resolve_loss(loss: float | GilbertElliott) -> dict[str, Any]:
    if isinstance(loss, GilbertElliott):
        return loss.model_dump()
    return {"model": "bernoulli", "p": loss} if loss > 0 else {"model": "none"}
