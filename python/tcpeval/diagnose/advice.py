"""What lifts each limit (docs/diagnose.md, "Verdicts"): settings with the figures they are
sized from, and the alternatives where no setting will do."""

from __future__ import annotations

import math

from tcpeval.diagnose.evidence import Evidence
from tcpeval.diagnose.relations import Limit
from tcpeval.diagnose.wording import mbps, size_text

# Buffers for a window of twice the BDP: Linux advertises about half of a receive buffer
# as window (tcp_adv_win_scale), and a send buffer holds unacknowledged and unsent data.
BUFFER_BDP_FACTOR = 2
MAX_STREAMS = 128
# Linux's defaults for the middle (initial) value of tcp_rmem and tcp_wmem.
DEFAULT_INITIAL_BYTES = {"rmem": 131072, "wmem": 16384}


def advice_for(limit: Limit, e: Evidence, predictions: dict[str, float], end: str) -> list[str]:
    """The advice for `limit`; `end` names the host it concerns, for the CPU."""
    if limit == "cpu":
        return _cpu(end)
    if limit == "path_loss":
        return _path_loss(e, predictions)
    if limit == "receiver_window":
        return _buffers(e, "rmem", "receiver")
    if limit == "send_buffer":
        return _buffers(e, "wmem", "sender")
    return FIXED[limit]


FIXED: dict[Limit, list[str]] = {
    "disk": [
        "stripe the data over more disks (RAID 0/10) or more spindles",
        "read and write with direct I/O (`tcpeval probe disk --direct` shows whether it is faster)",
        "move the data to a faster file system for the transfer",
    ],
    "mtu_black_hole": [
        "find the hop that drops large packets without an ICMP 'fragmentation needed' "
        "(a firewall filtering ICMP, a tunnel): let ICMP type 3 code 4 through",
        "meanwhile: net.ipv4.tcp_mtu_probing=1 (RFC 4821 packetization-layer PMTU discovery) "
        "or an MSS clamp at the tunnel's edge",
    ],
    "path_capacity": ["nothing to tune on the hosts: the path is the limit"],
    "policer": [
        "a token-bucket policer on the path drops what exceeds its rate: pace the sender "
        "below it (SO_MAX_PACING_RATE, `tc qdisc fq maxrate`) so it never bursts into drops",
        "or ask the path's operator for the contracted rate; BBR paces at the delivery rate "
        "it measures and loses less to a policer than loss-based stacks",
    ],
    "receiver_application": [
        "the receiving application reads slower than the network delivers: its window "
        "closes because its buffer is full, not because it is small",
        "read in larger blocks, from more threads, or hand the data to storage "
        "asynchronously; a larger buffer only delays the closing",
    ],
    "window_scaling": [
        "the window scale option (RFC 7323) was not negotiated: the window cannot exceed "
        "64 KiB, whatever the buffers",
        "check net.ipv4.tcp_window_scaling=1 on both hosts, and any middlebox (firewall, "
        "load balancer) that rewrites or strips the SYN's options",
    ],
    "reordering": [
        "the path reorders packets and TCP took it for loss (the receiver's DSACKs said "
        "the retransmissions were duplicates): RACK (net.ipv4.tcp_recovery=1) adapts its "
        "reordering window after a DSACK",
        "find the reordering hop: link aggregation or ECMP hashing per packet instead of per flow",
    ],
    # Slow start after idle's advice comes with its figures from idle.py.
    "idle_restart": [],
    "unexplained": [
        "look at the sending application (app-limited time) and the path's middleboxes"
    ],
}


def _cpu(end: str) -> list[str]:
    return [
        f"give the {end} more CPU: its cgroup's quota (cpu.max / cpu.cfs_quota_us) or the "
        "programs sharing its cores; or spread the transfer over streams on several cores",
        "steer the NIC's interrupts and the receiving threads to separate cores "
        "(IRQ affinity, RPS/RFS), and enable interrupt coalescing",
        "use zero-copy sends (MSG_ZEROCOPY, sendfile) to cut the per-byte CPU cost",
    ]


def advised_buffer_bytes(e: Evidence) -> int:
    """Twice the BDP of the measured capacity and minimum RTT, in whole MiB, at least 4 MiB."""
    return max(4 << 20, math.ceil(BUFFER_BDP_FACTOR * _bdp_bytes(e) / (1 << 20)) << 20)


def loss_streams(e: Evidence) -> int:
    """Streams enough to fill the capacity at Mathis's per-stream rate (2 without one)."""
    mathis = e.single.mathis_bps
    if not mathis:
        return 2
    return min(MAX_STREAMS, max(2, math.ceil(e.path.capacity_bps / mathis)))


def _bdp_bytes(e: Evidence) -> float:
    return e.path.capacity_bps * e.single.min_rtt_ms / 1e3 / 8


def _buffers(e: Evidence, kind: str, end: str) -> list[str]:
    bdp_bytes = _bdp_bytes(e)
    size = advised_buffer_bytes(e)
    default = DEFAULT_INITIAL_BYTES[kind]
    return [
        f"on the {end}: sysctl -w net.core.{kind}_max={size} "
        f"net.ipv4.tcp_{kind}='4096 {default} {size}'",
        f"(twice the path's BDP: {mbps(e.path.capacity_bps)} × {e.single.min_rtt_ms:.1f} ms "
        f"= {size_text(bdp_bytes)}; applications that set SO_{'RCV' if kind == 'rmem' else 'SND'}"
        "BUF themselves need the same size)",
    ]


def _path_loss(e: Evidence, predictions: dict[str, float]) -> list[str]:
    s = e.single
    mathis = s.mathis_bps or 0.0
    streams = loss_streams(e)
    advice = [
        f"{streams} parallel streams: each gets about {mbps(mathis)} at this loss and RTT "
        f"(Mathis), {streams} together fill {mbps(e.path.capacity_bps)}",
    ]
    if predictions:
        best = max(predictions, key=lambda cc: predictions[cc])
        table = ", ".join(f"{cc} {mbps(v)}" for cc, v in sorted(predictions.items()))
        advice.append(
            f"a stack suited to the path, predicted by the simulator: {table} (best: {best})"
        )
    return [
        *advice,
        "pacing (fq qdisc or SO_MAX_PACING_RATE) to avoid the bursts that lose packets",
        f"a larger MTU: Mathis's rate grows with the MSS ({s.mss_bytes} B now)",
    ]
