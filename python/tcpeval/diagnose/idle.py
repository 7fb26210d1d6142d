"""Slow start after idle in request-response traffic (docs/diagnose.md, "Slow start after
idle"): a few responses on one connection, back to back and then after idle gaps longer than
the server's retransmission timeout, each timed by the client, with the congestion window the
server (the sender of responses) started each one from.

An idle gap longer than the RTO restarts slow start (RFC 5681 §4.1; RFC 2861 §3 lets the
window decay instead: Linux halves it once per RTO idle, down to the restart window, while
`net.ipv4.tcp_slow_start_after_idle` is 1, its default). A response that needs more than the
restarted window then takes several round trips where a warm window takes one. The measured
times stand beside the arithmetic: one RTT plus size / capacity for a warm window, slow start
from the restart window (RFC 6928's initial window) for a full restart, and slow start from
the window the server was seen to start from.
"""

from __future__ import annotations

import math
import statistics
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import BaseModel

from tcpeval.probe.driver import run_rr
from tcpeval.probe.settings import RrSettings
from tcpeval.result import Result

if TYPE_CHECKING:
    from tcpeval.diagnose.measure import Target

# The first response starts a new connection's slow start; the next ones, back to back, find
# the windows it grew (the requester's receive window grows with what it reads, so a few);
# the last ones follow an idle gap each.
WARM_RESPONSES = 3
IDLE_RESPONSES = 3
REQUEST_BYTES = 64
# Linux's RTO is the smoothed RTT plus at least tcp_rto_min, 200 ms (`__tcp_set_rto`); RFC
# 6298 §2.4 asks for at least 1 s. Gaps of twice Linux's least RTO, and at least 1 s, idle
# a connection past its RTO on either kind of stack while keeping the step to a few seconds.
LINUX_MIN_RTO_S = 0.2
MIN_IDLE_GAP_S = 1.0
# RFC 6928 §2: IW = min(10·MSS, max(2·MSS, 14600 bytes)).
IW_MAX_SEGMENTS = 10
IW_BYTES = 14600
DEFAULT_MSS_BYTES = 1448
# A restart costs whole round trips; a response after idle slower than back-to-back ones by
# half an RTT or more is past the jitter of a quiet path and below the least it can cost.
COST_RTTS = 0.5
# Linux halves the window at least once in a restart (`tcp_cwnd_restart`), unless it was
# already at the restart window.
SHRUNK = 0.5


class IdleEvidence(BaseModel):
    """The request-response step's figures; times in ms, medians over each kind of response."""

    response_bytes: int
    mss_bytes: int
    # The path's minimum RTT (single-stream TCP test) and capacity the predictions use.
    rtt_ms: float
    capacity_bps: float
    idle_gap_ms: float
    # The largest RTO the server's socket had at the start of a response (None: not reported).
    server_rto_ms: float | None
    initial_window_pkts: int
    # The first response on the new connection, the back-to-back ones, the ones after idle.
    first_ms: float | None
    warm_ms: float | None
    after_idle_ms: float | None
    # Predictions: a warm window (one RTT plus size / capacity), slow start from the initial
    # window (a full restart), and slow start from the window the server was seen to start
    # the responses after idle from.
    warm_predicted_ms: float
    restart_predicted_ms: float
    after_idle_predicted_ms: float | None
    # What the restart should add to a response: slow start from the window seen after idle
    # (the initial window when not reported) less the warm window's time.
    restart_cost_predicted_ms: float
    # The server's congestion window at the start of the back-to-back responses and of the
    # ones after idle (None: the server did not report it).
    cwnd_warm_pkts: int | None
    cwnd_after_idle_pkts: int | None
    # The least window the requester advertised at the start of a response (None: not
    # reported): a response larger than it waits on the requester's reads too.
    requester_window_bytes: int | None
    notes: list[str]


class IdleFinding(NamedTuple):
    """Whether slow start after idle slows the responses, in a verdict's words."""

    holds: bool
    headline: str
    evidence: list[str]
    advice: list[str]


def idle_gap_s(rtt_s: float) -> float:
    return max(MIN_IDLE_GAP_S, 2 * (rtt_s + LINUX_MIN_RTO_S))


def exchange_plan_ns(rtt_s: float) -> list[int]:
    """The client's think time before each request: none for the first and the warm ones,
    an idle gap before each of the rest."""
    gap_ns = round(idle_gap_s(rtt_s) * 1e9)
    return [0] * (1 + WARM_RESPONSES) + [gap_ns] * IDLE_RESPONSES


def initial_window_pkts(mss_bytes: int) -> int:
    """RFC 6928 §2's initial window, in segments of `mss_bytes`."""
    iw_bytes = min(IW_MAX_SEGMENTS * mss_bytes, max(2 * mss_bytes, IW_BYTES))
    return max(1, iw_bytes // mss_bytes)


def completion_s(
    response_bytes: int, mss_bytes: int, start_cwnd_pkts: float, rtt_s: float, capacity_bps: float
) -> float:
    """Time from sending the request to the last byte of the response: the request's trip and
    the response's (one RTT), a round trip for each round of slow start from
    `start_cwnd_pkts` until the window holds what is left or fills the path, and what is left
    at the capacity. Linux grows the window by each segment acknowledged in slow start
    (RFC 5681 §3.1, RFC 3465), so it doubles every round trip, delayed ACKs or not."""
    segments = math.ceil(response_bytes / mss_bytes)
    path_pkts = capacity_bps * rtt_s / (8 * mss_bytes)
    sent, window, rounds = 0.0, max(1.0, start_cwnd_pkts), 0
    while segments - sent > window and window < path_pkts:
        sent += window
        window *= 2
        rounds += 1
    left_bytes = max(0.0, response_bytes - sent * mss_bytes)
    return (rounds + 1) * rtt_s + left_bytes * 8 / capacity_bps


def min_rtt_s(result: Result) -> float:
    """The least RTT any stream of a TCP test saw: the path's, without queueing."""
    return float(result.flows.groupby("flow").last()["min_rtt_ms"].min()) / 1e3


def measure_idle(
    target: Target, response_bytes: int, rtt_s: float, capacity_bps: float, out: Path
) -> IdleEvidence:
    """Runs the exchanges against `target` (raw report in `out/requests/rr.json`), with gaps
    sized from the path's RTT; the predictions use `rtt_s` and `capacity_bps`."""
    plan = exchange_plan_ns(rtt_s)
    settings = RrSettings(
        server=target.server,
        secret_file=target.secret_file,
        request=f"{REQUEST_BYTES}B",
        response=f"{response_bytes}B",
        count=len(plan),
        think=",".join(f"{ns}ns" for ns in plan),
    )
    report = run_rr(settings, out / "requests", target.wrapper)
    return idle_evidence(report, response_bytes, rtt_s, capacity_bps)


def idle_evidence(
    report: dict[str, Any], response_bytes: int, rtt_s: float, capacity_bps: float
) -> IdleEvidence:
    """The figures of an `rr` report made with `exchange_plan_ns(rtt_s)`."""
    exchanges = report["exchanges"]
    first = [e for e in exchanges if e["index"] == 0]
    warm = [e for e in exchanges if e["index"] > 0 and e["think_ns"] == 0]
    after_idle = [e for e in exchanges if e["think_ns"] > 0]
    mss = _median_of(exchanges, "mss_bytes") or DEFAULT_MSS_BYTES
    iw = initial_window_pkts(mss)
    cwnd_after_idle = _median_of(after_idle, "cwnd_at_start_pkts")
    rto_us = [e["rto_at_start_us"] for e in exchanges if e.get("rto_at_start_us")]

    def predicted_ms(start_cwnd_pkts: float) -> float:
        return completion_s(response_bytes, mss, start_cwnd_pkts, rtt_s, capacity_bps) * 1e3

    restart_ms = predicted_ms(iw if cwnd_after_idle is None else cwnd_after_idle)
    windows = [e["window_at_start_bytes"] for e in exchanges[1:] if e.get("window_at_start_bytes")]
    notes = list(report.get("warnings", []))
    if len(after_idle) < IDLE_RESPONSES:
        notes.append(f"{len(after_idle)} of {IDLE_RESPONSES} responses after idle completed")
    if windows and min(windows) < response_bytes:
        notes.append(
            f"the requester's receive window ({min(windows) / 1e3:.0f} kB) was smaller than "
            "the response at times: those responses waited on its reads too"
        )
    return IdleEvidence(
        response_bytes=response_bytes,
        mss_bytes=mss,
        rtt_ms=rtt_s * 1e3,
        capacity_bps=capacity_bps,
        idle_gap_ms=idle_gap_s(rtt_s) * 1e3,
        server_rto_ms=max(rto_us) / 1e3 if rto_us else None,
        initial_window_pkts=iw,
        first_ms=_latency_ms(first),
        warm_ms=_latency_ms(warm),
        after_idle_ms=_latency_ms(after_idle),
        warm_predicted_ms=predicted_ms(math.inf),
        restart_predicted_ms=predicted_ms(iw),
        after_idle_predicted_ms=None if cwnd_after_idle is None else restart_ms,
        restart_cost_predicted_ms=restart_ms - predicted_ms(math.inf),
        cwnd_warm_pkts=_median_of(warm, "cwnd_at_start_pkts"),
        cwnd_after_idle_pkts=cwnd_after_idle,
        requester_window_bytes=min(windows) if windows else None,
        notes=notes,
    )


def _latency_ms(exchanges: list[dict[str, Any]]) -> float | None:
    if not exchanges:
        return None
    return statistics.median(e["latency_ns"] for e in exchanges) / 1e6


def _median_of(exchanges: list[dict[str, Any]], key: str) -> int | None:
    values = [e[key] for e in exchanges if e.get(key) is not None]
    return round(statistics.median(values)) if values else None


def idle_restart(e: IdleEvidence) -> IdleFinding:
    """Holds when the server's window shrank across the idle gaps (when it reported it), slow
    start from there costs a response half an RTT or more, and the responses after idle were
    slower than back-to-back ones by at least half of that cost: closer to the restart's
    arithmetic than to no restart at all."""
    if e.warm_ms is None or e.after_idle_ms is None:
        return IdleFinding(False, _unmeasured(e), [], [])
    cost_ms = e.after_idle_ms - e.warm_ms
    predicted_ms = e.restart_cost_predicted_ms
    size = _size(e.response_bytes)
    if e.server_rto_ms is not None and e.idle_gap_ms <= e.server_rto_ms:
        headline = (
            f"no slow start after idle: the idle gaps ({e.idle_gap_ms:.0f} ms) were not longer "
            f"than the server's RTO ({e.server_rto_ms:.0f} ms), so no restart was due"
        )
    elif not _window_shrank(e):
        headline = (
            f"no slow start after idle: the server's window did not shrink across the gaps "
            f"({e.cwnd_warm_pkts} → {e.cwnd_after_idle_pkts} packets); {size} responses took "
            f"{e.after_idle_ms:.0f} ms after idle, {e.warm_ms:.0f} ms back to back"
        )
    elif predicted_ms < COST_RTTS * e.rtt_ms:
        headline = (
            f"no cost from slow start after idle: a {size} response fits in the restarted "
            f"window ({e.cwnd_after_idle_pkts or e.initial_window_pkts} packets)"
        )
    elif cost_ms < predicted_ms / 2:
        headline = (
            f"no slow start after idle seen: it should add {predicted_ms:.0f} ms to a {size} "
            f"response; responses after idle took {cost_ms:+.0f} ms against back-to-back ones"
        )
    else:
        residual = abs(cost_ms - predicted_ms) / e.after_idle_ms
        headline = (
            f"slow start after idle: a {size} response after {e.idle_gap_ms / 1e3:.1f} s idle "
            f"took {e.after_idle_ms:.0f} ms, {cost_ms:.0f} ms ({cost_ms / e.rtt_ms:.1f} RTTs) "
            f"more than back to back; slow start from the restarted window adds "
            f"{predicted_ms:.0f} ms (residual {residual:.0%} of the response time)"
        )
        return IdleFinding(True, headline, _evidence_lines(e), _advice(e))
    return IdleFinding(False, headline, _evidence_lines(e), [])


def _window_shrank(e: IdleEvidence) -> bool:
    """The server's window after idle is at most half the warm one (true when not reported:
    the times alone decide then)."""
    if e.cwnd_warm_pkts is None or e.cwnd_after_idle_pkts is None:
        return True
    return e.cwnd_after_idle_pkts <= SHRUNK * e.cwnd_warm_pkts


def _evidence_lines(e: IdleEvidence) -> list[str]:
    size = _size(e.response_bytes)
    lines = [
        f"{size} responses: {e.warm_ms:.0f} ms back to back, {e.after_idle_ms:.0f} ms after "
        f"{e.idle_gap_ms / 1e3:.1f} s idle, {e.first_ms:.0f} ms the first on the new connection",
        f"predicted: {e.warm_predicted_ms:.0f} ms with a warm window (RTT {e.rtt_ms:.1f} ms + "
        f"size at {e.capacity_bps / 1e6:.1f} Mb/s), {e.restart_predicted_ms:.0f} ms in slow "
        f"start from the initial window of {e.initial_window_pkts} packets (RFC 6928)",
    ]
    if e.cwnd_warm_pkts is not None and e.cwnd_after_idle_pkts is not None:
        lines.append(
            f"the server's cwnd at the start of a response: {e.cwnd_warm_pkts} packets back "
            f"to back, {e.cwnd_after_idle_pkts} after idle; slow start from "
            f"{e.cwnd_after_idle_pkts} predicts {e.after_idle_predicted_ms:.0f} ms"
        )
    if e.server_rto_ms is not None:
        lines.append(f"the server's RTO: {e.server_rto_ms:.0f} ms")
    return lines + e.notes


def _advice(e: IdleEvidence) -> list[str]:
    rto = f" ({e.server_rto_ms:.0f} ms here)" if e.server_rto_ms is not None else ""
    return [
        "on the server (it sends the responses): sysctl -w "
        "net.ipv4.tcp_slow_start_after_idle=0 (and in /etc/sysctl.d/ to keep it) — "
        "connections keep their window across idle periods, and a response after idle "
        f"takes about as long as one back to back ({e.warm_ms:.0f} ms here) instead of "
        f"{e.after_idle_ms:.0f} ms. It "
        "applies to every connection of the host (or network namespace): after a long idle "
        "a burst at the old window may meet a path whose load has changed (RFC 7661 keeps a "
        "window only while it was validated recently)",
        "or keep the connection from idling longer than the RTO" + rto + ": a small message "
        "from the server more often than that (TCP's own keepalive probes carry no new data "
        "and do not count)",
        "or a congestion control that sets its own rate, such as bbr: Linux does not restart "
        "those after idle",
    ]


def _unmeasured(e: IdleEvidence) -> str:
    why = "; ".join(e.notes) or "no response completed"
    return f"request-response not measured: {why}"


def _size(size_bytes: int) -> str:
    for unit, factor in (("GB", 10**9), ("MB", 10**6), ("kB", 10**3)):
        if size_bytes >= factor:
            return f"{size_bytes / factor:g} {unit}"
    return f"{size_bytes} B"
