"""DCTCP in the kernel (tcpeval's BPF stack, crates/bpf/bpf/dctcp.bpf.c) held to RFC 8257.

What the specification says, and where:
- §3.2: the receiver echoes each CE mark on the ACK of the marked data (ECE exactly while the
  data it acknowledges arrived marked), not RFC 3168's ECE from the first mark until CWR.
- §3.3: the sender keeps α, a moving average (gain g) of the fraction F of its packets
  acknowledged with an echo, updated once per window of data, and answers the first echo of
  a window with cwnd ← cwnd·(1 − α/2). In steady state α estimates F.
- §3.4: between reductions the window grows as standard TCP's.
- Alizadeh et al. (SIGCOMM 2010) §3.1 and §3.3: through a step marker at K packets the queue
  saws around K, by about W*·α/2 packets, W* = BDP + K, and the link stays full.

One flow through a step marker at K = 20 packets on 100 Mb/s × 10 ms (BDP 83 packets of 1500
bytes, K > BDP/7 as the paper asks for full throughput); 15 s, measured from 5 s on.
"""

from __future__ import annotations

from typing import Any

import pytest

from kernel_ecn import bpf_stack, echo_cuts, forward_emulator, marked_fraction, sender_samples
from lab_runs import scenario, valid_run
from tcpeval.result import Result

K_PKTS = 20
BDP_PKTS = 100e6 * 0.010 / 8 / 1500
MEASURED_FROM_S = 5.0


@pytest.fixture(scope="module")
def run() -> Result:
    data: dict[str, Any] = scenario(
        duration="15s",
        measure=f"{MEASURED_FROM_S:g}s..",
        bottleneck={
            "rate": "100Mbps",
            "queue": "300%bdp",
            "aqm": {"name": "step", "threshold": f"{K_PKTS}pkt"},
        },
        flow=[{"cc": "dctcp", "rtt": "10ms", "ecn": "classic"}],
    )
    return valid_run(data)


def test_it_is_the_bpf_stack_with_the_simulators_parameters(run: Result) -> None:
    stack = bpf_stack(run)
    assert stack["stack"] == "dctcp"
    assert stack["params"] == {"g": 0.0625, "alpha_init": 1.0, "abc_limit": 2.0}


def test_each_echo_keeps_one_minus_half_alpha_with_alpha_the_marked_fraction(run: Result) -> None:
    """§3.3: α, inferred from each reduction as 2·(1 − ssthresh after / cwnd before), averages
    the fraction F the sender saw echoed. Tolerance 0.02 + 0.2·F: windows of ~100 packets
    make each inferred α uncertain by 0.02 (ssthresh is floored, and cwnd is sampled up to
    one RTT before the cut, one packet short of it); α is an EWMA (g = 1/16) over windows
    whose fraction swings with the sawtooth, so at the cuts it leads or lags F by a part of
    it. Without the α/2 rule every cut would keep 0.5."""
    samples = sender_samples(run, MEASURED_FROM_S)
    kept = echo_cuts(samples)
    alpha = float((2 * (1 - kept)).mean())
    f = marked_fraction(samples)
    print(f"cuts {len(kept)}, mean kept {kept.mean():.3f}, alpha {alpha:.3f}, F {f:.3f}")
    assert len(kept) > 100, "a cut every few RTTs over 10 s"
    assert 0.01 < f < 0.5
    assert abs(alpha - f) <= 0.02 + 0.2 * f


def test_the_receiver_echoes_exactly_the_marked_packets(run: Result) -> None:
    """§3.2: the packets the sender saw acknowledged with ECE (tcpi_delivered_ce) are the
    packets the emulator marked, within one window (marks still in flight when sampling
    stopped). RFC 3168's echo would count every packet of a marked window: here about
    1/F ≈ 10 times as many."""
    echoed = run.flows["delivered_ce_pkts"].max()
    marked = forward_emulator(run)["sent_ce_pkts"]
    window = run.flows["cwnd_pkts"].max()
    print(f"echoed {echoed}, marked {marked}, window {window}")
    assert marked > 1000
    assert abs(echoed - marked) <= window


def test_the_queue_saws_around_k_and_the_link_stays_full(run: Result) -> None:
    """Paper §3.3: the mean queue lies within W*·α/2 of K, α measured as F (the swing of
    one cut), and the link is used ≥ 90 % (§3.1's K > C·RTT/7 is met)."""
    link = run.summary["bottleneck"]
    f = marked_fraction(sender_samples(run, MEASURED_FROM_S))
    swing = (BDP_PKTS + K_PKTS) * f / 2
    print(f"mean queue {link['mean_queue_pkts']:.1f}, swing {swing:.1f}, link {link}")
    assert abs(link["mean_queue_pkts"] - K_PKTS) <= swing
    assert link["utilization"] >= 0.9
