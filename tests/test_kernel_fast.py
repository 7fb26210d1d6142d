"""FAST TCP in the kernel (tcpeval's BPF stack, crates/bpf/bpf/fast.bpf.c) held to its
specification, on real kernel flows through the lab.

Jin, Wei & Low, "FAST TCP: Motivation, Architecture, Algorithms, Performance", INFOCOM 2004,
§3 (window control): every update period the window moves a fraction γ of the way to the
window that keeps α packets queued, w ← min{2w, (1−γ)w + γ(baseRTT/avgRTT·w + α)}. At its
fixed point w·(1 − baseRTT/avgRTT) = α: the flow's rate times its queueing delay, its packets
in the queue, is α. So one flow keeps α packets queued, N flows N·α, and flows with one α
get one rate; from an empty queue the rule itself is the slow start (at most doubling), and
with a buffer above N·α it never loses a packet.

α is 20 here, not the default 200, so that a 20 Mb/s path (BDP ~34 packets) reaches its fixed
point within a short run.
"""

from __future__ import annotations

from typing import Any

import pytest

import settled
from lab_runs import scenario, valid_run
from tcpeval.result import Result

ALPHA = 20
RATE_BPS = 20e6
BUFFER_PKTS = 1000
# γ = 1/2 every other round halves the distance to the fixed point every ~50 ms here; from
# slow start it is reached within a second (the simulator's in half of one).
SETTLE_S = 5.0
# The kernel sends the whole part of FAST's real window, up to a packet less per flow than
# the fixed point's; the receiver ACKs every other packet, so a 10 ms sample may catch a
# packet more: each flow's queue within a packet or two of α.
SLACK_PKTS_PER_FLOW = 2


def run(flows: int) -> Result:
    flow: dict[str, Any] = {"cc": {"name": "fast", "alpha": ALPHA}, "rtt": "20ms", "count": flows}
    bottleneck = {"rate": "20Mbps", "queue": f"{BUFFER_PKTS}pkt"}
    return valid_run(scenario(duration="15s", bottleneck=bottleneck, flow=[flow]))


@pytest.fixture(scope="module")
def one_flow() -> Result:
    return run(1)


@pytest.fixture(scope="module")
def two_flows() -> Result:
    return run(2)


def test_one_flow_keeps_alpha_packets_queued(one_flow: Result) -> None:
    queued = settled.median_queue(one_flow, SETTLE_S)
    print(f"one FAST flow, α = {ALPHA}: median queue {queued} packets")
    assert abs(queued - ALPHA) <= SLACK_PKTS_PER_FLOW


def test_it_reaches_its_fixed_point_without_a_loss(one_flow: Result) -> None:
    flow = one_flow.summary["flows"][0]
    assert flow["retransmits"] == 0
    assert one_flow.summary["bottleneck"]["drops"] == 0
    busy = settled.utilization(one_flow, SETTLE_S, RATE_BPS)
    print(f"utilization {busy:.3f}")
    # α packets always queued leave the link no moment idle; 5% for the emulator's stalls
    # and the edges of the 10 ms samples.
    assert busy >= 0.95


def test_two_flows_keep_two_alpha_queued_and_share_equally(two_flows: Result) -> None:
    queued = settled.median_queue(two_flows, SETTLE_S)
    first, second = settled.delivered_bytes(two_flows, SETTLE_S)
    ratio = max(first, second) / min(first, second)
    print(f"two FAST flows: median queue {queued}, delivered ratio {ratio:.3f}")
    assert abs(queued - 2 * ALPHA) <= 2 * SLACK_PKTS_PER_FLOW
    # One α, one rate. 10%: each flow's window is floored (a packet of ~37, 3%) and the
    # flows start up to a few ms apart.
    assert ratio <= 1.1
