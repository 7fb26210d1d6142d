"""Queue disciplines of a link (`aqm`): each a table with the names and defaults `tc` gives it,
and each resolving itself into the core's dialect (docs/contract.md; crates/netem/src/spec.rs,
which builds them for the simulator and the lab alike).

Adding a discipline: its netem module and `AqmSpec` variant, and here its table with
`resolved`, listed in `Aqm`.
"""

from __future__ import annotations

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

from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import (
    BufferField,
    NonNegativeTime,
    PositiveTime,
    SizeField,
    Strict,
    UnitInterval,
)
from tcpeval.scenario.queue import Crossing, buffer_pkts
from tcpeval.units import Buffer, Duration, parse_duration, parse_size

RED_MIN_TH_SHARE = 0.25
RED_MAX_TH_SHARE = 0.75


@dataclass(frozen=True)
class AqmContext:
    """What a discipline needs of its link to resolve: where it is written (for errors), the
    link's rate, what crosses it, and its buffer in packets of the largest size."""

    field: str
    rate_bps: int
    crossing: Crossing
    queue_pkts: float

    def pkts(self, key: str, buffer: Buffer) -> float:
        """A length of this discipline's key `key` in packets of the largest size."""
        return buffer_pkts(f"{self.field}.{key}", buffer, self.rate_bps, self.crossing)


def _ns(duration: Duration | None) -> int | None:
    return None if duration is None else duration.ns


class _Discipline(Strict):
    """A queue discipline, written as its name alone or as a table with `name`."""

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: object) -> object:
        return {"name": value} if isinstance(value, str) else value


class DropTail(_Discipline):
    """Drop-tail: an arrival that finds the queue full is dropped. No parameters."""

    name: Literal["droptail"] = Field(description="Drop arrivals at a full queue.")

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        return {"name": "droptail"}


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

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        """Thresholds in packets, by default 1/4 and 3/4 of the queue."""
        min_th = (
            RED_MIN_TH_SHARE * at.queue_pkts
            if self.min_th is None
            else at.pkts("min_th", self.min_th)
        )
        max_th = (
            RED_MAX_TH_SHARE * at.queue_pkts
            if self.max_th is None
            else at.pkts("max_th", self.max_th)
        )
        if not min_th < max_th:
            given = f"{max_th:g}pkt" if self.max_th is None else self.max_th.given
            reason = f"must be above min_th ({min_th:g} pkt)"
            raise ScenarioError(f"{at.field}.max_th", given, reason)
        return {
            "name": "red",
            "min_th_pkts": min_th,
            "max_th_pkts": max_th,
            "max_p": self.max_p,
            "weight": self.weight,
            "gentle": self.gentle,
            "ecn": self.ecn,
            "harddrop": self.harddrop,
        }


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

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        return {
            "name": "codel",
            "target_ns": self.target.ns,
            "interval_ns": self.interval.ns,
            "ecn": self.ecn,
            "ce_threshold_ns": _ns(self.ce_threshold),
        }


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

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        return {
            "name": "pie",
            "target_ns": self.target.ns,
            "tupdate_ns": self.tupdate.ns,
            "alpha": self.alpha,
            "beta": self.beta,
            "max_burst_ns": self.max_burst.ns,
            "ecn": self.ecn,
            "mark_ecn_threshold": self.mark_ecn_threshold,
            "bytemode": self.bytemode,
        }


class Step(_Discipline):
    """DCTCP's marker (Alizadeh et al., SIGCOMM 2010 §3.1): an ECN-capable packet that finds more
    than `threshold` queued is marked CE; Not-ECT packets pass to the hard limit."""

    name: Literal["step"]
    threshold: BufferField = Field(
        description="K: packets ('65pkt'), bytes ('97KB') or a share of the BDP ('15%bdp'), "
        "below the queue limit. The DCTCP paper's rule for full throughput: K > C·RTT/7. "
        "Required."
    )

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        """K in packets (or bytes, as written), below the queue it marks."""
        pkts = at.pkts("threshold", self.threshold)
        if pkts >= at.queue_pkts:
            reason = f"is not below the queue ({at.queue_pkts:g} pkt): nothing would be marked"
            raise ScenarioError(f"{at.field}.threshold", self.threshold.given, reason)
        if self.threshold.bytes is not None:
            return {"name": "step", "threshold_pkts": None, "threshold_bytes": self.threshold.bytes}
        return {"name": "step", "threshold_pkts": round(pkts), "threshold_bytes": None}


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

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        return {
            "name": "fq_codel",
            "flows": self.flows,
            "quantum_bytes": self.quantum.bytes,
            "target_ns": self.target.ns,
            "interval_ns": self.interval.ns,
            "ecn": self.ecn,
            "ce_threshold_ns": _ns(self.ce_threshold),
            "drop_batch_pkts": self.drop_batch,
        }


class DualPi2(_Discipline):
    """DualPI2 (RFC 9332): an L queue for L4S traffic (ECT(1) and CE) with a shallow step
    marker, a classic queue under a PI2 controller, the two coupled (p_CL = k·p', p_C = p'²)
    and served by a time-shifted FIFO. Defaults as `tc dualpi2`. The summary gives each queue's
    sojourn (`bottleneck.sojourns`: `l`, `c`)."""

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

    def resolved(self, at: AqmContext) -> dict[str, Any]:
        return {
            "name": "dualpi2",
            "target_ns": self.target.ns,
            "tupdate_ns": self.tupdate.ns,
            "alpha": self.alpha,
            "beta": self.beta,
            "coupling_factor": self.coupling_factor,
            "step_threshold_ns": self.step_thresh.ns,
            "drop_overload": self.drop_overload,
        }


# The union's tags are written <like-this> so error paths can leave them out.


def _aqm_tag(value: object) -> str | None:
    name = value if isinstance(value, str) else None
    name = value.get("name") if isinstance(value, dict) else getattr(value, "name", name)
    return f"<{name}>" if name in AQM_NAMES else None


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
