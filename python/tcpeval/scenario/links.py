"""Links: `[bottleneck]` and `[[link]]` tables, their queue disciplines and loss models, and
their resolution into the core's `links` entries (docs/contract.md, version 2)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import (
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from tcpeval.models import bdp_pkts
from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import (
    BufferField,
    LossProbability,
    NonNegativeTime,
    PositiveTime,
    Probability,
    RateField,
    Strict,
    UnitInterval,
)
from tcpeval.units import MAX_PACKETS, Buffer, Duration, parse_buffer, parse_duration

RED_MIN_TH_SHARE = 0.25
RED_MAX_TH_SHARE = 0.75


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

    @field_validator("target")
    @classmethod
    def _below_interval(cls, target: Duration, info: ValidationInfo) -> Duration:
        interval = info.data.get("interval")
        if interval is not None and target.ns >= interval.ns:
            raise ValueError(f"must be shorter than interval ({interval.given})")
        return target


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
    return f"<{name}>" if name in ("droptail", "red", "codel") else None


def _loss_tag(value: object) -> str | None:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "<probability>"
    model = value.get("model") if isinstance(value, dict) else getattr(value, "model", None)
    return "<gilbert_elliott>" if model == "gilbert_elliott" else None


Aqm = Annotated[
    Annotated[DropTail, Tag("<droptail>")]
    | Annotated[Red, Tag("<red>")]
    | Annotated[CoDel, Tag("<codel>")],
    Discriminator(
        _aqm_tag,
        custom_error_type="choice",
        custom_error_message="is not a supported AQM (allowed: droptail, red, codel)",
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
    aqm: Aqm = Field(
        default=DropTail(name="droptail"),
        description="'droptail', 'red', 'codel' or a table with name and parameters.",
    )
    loss: Loss = Field(
        default=0.0,
        description="Random loss of data: a probability in [0, 1) or a Gilbert-Elliott table.",
    )
    ack_loss: Loss = Field(
        default=0.0, description="Loss in the reverse direction (ACKs), same forms as loss."
    )


class NamedLink(Link):
    """A [[link]] table: a link of a multi-bottleneck topology."""

    name: str = Field(min_length=1, description="Unique name, used in routes. Required.")


@dataclass(frozen=True)
class Crossing:
    """What crosses a link: the largest base RTT of its flows (None if no flow crosses it) and
    the largest packet on the wire."""

    largest_rtt_s: float | None
    largest_packet_bytes: int


def resolve_link(field: str, name: str, link: Link, crossing: Crossing) -> dict[str, Any]:
    queue_pkts, queue_bytes = queue_limit(field, link, crossing)
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
    }


def queue_limit(field: str, link: Link, crossing: Crossing) -> tuple[int | None, int | None]:
    """The buffer as (packets, bytes), exactly one of them set.

    `%bdp` is taken of the largest base RTT of the flows crossing the link and counted in the
    largest packets, rounded to the nearest packet and never below one.
    """
    queue = link.queue
    if queue.bytes is not None and queue.bytes < crossing.largest_packet_bytes:
        reason = f"is smaller than one packet ({crossing.largest_packet_bytes} B with headers)"
        raise ScenarioError(f"{field}.queue", queue.given, reason)
    if queue.bdp_percent is None:
        return queue.pkts, queue.bytes
    pkts = _buffer_pkts(f"{field}.queue", queue, link, crossing)
    return round_pkts(pkts, f"{field}.queue", queue.given), None


def resolve_aqm(field: str, link: Link, crossing: Crossing, queue_pkts: float) -> dict[str, Any]:
    """The queue discipline; RED's thresholds in packets, by default 1/4 and 3/4 of the queue."""
    aqm = link.aqm
    if isinstance(aqm, CoDel):
        return {"name": "codel", "target_ns": aqm.target.ns, "interval_ns": aqm.interval.ns}
    if isinstance(aqm, DropTail):
        return {"name": "droptail"}

    def threshold(key: str, given: Buffer | None, share: float) -> float:
        if given is None:
            return share * queue_pkts
        return _buffer_pkts(f"{field}.{key}", given, link, crossing)

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
    }


def resolve_loss(loss: float | GilbertElliott) -> dict[str, Any]:
    if isinstance(loss, GilbertElliott):
        return loss.model_dump()
    return {"model": "bernoulli", "p": loss} if loss > 0 else {"model": "none"}


def _buffer_pkts(field: str, buffer: Buffer, link: Link, crossing: Crossing) -> float:
    """A queue length in (possibly fractional) packets of the largest size crossing the link."""
    if buffer.pkts is not None:
        return float(buffer.pkts)
    if buffer.bytes is not None:
        return buffer.bytes / crossing.largest_packet_bytes
    if crossing.largest_rtt_s is None or buffer.bdp_percent is None:
        reason = "is a share of the BDP, but no flow crosses this link (use pkt or bytes)"
        raise ScenarioError(field, buffer.given, reason)
    bdp = bdp_pkts(link.rate.bps, crossing.largest_rtt_s, crossing.largest_packet_bytes)
    return buffer.bdp_percent / 100 * bdp


def round_pkts(pkts: float, field: str, given: str) -> int:
    """A packet count rounded to the nearest packet, never below one; `field` and the value
    `given` there are named when the count is beyond MAX_PACKETS (a share of a huge BDP)."""
    if not pkts <= MAX_PACKETS:
        reason = f"is {pkts:.3g} packets on this path (at most {MAX_PACKETS:,})"
        raise ScenarioError(field, given, reason)
    return max(1, math.floor(pkts + 0.5))
