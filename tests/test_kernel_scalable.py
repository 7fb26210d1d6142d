"""Scalable TCP as tcpeval's BPF stack runs it in the kernel, against Kelly, "Scalable TCP:
improving performance in highspeed wide area networks" (CCR 33(2), 2003), §2.

Kelly §2: each packet acknowledged in congestion avoidance adds a = 0.01 to the window, so
a window grows by 1% per RTT, and a congestion event takes away b = 0.125 of it: the time to
recover from a loss is the same at every window. Below a low window the increase is
standard TCP's, one packet per RTT (RFC 5681 §3.1); the simulator's `low_window` is 100
packets (Kelly's legacy window is 16), and its decrease is 7/8 at every window, which for
the windows here, all above 16, is also the paper's.

Each run is one flow with losses put at known times (`drop_at`: one packet each) and a
socket-buffer window limit, so that slow start ends without a loss of its own and every
reduction is one of ours. What the kernel lets us see, in TCP_INFO every 10 ms:
- ssthresh, which the stack's `ssthresh` op sets on entering recovery from the window it had
  then. The sample before shows that window, or up to 10 ms of growth less; a window the
  buffer limits (not cwnd-limited) does not grow at all. cwnd falls to ssthresh through PRR
  (RFC 6937) over the recovery's RTT.
- the window's growth against the packets delivered: one window's worth of them is one RTT,
  so 1% per RTT is 0.01 per packet, and standard TCP's one per RTT is 1/w per packet.
"""

from __future__ import annotations

import math

from kernel_windows import (
    Reduction,
    avoidance_spans,
    growth_agrees,
    one_flow_with_drops,
    reductions,
)

A = 0.01
B = 0.125
LOW_WINDOW = 100.0
PACKET_BYTES = 1500


def per_packet(w: float) -> float:
    """What one packet acknowledged adds to the window (Kelly §2; RFC 5681 §3.1 below)."""
    return A if w >= LOW_WINDOW else 1 / w


def grown(w: float, packets: float) -> float:
    """The window after `packets` delivered in congestion avoidance."""
    for _ in range(round(packets)):
        w += per_packet(w)
    return w


def check_reductions(found: list[Reduction], drops: int, rate_pkts_s: float) -> None:
    """Each drop, one reduction to (1 − b)·w of the window w the kernel had."""
    assert len(found) == drops, "\n".join(map(str, found))
    for r in found:
        w = r.cwnd_before
        # Tolerance: the window may have grown between the sample that read it and the next, by
        # per_packet(w) a packet delivered; the kernel truncates to a whole packet.
        later = w + math.ceil(rate_pkts_s * r.gap_s * per_packet(w))
        low = math.floor((1 - B) * w)
        high = math.floor((1 - B) * later)
        assert low <= r.ssthresh <= high, f"{r}: not in [{low}, {high}]"


def test_above_low_window_one_percent_per_rtt_and_seven_eighths_on_a_loss():
    # 50 Mb/s × 200 ms is 833 packets, at a packet rate a busy two-CPU host keeps up with;
    # the socket buffers hold about 650 in flight, which the 300% BDP queue takes without a
    # loss. Slow start leaves a window of about 1300 that the buffer limits (the flow starts
    # up to 3 s into the run on a busy host); nine drops take 1/8 each, down to about 410,
    # from where it grows by 1% an RTT until a drop at 15 s.
    rate_pkts_s = 50e6 / 8 / PACKET_BYTES
    drop_at = ["5s", "5.5s", "6s", "6.5s", "7s", "7.5s", "8s", "8.5s", "9s", "15s"]
    flow = one_flow_with_drops("scalable", "50Mbps", "200ms", "1000pkt", drop_at, "17s")
    found = reductions(flow)
    check_reductions(found, len(drop_at), rate_pkts_s)
    spans = [s for s in avoidance_spans(flow, min_samples=50) if s.cwnd1 - s.cwnd0 >= 30]
    assert sum(s.cwnd1 - s.cwnd0 for s in spans) >= 100, spans
    for span in spans:
        assert span.cwnd0 >= LOW_WINDOW
        expected = grown(span.cwnd0, span.delivered_pkts) - span.cwnd0
        assert growth_agrees(span.cwnd1 - span.cwnd0, expected), (span, expected)


def test_below_low_window_it_grows_as_standard_tcp():
    # 10 Mb/s × 40 ms is 33 packets; the buffers hold about 100 in flight. Slow start leaves
    # a window of about 200 the buffer limits (the flow starts up to 3 s into the run on a
    # busy host); drops every 0.25 s from 3.5 s, then every 0.2 s, take
    # 1/8 each, down to about 50 packets, from where it grows as standard TCP, one packet
    # per RTT, up to the buffer's limit: 1/w a packet, where 1% an RTT would give half.
    rate_pkts_s = 10e6 / 8 / PACKET_BYTES
    drop_at = ["3.5s", "3.75s", "4s", "4.25s", "4.5s", "4.75s"]
    drop_at += ["4.95s", "5.15s", "5.35s", "5.55s", "5.75s", "5.95s"]
    flow = one_flow_with_drops("scalable", "10Mbps", "40ms", "80pkt", drop_at, "10.5s")
    found = reductions(flow)
    check_reductions(found, len(drop_at), rate_pkts_s)
    assert min(r.cwnd_before for r in found) < 60, found
    spans = avoidance_spans(flow, min_samples=50)
    spans = [s for s in spans if s.cwnd0 < LOW_WINDOW and s.cwnd1 - s.cwnd0 >= 15]
    assert spans, "no growth below the low window to measure"
    for span in spans:
        expected = grown(span.cwnd0, span.delivered_pkts) - span.cwnd0
        assert growth_agrees(span.cwnd1 - span.cwnd0, expected), (span, expected)
        # 1% per RTT would have grown it by a·(packets delivered): about half as much.
        assert not growth_agrees(span.cwnd1 - span.cwnd0, A * span.delivered_pkts), span
