"""HighSpeed TCP (RFC 3649) as tcpeval's BPF stack runs it in the kernel, against RFC 3649 §5.

RFC 3649 §5: at or below Low_Window (38 packets) HighSpeed is standard TCP, a = 1 and
b = 0.5; above it each ACK adds a(w)/w and a congestion event leaves (1 − b(w))·w, where b(w)
falls linearly in log w from 0.5 at Low_Window to High_Decrease (0.1) at High_Window
(83 000), and a(w) = w²·p(w)·2·b(w)/(2 − b(w)) with p(w) the response function's loss rate,
log-linear in w from Low_P (standard TCP's at Low_Window, 1e-3) to High_P (1e-7) at
High_Window: b = 0.5 at 38, 0.33 at 1000 packets, 0.29 at 2000 (Appendix B's table
holds the same curves, a stepped to whole packets).

Each run is one flow with losses put at known times (`drop_at`: one packet each) and a
socket-buffer window limit, so that slow start ends without a loss of its own and every
reduction is one of ours. What the kernel lets us see, in TCP_INFO every 10 ms:
- ssthresh, which the stack's `ssthresh` op sets on entering recovery from the window it had
  then. The sample before shows that window, or up to 10 ms of growth less; a window the
  buffer limits (not cwnd-limited) does not grow at all, so those reductions are exact to
  the packet. cwnd itself falls to ssthresh through PRR (RFC 6937) over the recovery's RTT.
- the window's growth against the packets delivered: one window's worth of them is one RTT
  of the RFC's per-RTT increase. The flows credit a(w)/w per packet (`per_ack = false`): with
  the RFC's per-ACK credit the kernel's receiver, which acknowledges every second segment
  or more often, would set the growth, not the stack.
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

LOW_WINDOW = 38.0
HIGH_WINDOW = 83_000.0
HIGH_P = 1e-7
HIGH_DECREASE = 0.1
# RFC 3649 §5: standard TCP's response function w = 1.2/sqrt(p) at Low_Window.
LOW_P = (1.2 / LOW_WINDOW) ** 2
PACKET_BYTES = 1500
STACK = {"name": "highspeed", "per_ack": False}


def log_position(w: float) -> float:
    """How far up from Low_Window to High_Window w is, in log w (RFC 3649 §5)."""
    w = min(max(w, LOW_WINDOW), HIGH_WINDOW)
    return math.log(w / LOW_WINDOW) / math.log(HIGH_WINDOW / LOW_WINDOW)


def decrease(w: float) -> float:
    """b(w), RFC 3649 §5."""
    return 0.5 + (HIGH_DECREASE - 0.5) * log_position(w)


def increase(w: float) -> float:
    """a(w), RFC 3649 §5: standard TCP's 1 at or below Low_Window."""
    if w <= LOW_WINDOW:
        return 1.0
    p = LOW_P * (HIGH_P / LOW_P) ** log_position(w)
    b = decrease(w)
    return w * w * p * 2 * b / (2 - b)


def grown(w: float, packets: float) -> float:
    """The window after `packets` delivered, each adding a(w)/w (RFC 3649 §5, per packet)."""
    for _ in range(round(packets)):
        w += increase(w) / w
    return w


def check_reductions(found: list[Reduction], drops: int, rate_pkts_s: float) -> None:
    """Each drop, one reduction to (1 − b(w))·w of the window w the kernel had."""
    assert len(found) == drops, "\n".join(map(str, found))
    for r in found:
        w = r.cwnd_before
        # Tolerance: the window may have grown between the sample that read it and the next,
        # by a(w)/w per packet delivered; the kernel truncates to a whole packet, and its
        # rows hold b(w) within 0.0002 (crates/bpf/src/highspeed.rs), under half a packet
        # below 2500 packets.
        later = w + math.ceil(rate_pkts_s * r.gap_s * increase(w) / w)
        low = math.floor((1 - decrease(w)) * w) - 1
        high = (1 - decrease(later)) * later + 1
        assert low <= r.ssthresh <= high, f"{r}: not in [{low}, {high}]"


def test_large_windows_give_up_b_of_rfc_3649_and_grow_by_a_per_rtt():
    # 100 Mb/s × 100 ms is 833 packets (a packet rate a busy two-CPU host sustains); the
    # socket buffers hold about 1500 in flight, which the 300% BDP queue takes without a
    # loss. Slow start ends when cwnd is twice the flight, about 3700 (the flow starts up to
    # 3 s into the run on a busy host): the drops at 4.5 s, 5.5 s and 6.5 s find a window
    # the buffer limits, so it does not grow; the one at 7 s leaves about 1000, which grows
    # by a(w) an RTT until the drop at 11 s.
    rate_pkts_s = 100e6 / 8 / PACKET_BYTES
    drop_at = ["4.5s", "5.5s", "6.5s", "7s", "11s"]
    flow = one_flow_with_drops(STACK, "100Mbps", "100ms", "1500pkt", drop_at, "13s")
    found = reductions(flow)
    check_reductions(found, len(drop_at), rate_pkts_s)
    # Windows above 1000 packets, where b(w) is 0.33 and less, on both sides of 2000.
    assert max(r.cwnd_before for r in found) > 2000, found
    assert min(r.cwnd_before for r in found) < 2000, found
    spans = [s for s in avoidance_spans(flow, min_samples=50) if s.cwnd1 - s.cwnd0 >= 100]
    assert spans, "no growth in congestion avoidance to measure"
    for span in spans:
        expected = grown(span.cwnd0, span.delivered_pkts) - span.cwnd0
        assert growth_agrees(span.cwnd1 - span.cwnd0, expected), (span, expected)


def test_below_low_window_it_is_standard_tcp_and_above_it_b_shrinks():
    # 10 Mb/s × 40 ms is 33 packets; the buffer holds about 45 in flight. Slow start leaves a
    # window of about 90 that the buffer limits (the flow starts up to 3 s into the run on a
    # busy host); 3.5 s halves it less than standard TCP (b(90) = 0.45), 4.5 s takes it
    # below Low_Window, 4.9 s finds it there (b = 0.5), and it grows as standard TCP, one
    # packet per window, up to Low_Window and beyond.
    rate_pkts_s = 10e6 / 8 / PACKET_BYTES
    drop_at = ["3.5s", "4.5s", "4.9s", "8.5s"]
    flow = one_flow_with_drops(STACK, "10Mbps", "40ms", "40pkt", drop_at, "10.5s")
    found = reductions(flow)
    check_reductions(found, len(drop_at), rate_pkts_s)
    assert any(r.cwnd_before <= LOW_WINDOW for r in found), found
    assert any(r.cwnd_before > 2 * LOW_WINDOW for r in found), found
    spans = [s for s in avoidance_spans(flow, min_samples=50) if s.cwnd1 - s.cwnd0 >= 10]
    assert any(s.cwnd0 < LOW_WINDOW for s in spans), spans
    for span in spans:
        expected = grown(span.cwnd0, span.delivered_pkts) - span.cwnd0
        assert growth_agrees(span.cwnd1 - span.cwnd0, expected), (span, expected)
