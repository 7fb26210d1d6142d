"""Evidence from the near end alone, against a stock `iperf3 -s` (docs/diagnose.md, "Against
an iperf3 server"): the TCP tests' sender-side TCP_INFO and the near end's CPU. What only a
`tcpeval probe serve` gives is named as missing, never filled in with a guess.
"""

from __future__ import annotations

from tcpeval.diagnose.evidence import (
    Evidence,
    PathEvidence,
    cpu_evidence,
    disk_evidence,
    tcp_evidence,
)
from tcpeval.diagnose.measure import Runs

MISSING_AGAINST_IPERF3 = (
    "UDP capacity and loss: iperf3's UDP test has its own protocol, which the probe does not "
    "speak; the capacity is the best TCP goodput with its headers, a lower bound",
    "the receiver's TCP_INFO history (the window as the receiver saw it)",
    "the far end's CPU (its threads, cores, softirq and cgroup throttling)",
)
FAR_DISK_MISSING = "the far end's disk write rate"


def missing_evidence(runs: Runs, iperf3: bool) -> list[str]:
    """Each piece of evidence a tcpeval server would have given and this one did not."""
    if not iperf3:
        return []
    return [*MISSING_AGAINST_IPERF3, *([FAR_DISK_MISSING] if runs.disk is not None else [])]


def client_side_evidence(runs: Runs) -> Evidence:
    """The Evidence of a diagnosis without UDP trains: the path figures rest on TCP alone."""
    single, multi = tcp_evidence(runs.single), tcp_evidence(runs.multi)
    busier = runs.single if single.goodput_bps >= multi.goodput_bps else runs.multi
    tcp_wire_bps = max(single.wire_bps, multi.wire_bps)
    disk = disk_evidence("client", runs.disk)
    return Evidence(
        path=PathEvidence(
            capacity_bps=tcp_wire_bps,
            udp_capacity_bps=0.0,
            udp_sender_limited=False,
            capacity_known=False,
            udp_sent=0,
            udp_lost=0,
            udp_loss=0.0,
        ),
        single=single,
        multi=multi,
        cpu=cpu_evidence(busier),
        disks=[disk] if disk is not None else [],
        notes=runs.notes,
    )
