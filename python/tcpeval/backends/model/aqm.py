"""The queue disciplines the models answer for beyond drop-tail (docs/methodology.md §4):

- a step marker (`aqm = "step"`) under DCTCP flows: the sawtooth of Alizadeh et al.,
  SIGCOMM 2010, §3.3 (`models.dctcp_cycle`);
- RED, marking (`ecn = true`) or dropping, under flows with a response function: the fixed
  point of Firoiu & Borden, INFOCOM 2000, where RED's probability at the mean queue and the
  flows' responses at that probability and RTT + queue/C fill the link.

Each function shares what the link has left among the flows that fill it, writes their
answers, and returns the link's mean queue and the model's figures. CoDel, PIE, FQ-CoDel and
DualPI2 have no model here (the backend refuses them).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tcpeval import models
from tcpeval.backends.model.flows import Answer, ModelFlow, no_model

DCTCP_LABEL = "link share (DCTCP: Alizadeh et al. 2010 §3.3)"
RED_LABEL = "RED equilibrium (Firoiu & Borden 2000)"
_BISECTIONS = 100  # halvings of a bracket: far below a packet, and cheap


@dataclass(frozen=True)
class DropTail:
    pass


@dataclass(frozen=True)
class StepMarker:
    """DCTCP's marker: an ECN-capable packet that finds more than K queued is marked."""

    threshold_pkts: float


@dataclass(frozen=True)
class RedQueue:
    """RED as resolved (scenario/links.py), thresholds in packets."""

    min_th: float
    max_th: float
    max_p: float
    gentle: bool
    ecn: bool

    @property
    def forced_from(self) -> float:
        """The mean queue from which every arrival is dropped (or marked)."""
        return 2 * self.max_th if self.gentle else self.max_th

    def probability(self, queue_pkts: float) -> float:
        """p_b at a mean queue (`models.red_probability`)."""
        return models.red_probability(queue_pkts, self.min_th, self.max_th, self.max_p, self.gentle)

    def signal(self, queue_pkts: float) -> float:
        """The share of packets marked or dropped at a mean queue: RED spaces its signals by
        the count since the last one, which doubles p_b while it is small
        (`models.red_signal_rate`)."""
        return models.red_signal_rate(self.probability(queue_pkts))


Discipline = DropTail | StepMarker | RedQueue


def discipline(aqm: dict[str, Any], packet_bytes: int) -> Discipline | None:
    """The resolved `aqm` as the models see it; None for one they have no model of. A step
    threshold given in bytes counts in packets of `packet_bytes` (the largest crossing)."""
    if aqm["name"] == "droptail":
        return DropTail()
    if aqm["name"] == "step":
        k = aqm["threshold_pkts"]
        return StepMarker(k if k is not None else aqm["threshold_bytes"] / packet_bytes)
    if aqm["name"] == "red":
        keys = ("min_th_pkts", "max_th_pkts", "max_p", "gentle", "ecn")
        return RedQueue(*(aqm[key] for key in keys))
    return None


def dctcp_share(
    flows: Sequence[ModelFlow],
    capacity_bps: float,
    queue_limit_pkts: float,
    step: StepMarker,
    answers: dict[int, Answer],
) -> tuple[float, dict[str, Any]]:
    """N DCTCP flows of one RTT (the backend refuses others) share the link equally at the
    utilization of their sawtooth (`models.dctcp_cycle`); the queue is marked, not dropped,
    as long as the sawtooth's peak K + N fits in the buffer."""
    others = sorted({f.stack.name for f in flows if f.stack.name != "dctcp"})
    if others:
        no_model(flows, answers, f"no model of {', '.join(others)} through a step marker")
        return math.nan, {}
    packet_bytes = max(f.packet_bytes for f in flows)
    bdp = models.bdp_pkts(capacity_bps, max(f.rtt_s for f in flows), packet_bytes)
    cycle = models.dctcp_cycle(bdp, step.threshold_pkts, len(flows))
    if cycle.q_max_pkts > queue_limit_pkts:
        reason = (
            f"the DCTCP sawtooth's peak K + N = {cycle.q_max_pkts:g} packets overflows the "
            f"queue ({queue_limit_pkts:g} packets): drops the model does not have"
        )
        no_model(flows, answers, reason)
        return math.nan, {}
    delay_s = cycle.mean_queue_pkts * 8 * packet_bytes / capacity_bps
    wire_each = capacity_bps * cycle.utilization / len(flows)
    for flow in flows:
        goodput = wire_each * flow.mss_bytes / flow.packet_bytes
        answers[flow.id] = Answer(
            goodput,
            DCTCP_LABEL,
            flow.rtt_s + delay_s,
            on_link=True,
            marked=cycle.alpha,
            dropped=0.0,
        )
    figures = {
        "model": DCTCP_LABEL,
        "w_star_pkts": cycle.w_star_pkts,
        "alpha": cycle.alpha,
        "amplitude_pkts": cycle.amplitude_pkts,
        "q_max_pkts": cycle.q_max_pkts,
        "q_min_pkts": cycle.q_min_pkts,
        # A packet of a flow below its share is marked while the queue is above K: the share
        # (Q_max − K)/A = N/A of the cycle.
        "marked_above_k": min(len(flows) / cycle.amplitude_pkts, 1.0),
    }
    return cycle.mean_queue_pkts, figures


def red_share(
    flows: Sequence[ModelFlow],
    capacity_bps: float,
    queue_limit_pkts: float,
    red: RedQueue,
    answers: dict[int, Answer],
) -> tuple[float, dict[str, Any]]:
    """The RED fixed point (Firoiu & Borden 2000): the mean queue q at which the flows'
    responses at RED's signal rate p(q) (`RedQueue.signal`: 2·p_b/(1 + p_b) of RED's
    p_b(q)), each at RTT + q/C, carry the link: Σ rate_i(p(q), RTT_i + q/C) = C. The sum
    falls as q grows, so q is found by bisection between min_th and the lower of the queue
    limit and the forced region.

    Where p(q) jumps (not-gentle RED at max_th) or the buffer's limit is reached first, the
    queue sits there and p is whatever fills the link at it: the signals beyond RED's early
    ones are the forced region's or the buffer's, and are counted as drops (`red_signals`).
    If the flows' own limits leave the link unfilled as p → 0, they keep those limits and
    no queue stands above min_th."""
    names = sorted({f.stack.name for f in flows if not f.stack.has_response})
    if names:
        no_model(flows, answers, f"no model of how {', '.join(names)} answers RED")
        return math.nan, {}
    packet_bits = 8 * max(f.packet_bytes for f in flows)

    def carried(p: float, queue_pkts: float) -> float:
        delay_s = queue_pkts * packet_bits / capacity_bps
        return sum(f.wire(_rate(f, p, delay_s)[0]) for f in flows)

    top = min(queue_limit_pkts, red.forced_from)
    if carried(0.0, red.min_th) <= capacity_bps:
        for flow in flows:
            rate, label = _rate(flow, 0.0, 0.0)
            answers[flow.id] = Answer(
                rate, label, flow.rtt_s, on_link=True, marked=0.0, dropped=0.0
            )
        return 0.0, {"model": RED_LABEL, "p": 0.0}
    if carried(red.signal(top), top) > capacity_bps:
        queue = top
    else:
        queue = _bisect(lambda q: carried(red.signal(q), q) > capacity_bps, red.min_th, top)
    if carried(1.0, queue) > capacity_bps:
        reason = "the flows overfill the link even with every packet signalled: windows of a "
        no_model(flows, answers, reason + "packet or two, whose timeouts no response models")
        return math.nan, {}
    # The p that fills the link at that queue: RED's own p(q) inside the ramp; where the queue
    # sits at a jump of p(q) or at the buffer's limit, whatever fills the link there.
    p = _bisect(lambda x: carried(x, queue) > capacity_bps, 0.0, 1.0)
    delay_s = queue * packet_bits / capacity_bps
    for flow in flows:
        rate, label = _rate(flow, p, delay_s)
        answer = Answer(rate, label, flow.rtt_s + delay_s, on_link=True)
        answers[flow.id] = red_signals(red, flow, answer, p, queue)
    return queue, {"model": RED_LABEL, "p": p, "p_b": red.probability(queue)}


def red_signals(red: RedQueue, flow: ModelFlow, answer: Answer, p: float, queue: float) -> Answer:
    """The flow's answer with RED's signals at the equilibrium: p in all, of which RED's
    early ones, p(q), are marks where RED marks (`ecn`) and the flow is ECN-capable. Those
    beyond (a full buffer's, or the forced region's where p(q) jumps) count as drops, as
    they are with `harddrop`; the simulator marks the forced region's without it."""
    marked = min(red.signal(queue), p) if red.ecn and flow.ecn_capable else 0.0
    return replace(answer, marked=marked, dropped=p - marked)


def _rate(flow: ModelFlow, p: float, delay_s: float) -> tuple[float, str]:
    """The flow's rate and what sets it at RED's probability p and the queueing delay: its
    response function at p (plus the path's random loss), or its own fixed limit if lower."""
    limits = dict(flow.limits_bps)
    if "window" in limits:  # a window's rate falls as the queue lengthens the RTT
        limits["window"] *= flow.rtt_s / (flow.rtt_s + delay_s)
    if p + flow.loss > 0:
        response = flow.loss_limit_bps(p + flow.loss, flow.rtt_s + delay_s)
        name = f"{RED_LABEL} at p = {p:.3g}" if p > 0 else flow.loss_label()
        limits[name] = math.inf if response is None else response
    if not limits:
        return math.inf, RED_LABEL
    name = min(limits, key=limits.__getitem__)
    return limits[name], name


def _bisect(too_low: Callable[[float], bool], low: float, high: float) -> float:
    """The point in [low, high] where `too_low` turns false (it is true below, false above)."""
    for _ in range(_BISECTIONS):
        middle = (low + high) / 2
        low, high = (middle, high) if too_low(middle) else (low, middle)
    return (low + high) / 2
