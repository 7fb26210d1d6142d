"""Each limit's quantitative relation, tried against the measured rate (docs/diagnose.md,
"Verdicts").

A relation predicts the single stream's rate from one piece of evidence — the advertised
window over the RTT, the send buffer over the RTT, Mathis et al. at the loss and RTT TCP met,
the path's capacity, a core's saturation — and the residual says how far the measured rate is
from it. A relation holds when its residual is inside its band and its corroborating evidence
(the kernel's own accounting, or the pattern that names the cause) is there. Nothing here
ranks; `verdict.py` does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel

from tcpeval.diagnose.evidence import CpuEvidence, Evidence
from tcpeval.diagnose.idle import idle_restart
from tcpeval.diagnose.wording import mbps, size_text
from tcpeval.models import cubic_window_pkts, mathis_goodput_bps

Limit = Literal[
    "disk",
    "mtu_black_hole",
    "path_capacity",
    "policer",
    "cpu",
    "receiver_application",
    "window_scaling",
    "receiver_window",
    "send_buffer",
    "reordering",
    "path_loss",
    "idle_restart",
    "unexplained",
]


class Fit(BaseModel):
    """One relation tried: what it predicts, how far the measurement is, whether it holds."""

    limit: Limit
    # The relation with its figures, e.g. "advertised window / RTT = 79 KiB / 48.0 ms".
    relation: str
    predicted_bps: float | None
    measured_bps: float
    # measured / predicted − 1; None when the relation predicts no rate.
    residual: float | None
    holds: bool
    # Why it holds or not, in one line.
    reason: str
    # The residual over the edge of its band: 0 on the prediction, 1 at the band's edge.
    closeness: float
    # The pattern that names the cause was there (the rate alone may fit by chance).
    corroborated: bool = True


@dataclass(frozen=True)
class Band:
    """How far below and above its prediction a measured rate may be for a relation to hold."""

    below: float
    above: float

    def closeness(self, residual: float) -> float:
        if residual == 0:
            return 0.0
        edge = self.above if residual > 0 else self.below
        return abs(residual) / edge if edge > 0 else math.inf


# A window over the RTT is a ceiling: the sender cannot have more than a window in flight per
# round trip. It falls short by the time the window is not full (window updates follow the
# application's reads, every second segment is ACKed) — 35% covers it; 15% above covers the
# window's and the RTT's sampling.
WINDOW_BAND = Band(below=0.35, above=0.15)
# The send buffer holds the kernel's per-packet bookkeeping (skb truesize) and the unsent data
# besides the data in flight, and the writer is woken only when a third of it is free: a lab
# path with tcp_wmem capped at 64 KiB carried 0.6 of buffer / RTT.
SEND_BUFFER_BAND = Band(below=0.6, above=0.15)
# Mathis's constant is √(3/2) for periodic loss and one ACK per segment; delayed ACKs,
# random loss and a short test's slow-start losses move the rate by up to a factor of two.
LOSS_BAND = Band(below=0.5, above=1.0)
# A transfer fills the link at 90% of the UDP capacity (TCP/IP headers and the slow start
# inside a short test take a few percent).
CAPACITY_BAND = Band(below=0.1, above=0.1)
# TCP through a token bucket: each loss halves the window, so it averages between about half
# of the policed rate and the rate itself.
POLICER_BAND = Band(below=0.5, above=0.1)
# A thread or core at 90% of its ceiling is waiting on nothing but the CPU.
CPU_SATURATED = 0.9
CPU_BAND = Band(below=1 - CPU_SATURATED, above=0.0)

# The kernel's own accounting agrees that the receiver's window held the sender: it counts
# only the time the window was the sole reason (tcp_chrono), and delayed window updates make
# it under-count, so a quarter of the busy time is agreement.
RWND_HELD = 0.25
# A greedy sender held by its buffer: sndbuf-limited time plus samples with nothing left to
# send (the probe never stops writing, so an empty queue is the buffer's doing) this share.
SNDBUF_HELD = 0.5
# The window was closed (under two segments) in this share of the samples or more: the
# receiving application did not read.
CLOSED_SHARE = 0.1
# The largest window without scaling (RFC 7323 §2.2: the 16-bit field, unshifted).
UNSCALED_WINDOW_BYTES = 65_535
# Of the retransmissions, the share the receiver reported as duplicates (DSACK, RFC 2883):
# above half, the losses TCP reacted to were mostly reordering.
SPURIOUS_SHARE = 0.5
# Reordering events this share of the retransmissions or more: the path's reordering, not
# its drops, set them off.
REORDERED_SHARE = 0.1
# A path that drops large packets carries small ones: nearly all of the small train arrives
# (a receiver too starved to read loses both).
SMALL_ARRIVE = 0.9
# Losses without a queue: a policer drops without delaying, a drop-tail queue fills, and
# delays, before it drops. A train's one-way delay, and TCP's smoothed RTT over its minimum,
# rose by less than a tenth of the RTT (at least 2 ms: a loaded host's own jitter).
POLICER_QUEUE_MS = 2.0
UNQUEUED_SHARE = 0.1
# A paced train losing this share met a rate ceiling, not random loss.
POLICED_LOSS = 0.1


def fits(e: Evidence) -> list[Fit]:
    """Every relation the evidence allows, tried."""
    tried = [_disk(e), _mtu_black_hole(e), _path_capacity(e), _policer(e)]
    tried += [_cpu(e, c) for c in e.cpu]
    tried += [_receiver_window(e), _send_buffer(e), _loss(e), _reordering(e), _idle_restart(e)]
    return [fit for fit in tried if fit is not None]


def measured_bps(e: Evidence) -> float:
    """The rate each relation is held against: one stream's over the second half of its
    test (the windows and the RTT are the second half's too; the first holds slow start),
    on the wire."""
    return e.single.steady_wire_bps


def _fit(limit: Limit, relation: str, predicted: float, band: Band, e: Evidence) -> Fit:
    """A rate relation: holds when the residual is inside the band."""
    measured = measured_bps(e)
    residual = measured / predicted - 1 if predicted > 0 else math.inf
    closeness = band.closeness(residual)
    holds = closeness <= 1
    reason = f"measured {mbps(measured)} against {mbps(predicted)}: {residual:+.0%}" + (
        "" if holds else f", outside {-band.below:+.0%}..{band.above:+.0%}"
    )
    return Fit(
        limit=limit,
        relation=relation,
        predicted_bps=predicted,
        measured_bps=measured,
        residual=residual,
        holds=holds,
        reason=reason,
        closeness=closeness,
    )


def _pattern(limit: Limit, relation: str, holds: bool, reason: str, e: Evidence) -> Fit:
    """A relation no model turns into a rate: the pattern is the evidence, and it holds or
    not."""
    return Fit(
        limit=limit,
        relation=relation,
        predicted_bps=None,
        measured_bps=measured_bps(e),
        residual=None,
        holds=holds,
        reason=reason,
        closeness=0.0 if holds else math.inf,
    )


def _unless(fit: Fit, corroborated: bool, missing: str) -> Fit:
    """A rate that fits is not enough when the pattern naming the cause is absent."""
    if corroborated:
        return fit
    reason = f"{fit.reason}; but {missing}"
    return fit.model_copy(update={"holds": False, "reason": reason, "corroborated": False})


def _disk(e: Evidence) -> Fit | None:
    """A disk-to-disk transfer goes at the slower of the network and the disks."""
    if not e.disks:
        return None
    slowest = min(e.disks, key=lambda d: d.transfer_bps)
    network = max(e.single.goodput_bps, e.multi.goodput_bps)
    action = "reads" if slowest.end == "client" else "writes"
    holds = slowest.transfer_bps < (1 - CAPACITY_BAND.below) * network
    return Fit(
        limit="disk",
        relation=f"disk-to-disk ≈ the {slowest.end}'s {slowest.path} {action} at "
        f"{mbps(slowest.transfer_bps)}",
        predicted_bps=slowest.transfer_bps,
        measured_bps=network,
        residual=network / slowest.transfer_bps - 1 if slowest.transfer_bps else None,
        holds=holds,
        reason=f"the network carries {mbps(network)}"
        + (", more than the disk" if holds else ", no more than the disk"),
        closeness=0.0 if holds else math.inf,
    )


def _mtu_black_hole(e: Evidence) -> Fit | None:
    """Full-size datagrams vanish while small ones arrive: packets above a size are dropped
    with no ICMP "fragmentation needed" to say so (RFC 2923 §2.1)."""
    small = e.path.small_train
    if small is None:
        return None
    holds = e.path.burst_received == 0 and small.received >= SMALL_ARRIVE * small.sent
    relation = (
        f"{e.path.burst_datagram_bytes} B datagrams: {e.path.burst_received} of "
        f"{e.path.burst_sent} arrive; {small.size_bytes} B: {small.received} of {small.sent}"
    )
    reason = "large packets are lost, small ones are not" if holds else "small ones are lost too"
    return _pattern("mtu_black_hole", relation, holds, reason, e)


def _path_capacity(e: Evidence) -> Fit | None:
    """Only against a capacity the UDP train measured: TCP's own best is no proof that the
    link was full."""
    if not e.path.capacity_known:
        return None
    relation = f"one stream ≈ the path's capacity, {mbps(e.path.capacity_bps)} (UDP train)"
    return _fit("path_capacity", relation, e.path.capacity_bps, CAPACITY_BAND, e)


def _policer(e: Evidence) -> Fit | None:
    """A token bucket drops what exceeds its rate without queueing it. Its rate is what a
    train paced faster than it got through (when the paced train lost a share no random
    loss would), else the kernel's delivery rate while the window is full; TCP through it
    loses packets with no queueing delay, in runs at the bucket's edge — far fewer
    congestion events than lost packets, so it goes well above Mathis at its loss rate."""
    s, p = e.single, e.path
    if s.retransmits == 0 or s.srtt_ms <= 0:
        return None
    paced = p.udp_loss >= POLICED_LOSS and _unqueued(p.paced_owd_variation_ns, s.min_rtt_ms)
    rate = p.paced_rate_bps if paced else s.delivery_rate_p90_bps
    source = "the paced UDP train" if paced else "TCP's delivery rate, 90th percentile"
    queueing_ms = s.srtt_ms - s.min_rtt_ms
    relation = (
        f"one stream ≈ the policed rate, {mbps(rate)} ({source}); {s.loss_rate:.1%} of "
        f"segments lost with {queueing_ms:.1f} ms of queueing"
    )
    fit = _fit("policer", relation, rate, POLICER_BAND, e)
    mathis = mathis_goodput_bps(s.mss_bytes, s.srtt_ms / 1e3, s.loss_rate) * s.wire_share
    bursty = measured_bps(e) > (1 + LOSS_BAND.above) * mathis
    return _unless(
        fit,
        queueing_ms < UNQUEUED_SHARE * s.min_rtt_ms and (paced or bursty) and not _reordered(e),
        "not losses without queueing or reordering at a rate ceiling (a queue delays before "
        "it drops, random loss follows Mathis, a bucket keeps the order)",
    )


def _unqueued(owd_variation_ns: int | None, min_rtt_ms: float) -> bool:
    if owd_variation_ns is None:
        return False
    return owd_variation_ns / 1e6 < max(POLICER_QUEUE_MS, UNQUEUED_SHARE * min_rtt_ms)


def _cpu(e: Evidence, c: CpuEvidence) -> Fit:
    """A core the transfer's own work saturates: its busiest thread running (or runnable),
    its cgroup's quota used up, or the core's softirq (the kernel's receive work). The rate
    the CPU allows is the measured one over that saturation."""
    saturation, what = c.saturation()
    # A quota's accounting can say a little over all of it: saturated is saturated.
    saturation = min(saturation, 1.0)
    relation = f"the {c.role}'s ({c.end}) CPU: {what} at {saturation:.0%}"
    predicted = measured_bps(e) / max(saturation, 1e-6)
    fit = _fit("cpu", relation, predicted, CPU_BAND, e)
    return fit.model_copy(update={"reason": f"{what} at {saturation:.0%} of its ceiling"})


def _receiver_window(e: Evidence) -> Fit:
    """The receiver's advertised window over the RTT; the cause named from the pattern: a
    window closed again and again is an application that does not read (its rate is the
    application's, whatever the window when open), one never above 64 KiB with no scaling
    negotiated is the window scale, otherwise the receive buffer."""
    s = e.single
    window = s.advertised_window_mean_bytes
    relation = f"advertised window / RTT = {size_text(window)} / {s.srtt_ms:.1f} ms"
    if s.zero_window >= CLOSED_SHARE:
        return _receiver_application(e)
    predicted = window * 8 / (s.srtt_ms / 1e3) if s.srtt_ms > 0 else 0.0
    limit: Limit = "receiver_window"
    if s.window_scale == 0 and window <= UNSCALED_WINDOW_BYTES:
        limit = "window_scaling"
        relation += ", no window scaling negotiated"
    fit = _fit(limit, relation, predicted, WINDOW_BAND, e)
    return _unless(
        fit,
        s.rwnd_limited >= RWND_HELD,
        f"the kernel says the window held the sender only {s.rwnd_limited:.0%} of its busy time",
    )


def _receiver_application(e: Evidence) -> Fit:
    """A receive buffer the application leaves full: the window closes and the sender waits
    until the application reads. The rate is the application's; no window predicts it."""
    s = e.single
    holds = s.rwnd_limited >= RWND_HELD
    relation = (
        f"the advertised window closed (under two segments) in {s.zero_window:.0%} of the "
        "samples: the receiving application left its buffer full"
    )
    reason = f"rwnd-limited {s.rwnd_limited:.0%} of the sender's busy time"
    return _pattern("receiver_application", relation, holds, reason, e)


def _send_buffer(e: Evidence) -> Fit | None:
    s = e.single
    held = min(1.0, s.sndbuf_limited + s.app_limited)
    if s.send_buffer_bytes is None:
        return None
    relation = f"send buffer / RTT = {size_text(s.send_buffer_bytes)} / {s.srtt_ms:.1f} ms"
    predicted = s.send_buffer_bytes * 8 / (s.srtt_ms / 1e3) if s.srtt_ms > 0 else 0.0
    fit = _fit("send_buffer", relation, predicted, SEND_BUFFER_BAND, e)
    return _unless(
        fit,
        s.sndbuf_limited > 0 and held >= SNDBUF_HELD,
        f"the buffer held the sender only {held:.0%} of the time",
    )


def _loss(e: Evidence) -> Fit | None:
    """The congestion window against the losses TCP met: Mathis et al. (or CUBIC's response
    function, RFC 9438 §5.2, where it is above Reno's) at the measured loss and RTT. When most
    retransmissions were spurious (DSACK), the "losses" were reordering (`_reordering`)."""
    s = e.single
    if s.retransmits == 0 or s.loss_rate <= 0 or _reordered(e):
        return None
    rtt_s = s.srtt_ms / 1e3
    predicted = mathis_goodput_bps(s.mss_bytes, rtt_s, s.loss_rate)
    model = "Mathis"
    if s.cc == "cubic":
        cubic = cubic_window_pkts(s.loss_rate, rtt_s) * s.mss_bytes * 8 / rtt_s
        if cubic > predicted:
            predicted, model = cubic, "CUBIC's response function"
    relation = f"{model} at {s.loss_rate:.1e} loss and {s.srtt_ms:.1f} ms = {mbps(predicted)}"
    return _fit("path_loss", relation, predicted * s.wire_share, LOSS_BAND, e)


def _mostly_spurious(e: Evidence) -> bool:
    spurious = e.single.spurious_share
    return spurious is not None and spurious >= SPURIOUS_SHARE


def _reordered(e: Evidence) -> bool:
    """The path reorders enough to matter: most retransmissions spurious, or reordering
    events a sizeable share of the retransmissions (a policer or a queue drops in order)."""
    s = e.single
    return _mostly_spurious(e) or (s.reord_seen or 0) >= REORDERED_SHARE * s.retransmits


def _reordering(e: Evidence) -> Fit | None:
    """Retransmissions on a path the sender saw reorder — spurious ones the receiver
    reported (DSACK, RFC 2883), or reordering events as common as a tenth of them: each cut
    the window before a DSACK could undo it (RFC 8985 §6.2 widens the reordering window only
    then). No model gives the rate this leaves; the pattern is the relation, and one stream
    falling short of what N streams together get says the limit is the connection's, not
    the path's."""
    s = e.single
    if s.retransmits == 0 or not s.reord_seen:
        return None
    best = max(e.path.capacity_bps, e.multi.wire_bps)
    holds = _reordered(e) and measured_bps(e) < (1 - CAPACITY_BAND.below) * best
    relation = (
        f"{s.dsack_dups or 0} of {s.retransmits} retransmissions spurious (DSACK), "
        f"{s.reord_seen} reordering events seen"
    )
    reason = f"one stream {mbps(measured_bps(e))} against {mbps(best)} for the path"
    return _pattern("reordering", relation, holds, reason, e)


def _idle_restart(e: Evidence) -> Fit | None:
    """Responses after idle gaps against slow start from the restarted window (idle.py):
    the rate a response gets, measured after idle and predicted from the restart."""
    idle = e.idle
    if idle is None or idle.after_idle_ms is None or idle.warm_ms is None:
        return None
    finding = idle_restart(idle)
    predicted_ms = idle.warm_ms + idle.restart_cost_predicted_ms
    bits = idle.response_bytes * 8
    measured, predicted = bits / (idle.after_idle_ms / 1e3), bits / (predicted_ms / 1e3)
    residual = measured / predicted - 1
    return Fit(
        limit="idle_restart",
        relation=f"a {idle.response_bytes} B response after idle ≈ back to back "
        f"({idle.warm_ms:.0f} ms) plus slow start from the restarted window "
        f"({idle.restart_cost_predicted_ms:.0f} ms)",
        predicted_bps=predicted,
        measured_bps=measured,
        residual=residual,
        holds=finding.holds,
        reason=finding.headline,
        closeness=0.0 if finding.holds else math.inf,
        corroborated=idle.cwnd_after_idle_pkts is not None,
    )
