"""TCP Vegas in the kernel (tcpeval's BPF stack, crates/bpf/bpf/vegas.bpf.c) held to its
specification, on real kernel flows through the lab.

Brakmo & Peterson, "TCP Vegas", IEEE JSAC 13(8), 1995: once per round trip Vegas estimates
the packets it keeps in the bottleneck's queue from the least RTT it has seen (BaseRTT) and
the round's RTT, and moves its window by one packet a round to keep that estimate between
α and β (§III-B); slow start ends once it passes γ (§III-C), before any loss. So a Vegas flow
keeps only α..β packets in even a deep buffer, N flows N·α..N·β, where a loss-based flow fills
the buffer; and flows of one RTT share the link within a factor β/α, since each keeps α..β of
its own packets queued and a FIFO serves them in that proportion.

The simulator's reading (crates/sim/src/cc/vegas.rs), which the BPF stack shares: the
estimate is ⌊cwnd·(RTT − BaseRTT)/BaseRTT⌋ with RTT the least of the round, held while
α ≤ estimate ≤ β (2..4 packets with the defaults).
"""

from __future__ import annotations

from typing import Any

import pytest

import settled
from lab_runs import scenario, valid_run
from tcpeval.result import Result

ALPHA, BETA = 2, 4
# 20 Mb/s × 20 ms is a BDP of ~34 packets, β an eighth of it; the buffer holds 30 BDPs,
# all of which a loss-based flow would fill before its first loss.
RATE_BPS = 20e6
BUFFER_PKTS = 1000
# Vegas leaves slow start one round late, with up to a BDP queued, and drains that a packet
# a round (~25 ms here): settled well within 5 s (the simulator settles this path in 2 s).
SETTLE_S = 5.0
# Vegas steers the least RTT of a round; a 10 ms sample catches the queue anywhere in the
# round, and the kernel's receiver ACKs every other packet, so each ACK lets the sender put
# two packets into the queue at once: the sampled queue stands up to ~2 packets above the
# round's least, per flow.
BURST_PKTS = 2


def run(flows: int) -> Result:
    flow: dict[str, Any] = {"cc": {"name": "vegas"}, "rtt": "20ms", "count": flows}
    bottleneck = {"rate": "20Mbps", "queue": f"{BUFFER_PKTS}pkt"}
    return valid_run(scenario(duration="15s", bottleneck=bottleneck, flow=[flow]))


@pytest.fixture(scope="module")
def one_flow() -> Result:
    return run(1)


@pytest.fixture(scope="module")
def two_flows() -> Result:
    return run(2)


def test_one_flow_keeps_alpha_to_beta_packets_queued(one_flow: Result) -> None:
    queued = settled.median_queue(one_flow, SETTLE_S)
    print(f"one Vegas flow: median queue {queued} packets of {BUFFER_PKTS}")
    assert ALPHA <= queued <= BETA + BURST_PKTS


def test_slow_start_ends_on_the_queue_it_builds_before_any_loss(one_flow: Result) -> None:
    """§III-C: slow start ends when γ packets queue; a loss-based slow start would end only
    with the 1000-packet buffer overflowing."""
    flow = one_flow.summary["flows"][0]
    link = one_flow.summary["bottleneck"]
    ssthresh = one_flow.flows["ssthresh_pkts"].iloc[-1]
    peak = one_flow.links["queue_pkts"].max()
    print(f"ssthresh {ssthresh}, peak queue {peak}, retransmits {flow['retransmits']}")
    assert flow["retransmits"] == 0
    assert link["drops"] == 0
    assert ssthresh < BUFFER_PKTS


def test_one_flow_keeps_the_link_busy(one_flow: Result) -> None:
    """α packets always queued leave the link no moment idle. 5% for the emulator's stalls
    and the edges of the 10 ms samples."""
    busy = settled.utilization(one_flow, SETTLE_S, RATE_BPS)
    print(f"utilization {busy:.3f}")
    assert busy >= 0.95


def test_two_flows_keep_two_alpha_to_two_beta_packets_queued(two_flows: Result) -> None:
    queued = settled.median_queue(two_flows, SETTLE_S)
    print(f"two Vegas flows: median queue {queued} packets")
    assert 2 * ALPHA <= queued <= 2 * (BETA + BURST_PKTS)


def test_two_flows_share_the_link_within_beta_over_alpha(two_flows: Result) -> None:
    first, second = settled.delivered_bytes(two_flows, SETTLE_S)
    ratio = max(first, second) / min(first, second)
    print(f"delivered {first:.0f} and {second:.0f} bytes: ratio {ratio:.2f}")
    assert ratio <= BETA / ALPHA
