"""A flow as the models see it, its answer while a set of flows is active, and the shared
link's state then."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from tcpeval import models
from tcpeval.backends.model.stacks import Stack

NO_MODEL = "no model"


@dataclass(frozen=True)
class ModelFlow:
    """One flow as the models see it. Rates are payload bits per second."""

    id: int
    stack: Stack
    rtt_s: float
    mss_bytes: int
    loss: float
    """Random per-packet loss on the path (the link's, plus the receiver's 1-in-N drops)."""
    limits_bps: dict[str, float] = field(default_factory=dict)
    """Fixed limits by name: window, pacing, source rate, sink rate."""
    ecn_capable: bool = False
    """Its packets carry ECT (`flow.ecn` not "off"): a marking queue marks rather than drops."""

    @property
    def packet_bytes(self) -> int:
        return self.mss_bytes + models.HEADER_BYTES

    def wire(self, goodput_bps: float) -> float:
        """The link rate a goodput takes: payload plus headers."""
        return goodput_bps * self.packet_bytes / self.mss_bytes

    def loss_limit_bps(self, p: float, rtt_s: float) -> float | None:
        window = self.stack.response_window_pkts(p, rtt_s)
        return None if window is None else window * 8 * self.mss_bytes / rtt_s

    def loss_label(self) -> str:
        """What `limited_by` says of a rate set by the path's random loss."""
        return f"loss ({self.stack.response_formula()})"

    def own_limit(self) -> tuple[float, str] | None:
        """The lowest of the flow's own limits and its name; None when the flow has no limit
        of its own, or has random loss and no response function (it cannot be known)."""
        limits = dict(self.limits_bps)
        if self.loss > 0:
            by_loss = self.loss_limit_bps(self.loss, self.rtt_s)
            if by_loss is None:
                return None
            limits[self.loss_label()] = by_loss
        if not limits:
            return None
        name = min(limits, key=limits.__getitem__)
        return limits[name], name


@dataclass(frozen=True)
class Answer:
    goodput_bps: float | None
    limited_by: str
    rtt_s: float
    """Base RTT plus the mean queueing delay."""
    on_link: bool = False
    """True when the link's share, not a limit of its own, sets the rate."""
    marked: float | None = None
    """The share of the flow's packets a marking queue (step, RED with ecn) marks CE; None
    on a queue that marks nothing."""
    dropped: float | None = None
    """The share of its packets the queue discipline drops, where a model says (a marking
    queue's); None where none does (a drop-tail queue's overflows)."""


@dataclass(frozen=True)
class LinkState:
    utilization: float | None
    mean_queue_pkts: float | None
    figures: dict[str, Any] = field(default_factory=dict)
    """The queue model's own figures in this epoch (DCTCP's α and Q_min, RED's p, …)."""


def no_model(flows: Iterable[ModelFlow], answers: dict[int, Answer], reason: str) -> None:
    """Every flow of `flows` gets no rate, and `reason` as what limits it."""
    text = reason if reason.startswith(NO_MODEL) else f"{NO_MODEL}: {reason}"
    for flow in flows:
        answers[flow.id] = Answer(None, text, flow.rtt_s, on_link=True)
