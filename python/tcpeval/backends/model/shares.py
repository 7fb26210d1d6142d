"""The rate of every flow while a set of flows is active: each flow takes the lowest of its
own limits (window/RTT, pacing, application rates, its response function at the loss it
sees) unless the shared link cannot carry that; the link's capacity is filled from the
smallest demand up (max-min fairness), and the flows that are left share what remains as
their stacks do behind the link's queue: a drop-tail sawtooth, DCTCP's sawtooth under a step
marker, or RED's equilibrium (`aqm`).

Flows the models cannot answer (a loss rate and no response function; a delay- or rate-based
stack filling the link) get no rate, and so do the flows whose share would depend on theirs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from tcpeval import models
from tcpeval.backends.model.aqm import (
    Discipline,
    DropTail,
    RedQueue,
    StepMarker,
    dctcp_share,
    red_share,
    red_signals,
)
from tcpeval.backends.model.flows import NO_MODEL, Answer, LinkState, ModelFlow, no_model


def share(
    flows: Sequence[ModelFlow],
    rate_bps: float,
    queue_pkts: float,
    background_bps: float,
    aqm: Discipline | None = None,
) -> tuple[dict[int, Answer], LinkState]:
    """Every active flow's answer and the link's state, for a link of `rate_bps` with a
    queue of `queue_pkts` under `aqm` (drop-tail by default) carrying `background_bps` of
    traffic without congestion control."""
    aqm = aqm or DropTail()
    answers: dict[int, Answer] = {}
    capacity = max(rate_bps - background_bps, 0.0)
    # RED's probability reaches every flow, however small: a flow with a response function
    # takes the lower of its own limits and its response at RED's p (`red_share`).
    responsive = [f for f in flows if isinstance(aqm, RedQueue) and f.stack.has_response]
    first = {f.id for f in responsive}
    waiting = sorted((f for f in flows if f.id not in first), key=lambda f: _demand(f))
    while waiting:
        flow = waiting[0]
        limit = flow.own_limit()
        if limit is None or not _fits(flow, limit[0], capacity / (len(waiting) + len(responsive))):
            break  # this flow, and every one after it, wants more than an equal share
        answers[flow.id] = Answer(limit[0], limit[1], flow.rtt_s)
        capacity -= flow.wire(limit[0])
        waiting.pop(0)
    waiting += responsive
    queue, figures = 0.0, dict[str, Any]()
    if waiting:
        queue, figures = _share_link(waiting, capacity, queue_pkts, aqm, answers)
    _signal_the_limited(flows, waiting, aqm, queue, figures, answers)
    known = all(answers[f.id].goodput_bps is not None for f in flows)
    used = background_bps + sum(f.wire(answers[f.id].goodput_bps or 0.0) for f in flows)
    return answers, LinkState(
        utilization=min(used / rate_bps, 1.0) if known else None,  # `_fits`' slack
        mean_queue_pkts=queue if known else None,
        figures=figures,
    )


def _signal_the_limited(
    flows: Sequence[ModelFlow],
    waiting: list[ModelFlow],
    aqm: Discipline,
    queue: float,
    figures: dict[str, Any],
    answers: dict[int, Answer],
) -> None:
    """The marks and drops a marking queue gives the flows held by a limit of their own: RED
    signals every packet at its p; a step marker marks an ECN-capable packet while the queue
    is above K. Without flows filling the link the queue stays below RED's min_th or K.

    Not-ECT flows filling a step marker's queue hold it far above K: its marks would cut an
    ECN-capable flow below its own limit by an amount no model here gives."""
    marked_above_k = figures.get("marked_above_k", 0.0)
    p = figures.get("p", 0.0)
    on_link = {f.id for f in waiting}
    for flow in flows:
        if flow.id in on_link or answers[flow.id].goodput_bps is None:
            continue
        answer = answers[flow.id]
        if isinstance(aqm, RedQueue):
            answers[flow.id] = red_signals(aqm, flow, answer, p, queue)
        elif isinstance(aqm, StepMarker) and ("marked_above_k" in figures or not waiting):
            marked = marked_above_k if flow.ecn_capable else 0.0
            answers[flow.id] = replace(answer, marked=marked, dropped=0.0)
        elif isinstance(aqm, StepMarker) and flow.ecn_capable:
            # The others' shares hang on what is left of this flow's: none is known.
            reason = "an ECN-capable flow marked by a step marker whose queue Not-ECT flows fill"
            no_model(flows, answers, reason)
            return


def _fits(flow: ModelFlow, limit_bps: float, wire_share_bps: float) -> bool:
    """Whether a flow's own limit fits in its share of the link. A window is a whole number of
    packets, so one of "100%bdp" can exceed the pipe by a fraction of a packet (16,667 packets
    at 1 Gb/s × 200 ms, where the pipe holds 16,666.7): within one packet per RTT of the share,
    the flow keeps the queue all but empty and its own limit, not the link, shapes its rate
    (after a loss its window regrows rather than the link staying full)."""
    one_packet_per_rtt_bps = 8 * flow.packet_bytes / flow.rtt_s
    return flow.wire(limit_bps) <= wire_share_bps + one_packet_per_rtt_bps


def _demand(flow: ModelFlow) -> float:
    """Sort key: the flow's own limit on the wire; flows without one come last."""
    limit = flow.own_limit()
    return math.inf if limit is None else flow.wire(limit[0])


def _share_link(
    flows: list[ModelFlow],
    capacity_bps: float,
    queue_pkts: float,
    aqm: Discipline,
    answers: dict[int, Answer],
) -> tuple[float, dict[str, Any]]:
    """Share what the link has left among the flows that fill it; returns the mean queue and
    the queue model's figures."""
    if capacity_bps <= 0:
        for flow in flows:
            answers[flow.id] = Answer(0.0, "link share (none left)", flow.rtt_s, on_link=True)
        return 0.0, {}
    if any(f.loss > 0 and not f.stack.has_response for f in flows):
        no_model(flows, answers, "shares the link with a flow the models cannot answer")
        return math.nan, {}
    if isinstance(aqm, RedQueue):
        return red_share(flows, capacity_bps, queue_pkts, aqm, answers)
    # Packets without ECT pass a step marker to the hard limit: for them it is drop-tail.
    if isinstance(aqm, StepMarker) and any(f.ecn_capable for f in flows):
        return dctcp_share(flows, capacity_bps, queue_pkts, aqm, answers)
    return _droptail_share(flows, capacity_bps, queue_pkts, answers), {}


def _droptail_share(
    flows: list[ModelFlow], capacity_bps: float, queue_pkts: float, answers: dict[int, Answer]
) -> float:
    """The flows' sawtooth of their back-off behind a drop-tail queue; returns its mean."""
    bdp = _bdp_pkts(flows, capacity_bps)
    betas = [f.stack.backoff(bdp, queue_pkts) for f in flows]
    known_betas = [b for b in betas if b is not None]
    if len(known_betas) < len(betas):
        names = sorted({f.stack.name for f, b in zip(flows, betas, strict=True) if b is None})
        no_model(flows, answers, f"no model of how {', '.join(names)} fills a link")
        return math.nan
    beta = sum(known_betas) / len(known_betas)
    carried = capacity_bps * models.sawtooth_utilization(bdp, queue_pkts, beta)
    queue = models.sawtooth_mean_queue_pkts(bdp, queue_pkts, beta)
    packet_bits = 8 * max(f.packet_bytes for f in flows)
    delay_s = queue * packet_bits / capacity_bps if capacity_bps > 0 else 0.0
    rates = _split(flows, carried, delay_s)
    for flow in flows:
        rate = rates.get(flow.id)
        label = "link share" if rate is not None else f"{NO_MODEL}: unequal flows, no common model"
        answers[flow.id] = Answer(rate, label, flow.rtt_s + delay_s, on_link=True)
    return queue


def _split(flows: list[ModelFlow], carried_bps: float, delay_s: float) -> dict[int, float]:
    """Equal shares of the wire among identical flows; otherwise the shares that the flows'
    response functions give at one common loss rate (each flow sees the same drop-tail
    losses); empty when neither applies."""
    first = flows[0]
    alike = (first.stack, first.rtt_s, first.mss_bytes, first.loss)
    same = all((f.stack, f.rtt_s, f.mss_bytes, f.loss) == alike for f in flows)
    if same:
        wire_each = carried_bps / len(flows)
        return {f.id: wire_each * f.mss_bytes / f.packet_bytes for f in flows}
    if not all(f.stack.has_response for f in flows):
        return {}
    p = _common_loss(flows, carried_bps, delay_s)
    return {f.id: f.loss_limit_bps(p + f.loss, f.rtt_s + delay_s) or 0.0 for f in flows}


def _common_loss(flows: list[ModelFlow], carried_bps: float, delay_s: float) -> float:
    """The loss rate at which the flows' response functions together carry `carried_bps`:
    bisection on log p (each response falls as p grows)."""

    def wire_at(p: float) -> float:
        return sum(f.wire(f.loss_limit_bps(p + f.loss, f.rtt_s + delay_s) or 0.0) for f in flows)

    low, high = math.log(1e-15), math.log(0.5)
    for _ in range(200):
        middle = (low + high) / 2
        low, high = (middle, high) if wire_at(math.exp(middle)) > carried_bps else (low, middle)
    return math.exp(high)


def _bdp_pkts(flows: list[ModelFlow], capacity_bps: float) -> float:
    """The pipe the flows fill, in packets: at the largest RTT and packet among them."""
    rtt_s = max(f.rtt_s for f in flows)
    return models.bdp_pkts(capacity_bps, rtt_s, max(f.packet_bytes for f in flows))
