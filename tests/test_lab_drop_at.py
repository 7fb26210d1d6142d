"""Induced losses in the lab (`drop_at`): the emulator drops the flow's first data segment at or
after each asked time, before the queue, and the kernel's Reno answers a loss found by
duplicate ACKs as RFC 5681 §3.2 says: ssthresh to half the window (Linux's Reno halves cwnd,
`tcp_reno_ssthresh`), the lost segment retransmitted, and the window down to ssthresh by the
end of the recovery (RFC 6937: PRR spreads the reduction over the recovery's round trip).

The path: 50 Mb/s × 20 ms (a BDP of 83 packets of 1500 bytes) and a queue of 300% BDP (250
packets); the flow's window, 200 packets, is below BDP + queue, so the queue never overflows
and the two induced drops are the run's only ones.
"""

from __future__ import annotations

import pandas as pd

from lab_runs import scenario, valid_run

DROP_AT = ["4s", "8s"]
SAMPLE_S = 0.01
BASE_RTT_S = 0.02


def test_reno_halves_its_window_at_each_induced_loss():
    flow = {"cc": "reno", "rtt": "20ms", "window": "200pkt", "drop_at": DROP_AT}
    bottleneck = {"rate": "50Mbps", "queue": "300%bdp"}
    result = valid_run(scenario(flow=[flow], bottleneck=bottleneck, duration="12s"))
    link, (summary,) = result.summary["bottleneck"], result.summary["flows"]
    (induced,) = result.summary["backend"]["details"]["induced_drops"]
    print(f"{link}\n{induced}\nretransmits {summary['retransmits']}")
    assert (link["induced_drops"], link["drops"], link["queue_drops"]) == (2, 2, 0)
    assert summary["retransmits"] >= 2
    assert induced["asked_s"] == [4.0, 8.0]
    for asked_s, dropped_s in zip(induced["asked_s"], induced["dropped_s"], strict=True):
        assert_reno_halves(result.flows, asked_s, dropped_s)


def assert_reno_halves(flows: pd.DataFrame, asked_s: float, dropped_s: float) -> None:
    """The drop asked at `asked_s`, made at `dropped_s`, and the reduction that follows, read
    in the 10 ms TCP_INFO samples.

    The drop: never before its time (the run's clock is the emulator's), and within one
    smoothed RTT of it. The flow is limited by its send buffer, so it sends in bursts: Linux
    wakes the writer once ACKs have freed part of the buffer (here ~86 segments every ~20 ms,
    `bytes_sent` in the samples), and the first segment after a time waits for the next
    burst; but a bulk flow has its whole window acknowledged every round trip, so it is never
    silent for one.

    Timing: the segments sent after the lost one queue as it would have, so their SACKs return
    one smoothed RTT after it was dropped; RACK then waits its reordering window, a quarter of
    the minimum RTT (RFC 8985 §6.2), before it marks the segment lost and recovery starts. The
    retransmission is acknowledged, and the recovery ends, one RTT later. Each bound adds two
    samples: one for the sampling grid, one for the sampler's own lateness.

    Size: ssthresh is half the cwnd at detection; from the last sample before the drop to the
    detection (≈1.3 RTT) Reno's cwnd grows by at most one packet per RTT in congestion
    avoidance (RFC 5681 §3.1), not at all while the window rather than cwnd limits the flow,
    so the halved value may exceed half the sampled one by one packet. At the recovery's end
    cwnd is set to ssthresh; one congestion-avoidance increment may fall between that and the
    sample, hence ssthresh + 1.
    """
    before = flows[flows["t_s"] < dropped_s].iloc[-1]
    cwnd, srtt_s = int(before["cwnd_pkts"]), before["srtt_ms"] / 1e3
    assert asked_s <= dropped_s <= asked_s + srtt_s
    detected_by = dropped_s + srtt_s + BASE_RTT_S / 4 + 2 * SAMPLE_S
    recovered_by = detected_by + srtt_s
    after = flows[flows["t_s"] > dropped_s]
    retransmitting = after[after["retransmits"] > before["retransmits"]]
    assert len(retransmitting), f"no retransmission after the drop at {dropped_s:.3f} s"
    detected = retransmitting.iloc[0]
    ssthresh = int(detected["ssthresh_pkts"])
    print(f"drop at {dropped_s:.4f} s: cwnd {cwnd}, srtt {srtt_s * 1e3:.1f} ms; recovery at "
          f"{detected['t_s']:.4f} s with ssthresh {ssthresh}")  # fmt: skip
    assert detected["t_s"] <= detected_by
    assert cwnd // 2 <= ssthresh <= cwnd // 2 + 1
    reduced = after[(after["t_s"] <= recovered_by) & (after["cwnd_pkts"] <= ssthresh + 1)]
    assert len(reduced), f"cwnd not down to {ssthresh} by {recovered_by:.3f} s"
