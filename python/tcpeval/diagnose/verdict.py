"""Which limit binds, and what lifts it (docs/diagnose.md, "Verdicts").

The limits are tried in a fixed order, each with its own evidence, and the first that holds
is the verdict — the order settles the cases where one limit shows through another:
- the disk, when a directory was given: a disk slower than the network caps a disk-to-disk
  transfer whatever the network does;
- the path's capacity: a full link leaves nothing to tune (its CPU or window figures do not
  matter then);
- the CPU of either end, before the windows: a receiver starved of CPU stops reading, its
  buffer fills and the sender sees a closed window — the window is the symptom;
- the receiver's window, then the send buffer: the kernel's own accounting of the time the
  sender was held by each (tcpi_rwnd_limited, tcpi_sndbuf_limited);
- the congestion window against path loss: retransmissions, with Mathis et al. at the
  measured loss and RTT beside the measured goodput.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import BaseModel

from tcpeval.diagnose.evidence import CpuEvidence, Evidence

Limit = Literal[
    "disk", "path_capacity", "cpu", "receiver_window", "send_buffer", "path_loss", "unexplained"
]

# A transfer fills the link at 90% of the UDP capacity (TCP/IP headers and the slow start
# inside a short test take a few percent).
FULL_LINK = 0.9
# A limit "dominates" when it held the sender for at least half of its busy time.
DOMINANT = 0.5
# One core's worth: a thread at 90% or more of a core is waiting on nothing but the CPU.
CPU_BOUND_THREAD = 0.9
# Runnable but kept off the CPU (by a quota or by other programs) for half of the time or
# more; the same for a cgroup's throttling when it is visible.
CPU_STARVED = 0.5
# Buffers for a window of twice the BDP: Linux advertises about half of a receive buffer
# as window (tcp_adv_win_scale), and a send buffer holds unacknowledged and unsent data.
BUFFER_BDP_FACTOR = 2
MAX_STREAMS = 128
# The window was closed (under two segments) in this share of the samples or more.
CLOSED_SHARE = 0.1
# Held back at all: a throttled or waiting share this large is not noise.
READER_THROTTLED = 0.02


class Verdict(BaseModel):
    limit: Limit
    headline: str
    evidence: list[str]
    advice: list[str]


def decide(e: Evidence, predictions: dict[str, float] | None = None) -> Verdict:
    """The binding limit, the evidence for it, and the advice."""
    for rule in (_disk, _path_capacity, _cpu, _receiver_window, _send_buffer):
        verdict = rule(e)
        if verdict is not None:
            return verdict
    if e.single.retransmits > 0:
        return _path_loss(e, predictions or {})
    capacity = "" if e.path.capacity_known else "at least "
    return Verdict(
        limit="unexplained",
        headline=(
            f"not limited by anything measured: {_mbps(e.single.goodput_bps)} of "
            f"{capacity}{_mbps(e.path.capacity_bps)}, no loss, no window, CPU or disk limit"
        ),
        evidence=[_goodput_line(e), *e.notes],
        advice=["look at the sending application (app-limited time) and the path's middleboxes"],
    )


def _best_bps(e: Evidence) -> float:
    return max(e.single.goodput_bps, e.multi.goodput_bps)


def _disk(e: Evidence) -> Verdict | None:
    if not e.disks:
        return None
    slowest = min(e.disks, key=lambda d: d.transfer_bps)
    if slowest.transfer_bps >= FULL_LINK * _best_bps(e):
        return None
    action = "reads" if slowest.end == "client" else "writes"
    return Verdict(
        limit="disk",
        headline=(
            f"disk limited: the {slowest.end}'s {slowest.path} {action} at "
            f"{_mbps(slowest.transfer_bps)}, the network carries {_mbps(_best_bps(e))}"
        ),
        evidence=[
            *(
                f"{d.end} disk {d.path}: read {_mbps(d.read_bps)}, write {_mbps(d.write_bps)} "
                "(sequential, 1 MiB blocks, page cache dropped)"
                for d in e.disks
            ),
            _goodput_line(e),
        ],
        advice=[
            "stripe the data over more disks (RAID 0/10) or more spindles",
            "read and write with direct I/O (`tcpeval probe disk --direct` shows whether it "
            "is faster)",
            "move the data to a faster file system for the transfer",
        ],
    )


def _path_capacity(e: Evidence) -> Verdict | None:
    """Only against a capacity the UDP train measured: TCP's own best is no proof that the
    link was full."""
    if not e.path.capacity_known or e.single.goodput_bps < FULL_LINK * e.path.capacity_bps:
        return None
    return Verdict(
        limit="path_capacity",
        headline=(
            f"path-capacity limited: one stream carries {_mbps(e.single.goodput_bps)} of the "
            f"{_mbps(e.path.capacity_bps)} the path delivers"
        ),
        evidence=[_goodput_line(e), _udp_line(e)],
        advice=["nothing to tune on the hosts: the path is the limit"],
    )


def _cpu(e: Evidence) -> Verdict | None:
    bound = [c for c in e.cpu if _cpu_bound(c) or _starved_reader(e, c)]
    if not bound:
        return None
    worst = max(bound, key=_cpu_severity)
    if _starved_reader(e, worst):
        what = (
            f"it stopped reading (its window closed) while its cgroup's CPU quota throttled it "
            f"{worst.throttled or 0:.0%} of the time, and a thread waited for a CPU "
            f"{worst.most_waiting_thread:.0%}"
        )
    elif _throttled(worst):
        what = f"throttled by its cgroup's CPU quota {worst.throttled:.0%} of the time"
    elif worst.most_waiting_thread >= CPU_STARVED:
        what = f"a thread waited for a CPU {worst.most_waiting_thread:.0%} of the time"
    else:
        what = f"its busiest thread used {worst.busiest_thread:.0%} of a core"
    return Verdict(
        limit="cpu",
        headline=f"{worst.role} CPU limited ({worst.end}): {what}, while the link is not full",
        evidence=[_goodput_line(e), *(_cpu_line(c) for c in e.cpu)],
        advice=[
            f"give the {worst.end} more CPU: its cgroup's quota (cpu.max / cpu.cfs_quota_us) "
            "or the programs sharing its cores"
            if worst.busiest_thread < CPU_BOUND_THREAD
            else "spread the transfer over streams on several cores",
            "steer the NIC's interrupts and the receiving threads to separate cores "
            "(IRQ affinity, RPS/RFS), and enable interrupt coalescing",
            "use zero-copy sends (MSG_ZEROCOPY, sendfile) to cut the per-byte CPU cost",
        ],
    )


def _cpu_bound(c: CpuEvidence) -> bool:
    starved = _throttled(c) or c.most_waiting_thread >= CPU_STARVED
    return starved or c.busiest_thread >= CPU_BOUND_THREAD


def _starved_reader(e: Evidence, c: CpuEvidence) -> bool:
    """A receiver whose window kept closing (a small buffer keeps it open at its size) while
    its CPU was held back: the application did not get to read. On Linux 6.x a quota
    throttles a task only on its way back to user space, so the copy in recv() runs and
    little throttled time shows — any at all, with the window closing, is the evidence."""
    closed = e.single.zero_window >= CLOSED_SHARE
    held = (c.throttled or 0.0) >= READER_THROTTLED or c.most_waiting_thread >= READER_THROTTLED
    return c.role == "receiver" and e.single.rwnd_limited >= DOMINANT and closed and held


def _cpu_severity(c: CpuEvidence) -> float:
    return max(c.throttled or 0.0, c.most_waiting_thread, c.busiest_thread)


def _throttled(c: CpuEvidence) -> bool:
    return c.throttled is not None and c.throttled >= CPU_STARVED


def _receiver_window(e: Evidence) -> Verdict | None:
    if e.single.rwnd_limited < DOMINANT:
        return None
    window = e.single.advertised_window_bytes
    return Verdict(
        limit="receiver_window",
        headline=(
            f"receiver-window limited: the receiver advertised {_bytes(window)}, enough for "
            f"{_mbps(window * 8 / (e.single.srtt_ms / 1e3))} at {e.single.srtt_ms:.1f} ms"
        ),
        evidence=[
            f"rwnd-limited {e.single.rwnd_limited:.0%} of the sender's busy time",
            _goodput_line(e),
            _udp_line(e),
        ],
        advice=_buffer_advice(e, "rmem", "receiver"),
    )


def _send_buffer(e: Evidence) -> Verdict | None:
    held = min(1.0, e.single.sndbuf_limited + e.single.app_limited)
    if e.single.sndbuf_limited == 0 or held < DOMINANT:
        return None
    return Verdict(
        limit="send_buffer",
        headline=(f"send-buffer limited: the sender's buffer held it back {held:.0%} of the time"),
        evidence=[
            f"sndbuf-limited {e.single.sndbuf_limited:.0%} of the busy time, and nothing "
            f"left to send in {e.single.app_limited:.0%} of the samples of a sender that never "
            "stops writing",
            _goodput_line(e),
            _udp_line(e),
        ],
        advice=_buffer_advice(e, "wmem", "sender"),
    )


def _buffer_advice(e: Evidence, kind: str, end: str) -> list[str]:
    bdp_bytes = e.path.capacity_bps * e.single.min_rtt_ms / 1e3 / 8
    size = max(4 << 20, math.ceil(BUFFER_BDP_FACTOR * bdp_bytes / (1 << 20)) << 20)
    default = 131072 if kind == "rmem" else 16384
    return [
        f"on the {end}: sysctl -w net.core.{kind}_max={size} "
        f"net.ipv4.tcp_{kind}='4096 {default} {size}'",
        f"(twice the path's BDP: {_mbps(e.path.capacity_bps)} × {e.single.min_rtt_ms:.1f} ms "
        f"= {_bytes(bdp_bytes)}; applications that set SO_{'RCV' if kind == 'rmem' else 'SND'}"
        "BUF themselves need the same size)",
    ]


def _path_loss(e: Evidence, predictions: dict[str, float]) -> Verdict:
    s = e.single
    mathis = s.mathis_bps or 0.0
    streams = min(MAX_STREAMS, max(2, math.ceil(e.path.capacity_bps / mathis))) if mathis else 2
    advice = [
        f"{streams} parallel streams: each gets about {_mbps(mathis)} at this loss and RTT "
        f"(Mathis), {streams} together fill {_mbps(e.path.capacity_bps)}",
    ]
    if predictions:
        best = max(predictions, key=lambda cc: predictions[cc])
        table = ", ".join(f"{cc} {_mbps(v)}" for cc, v in sorted(predictions.items()))
        advice.append(
            f"a stack suited to the path, predicted by the simulator: {table} (best: {best})"
        )
    advice += [
        "pacing (fq qdisc or SO_MAX_PACING_RATE) to avoid the bursts that lose packets",
        f"a larger MTU: Mathis's rate grows with the MSS ({s.mss_bytes} B now)",
    ]
    return Verdict(
        limit="path_loss",
        headline=(
            f"congestion-window limited by path loss: {s.loss_rate:.2e} of segments "
            f"retransmitted; Mathis predicts {_mbps(mathis)} at {s.srtt_ms:.1f} ms, "
            f"measured {_mbps(s.goodput_bps)}"
        ),
        evidence=[_goodput_line(e), _udp_line(e)],
        advice=advice,
    )


def _goodput_line(e: Evidence) -> str:
    return (
        f"TCP: 1 stream {_mbps(e.single.goodput_bps)}, {e.multi.streams} streams "
        f"{_mbps(e.multi.goodput_bps)}; RTT {e.single.min_rtt_ms:.1f} ms min, "
        f"{e.single.srtt_ms:.1f} ms smoothed; retransmitted {e.single.retransmits} of "
        f"{e.single.segments_sent} segments"
    )


def _udp_line(e: Evidence) -> str:
    p = e.path
    bound = ""
    if p.udp_sender_limited:
        bound = ", a lower bound: the sender was slower"
    elif not p.capacity_known:
        bound = ", a lower bound: TCP got more through"
    return (
        f"path capacity {_mbps(p.capacity_bps)}: UDP back-to-back train "
        f"{_mbps(p.udp_capacity_bps)}{bound}; UDP loss {p.udp_lost}/{p.udp_sent} at half of it"
    )


def _cpu_line(c: CpuEvidence) -> str:
    throttled = "" if c.throttled is None else f", throttled {c.throttled:.0%}"
    return (
        f"{c.end} ({c.role}) CPU: busiest thread {c.busiest_thread:.0%} of a core, a thread "
        f"waited for a CPU up to {c.most_waiting_thread:.0%} of the time, busiest core "
        f"{c.busiest_core:.0%}, softirq up to {c.softirq:.0%}{throttled}"
    )


def _mbps(bps: float) -> str:
    return f"{bps / 1e6:.1f} Mb/s"


def _bytes(n: float) -> str:
    return f"{n / (1 << 20):.2f} MiB" if n >= 1 << 20 else f"{n / 1024:.0f} KiB"
