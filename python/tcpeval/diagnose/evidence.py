"""The figures a verdict is drawn from, read out of the raw runs (docs/diagnose.md,
"Evidence"). Each figure says what it is a share of; nothing here decides anything.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel

from tcpeval.diagnose.idle import IdleEvidence
from tcpeval.diagnose.measure import (
    UDP_OVERHEAD_BYTES,
    UDP_PAYLOAD_BYTES,
    Runs,
    TrainEvidence,
    _received_rate,
)
from tcpeval.models import mathis_goodput_bps
from tcpeval.result import Result

# IPv4 + TCP + the timestamp option.
TCP_IP_HEADER_BYTES = 52
SENDER_MARGIN = 1.1
# The train's rate within this share of TCP's best counts as agreeing with it.
TRAIN_AGREES = 0.95

End = Literal["client", "server"]
Role = Literal["sender", "receiver"]


class PathEvidence(BaseModel):
    """What UDP saw, with no congestion control in the way."""

    # The larger of the UDP train's received rate and the best TCP goodput (on the wire):
    # a sender slower than the path makes the train a lower bound only.
    capacity_bps: float
    udp_capacity_bps: float
    # The train left the sender slower than 1.1× the rate it arrived at.
    udp_sender_limited: bool
    # The train measured the bottleneck: its sender was faster than the path, and TCP did not
    # get more than it through (a receiver too slow for the train makes it low).
    capacity_known: bool
    udp_sent: int
    udp_lost: int
    udp_loss: float
    # The back-to-back train: its datagrams' IP size, how many arrived and were lost, and how
    # far its one-way delay rose (a queue filling) — a policer drops without delaying.
    burst_datagram_bytes: int = 1500
    burst_sent: int = 0
    burst_received: int = 0
    burst_lost: int = 0
    burst_owd_variation_ns: int | None = None
    small_train: TrainEvidence | None = None
    # The paced train: the rate that got through and how far its one-way delay rose.
    paced_rate_bps: float = 0.0
    paced_owd_variation_ns: int | None = None
    # Datagrams of either train that arrived after a later one.
    udp_reordered: int = 0


class TcpEvidence(BaseModel):
    """One memory-to-memory test, from the sender's TCP_INFO (summed or averaged over its
    streams)."""

    streams: int
    goodput_bps: float
    srtt_ms: float
    min_rtt_ms: float
    mss_bytes: int
    retransmits: int
    segments_sent: int
    loss_rate: float
    # Shares of the time the sender had data to send (tcpi_busy_time).
    rwnd_limited: float
    sndbuf_limited: float
    # Share of samples the kernel flagged application-limited: nothing left to send. The
    # probe's sender never stops writing, so for it this is time the send buffer would not
    # take more (the kernel's sndbuf-limited clock stops as soon as space frees).
    app_limited: float
    # The window the receiver advertised (tcpi_snd_wnd), median over the second half, and
    # the share of the second half's samples in which it was closed (under two segments).
    advertised_window_bytes: float
    zero_window: float
    # Mathis et al. at the measured loss rate and RTT, per stream; None without loss.
    mathis_bps: float | None
    # The time-mean of the advertised window over the second half: what the sender could
    # have in flight on average (closed windows count as the zeros they are).
    advertised_window_mean_bytes: float = 0.0
    # The receiver's window scale as the sender applies it (tcpi_snd_wscale; 0: none was
    # negotiated, RFC 7323 §2.2); None when the probe did not report it.
    window_scale: int | None = None
    # The sender's socket send buffer (SO_SNDBUF as the kernel holds it), median of the
    # second half; None when not reported.
    send_buffer_bytes: float | None = None
    # The sender's congestion control.
    cc: str | None = None
    # The 90th percentile of the kernel's delivery-rate samples over the second half: the
    # rate the path lets through while the window is full.
    delivery_rate_p90_bps: float = 0.0
    # Retransmissions the receiver reported as duplicates (DSACK, RFC 2883), and reordering
    # events the sender detected (tcpi_reord_seen); None when not reported.
    dsack_dups: int | None = None
    reord_seen: int | None = None

    @property
    def spurious_share(self) -> float | None:
        """Of the retransmissions, the share that were not needed."""
        if self.dsack_dups is None or self.retransmits == 0:
            return None
        return min(1.0, self.dsack_dups / self.retransmits)

    # The goodput over the second half of the test, out of slow start.
    steady_goodput_bps: float = 0.0

    @property
    def wire_bps(self) -> float:
        """The goodput with the TCP/IP headers (timestamps on) it cost on the wire."""
        return self.goodput_bps * self.wire_share

    @property
    def steady_wire_bps(self) -> float:
        return self.steady_goodput_bps * self.wire_share

    @property
    def wire_share(self) -> float:
        return (self.mss_bytes + TCP_IP_HEADER_BYTES) / self.mss_bytes


class OtherProgram(BaseModel):
    pid: int
    command: str
    # Its share of one core over the test.
    cores: float


class CpuEvidence(BaseModel):
    """One end's CPUs during the faster TCP test (means over its sampling intervals)."""

    end: End
    role: Role
    busiest_thread: float
    # The share of the time a thread was runnable but waited for a CPU (a quota or other
    # programs held it back).
    most_waiting_thread: float
    throttled: float | None
    busiest_core: float
    softirq: float
    # The share of the time the busiest thread was runnable (running or waiting for a CPU):
    # at 100% it never slept, whatever kept it off the CPU.
    busiest_thread_runnable: float | None = None
    # With a CPU quota on the cgroup: the cgroup's use over the quota, and the share of the
    # quota's periods it was throttled in.
    quota_used: float | None = None
    throttled_periods: float | None = None
    # The other programs that used the most CPU on this end during the test.
    others: list[OtherProgram] = []

    def saturation(self) -> tuple[float, str]:
        """The closest this end's own work came to a CPU ceiling, and which ceiling."""
        candidates = [
            (self.busiest_thread, "its busiest thread's share of a core"),
            (self.softirq, "a core's softirq (the kernel's packet work)"),
        ]
        if self.busiest_thread_runnable is not None:
            candidates.append(
                (self.busiest_thread_runnable, "its busiest thread runnable (never asleep)")
            )
        if self.quota_used is not None:
            candidates.append((self.quota_used, "its cgroup's CPU quota used"))
        if self.throttled_periods is not None:
            # Throttled in a period only when the quota ran out in it: wanting more CPU
            # than the quota gives in every period is saturation, whatever the accounting of
            # a short quota says about its use.
            candidates.append((self.throttled_periods, "its cgroup's quota periods run out"))
        if self.throttled is not None:
            candidates.append((self.throttled, "its cgroup throttled"))
        return max(candidates, key=lambda c: c[0])


class DiskEvidence(BaseModel):
    end: End
    path: str
    read_bps: float
    write_bps: float

    @property
    def transfer_bps(self) -> float:
        """What this end's disk allows a transfer from the client to the server: the
        sender reads, the receiver writes."""
        return self.read_bps if self.end == "client" else self.write_bps


class Evidence(BaseModel):
    path: PathEvidence
    single: TcpEvidence
    multi: TcpEvidence
    cpu: list[CpuEvidence]
    disks: list[DiskEvidence]
    notes: list[str]
    # Request-response exchanges after idle gaps, when a response size was given.
    idle: IdleEvidence | None = None


def gather(runs: Runs) -> Evidence:
    single, multi = tcp_evidence(runs.single), tcp_evidence(runs.multi)
    busier = runs.single if single.goodput_bps >= multi.goodput_bps else runs.multi
    return Evidence(
        path=_path(runs, max(single.wire_bps, multi.wire_bps)),
        single=single,
        multi=multi,
        cpu=cpu_evidence(busier),
        disks=[
            disk
            for disk in (
                disk_evidence("client", runs.disk),
                disk_evidence("server", runs.server_disk),
            )
            if disk is not None
        ],
        notes=runs.notes,
        idle=runs.idle,
    )


def _path(runs: Runs, tcp_wire_bps: float) -> PathEvidence:
    train, burst = runs.loss_train, runs.capacity_train
    sent = int(train["sent"])
    udp_bps = _received_rate(burst)
    sender_limited = bool(burst["sent_rate_bps"] < SENDER_MARGIN * udp_bps)
    return PathEvidence(
        capacity_bps=max(udp_bps, tcp_wire_bps),
        udp_capacity_bps=udp_bps,
        udp_sender_limited=sender_limited,
        capacity_known=not sender_limited and udp_bps >= TRAIN_AGREES * tcp_wire_bps,
        udp_sent=sent,
        udp_lost=int(train["lost"]),
        udp_loss=int(train["lost"]) / sent if sent else 0.0,
        burst_datagram_bytes=UDP_PAYLOAD_BYTES + UDP_OVERHEAD_BYTES,
        burst_sent=int(burst["sent"]),
        burst_received=int(burst["received"]),
        burst_lost=int(burst["lost"]),
        burst_owd_variation_ns=burst.get("owd_variation_ns"),
        small_train=runs.small_train,
        paced_rate_bps=_received_rate(train),
        paced_owd_variation_ns=train.get("owd_variation_ns"),
        udp_reordered=int(train.get("reordered", 0)) + int(burst.get("reordered", 0)),
    )


def tcp_evidence(result: Result) -> TcpEvidence:
    flows = result.flows
    finals = flows.groupby("flow").last()
    second_half = flows[flows["t_s"] >= flows["t_s"].max() / 2]
    busy = finals["busy_time_s"].sum()
    segments = int(finals["segs_out"].sum())
    retransmits = int(finals["retransmits"].sum())
    loss = retransmits / segments if segments else 0.0
    srtt_ms = float(second_half["srtt_ms"].mean())
    mss = int(finals["snd_mss_bytes"].median())
    mathis = mathis_goodput_bps(mss, srtt_ms / 1e3, loss) if loss > 0 else None
    return TcpEvidence(
        streams=len(finals),
        goodput_bps=sum(f["goodput_mbps"] for f in result.summary["flows"]) * 1e6,
        srtt_ms=srtt_ms,
        min_rtt_ms=float(finals["min_rtt_ms"].min()),
        mss_bytes=mss,
        retransmits=retransmits,
        segments_sent=segments,
        loss_rate=loss,
        rwnd_limited=_share(finals["rwnd_limited_s"].sum(), busy),
        sndbuf_limited=_share(finals["sndbuf_limited_s"].sum(), busy),
        app_limited=float(flows["app_limited"].mean()),
        advertised_window_bytes=float(second_half["snd_wnd_bytes"].median()),
        zero_window=float((second_half["snd_wnd_bytes"] < 2 * mss).mean()),
        mathis_bps=mathis,
        advertised_window_mean_bytes=float(second_half["snd_wnd_bytes"].mean()),
        steady_goodput_bps=_second_half_goodput_bps(flows),
        delivery_rate_p90_bps=float(second_half["delivery_rate_bps"].quantile(0.9)),
        window_scale=_last_int(finals, "snd_wscale"),
        send_buffer_bytes=_median(second_half, "sndbuf_bytes"),
        cc=_sender_cc(result),
        dsack_dups=_sum_int(finals, "dsack_dups"),
        reord_seen=_sum_int(finals, "reord_seen"),
    )


def _second_half_goodput_bps(flows: pd.DataFrame) -> float:
    """All streams' bytes delivered over the second half of the test, per second."""
    half_s = flows["t_s"].max() / 2
    delivered = flows.pivot_table(index="t_s", columns="flow", values="delivered_bytes")
    total = delivered.ffill().fillna(0).sum(axis=1)
    before = total[total.index <= half_s]
    start_bytes, start_s = (before.iloc[-1], before.index[-1]) if len(before) else (0.0, 0.0)
    span_s = total.index[-1] - start_s
    return float((total.iloc[-1] - start_bytes) * 8 / span_s) if span_s > 0 else 0.0


def _last_int(finals: pd.DataFrame, column: str) -> int | None:
    """The smallest over the streams of a column's final value; None when not reported."""
    if column not in finals or finals[column].isna().all():
        return None
    return int(finals[column].min())


def _sum_int(finals: pd.DataFrame, column: str) -> int | None:
    if column not in finals or finals[column].isna().all():
        return None
    return int(finals[column].sum())


def _median(rows: pd.DataFrame, column: str) -> float | None:
    if column not in rows or rows[column].isna().all():
        return None
    return float(rows[column].median())


def _sender_cc(result: Result) -> str | None:
    ccs = {f.get("cc") for f in result.summary["flows"]}
    return ccs.pop() if len(ccs) == 1 else None


def _share(part: float, whole: float) -> float:
    return float(min(1.0, part / whole)) if whole > 0 else 0.0


def cpu_evidence(result: Result) -> list[CpuEvidence]:
    """Each end's CPUs during `result`, where its report has intervals."""
    cpu = result.summary["backend"]["details"].get("cpu") or {}
    sender = result.summary["backend"]["details"]["sender"]
    found = []
    ends: tuple[End, ...] = ("client", "server")
    for end in ends:
        report = cpu.get(end)
        if report and report["intervals"]:
            role: Role = "sender" if end == sender else "receiver"
            found.append(_cpu_end(end, role, report))
    return found


def _cpu_end(end: End, role: Role, report: dict[str, Any]) -> CpuEvidence:
    # The first interval holds the connection set-up and slow start: left out when there
    # are others.
    intervals = pd.DataFrame(report["intervals"][1:] or report["intervals"])
    cores = pd.DataFrame(intervals["core_busy"].tolist())
    softirq = pd.DataFrame(intervals["core_softirq"].tolist())
    throttled = intervals["throttled"].dropna()
    # The quota over the whole test: with periods as long as the intervals, a starved group
    # runs its whole quota in one interval and is held through the next, so the intervals'
    # figures swing and their mean misleads.
    quota = report.get("whole_test_quota") or {}
    return CpuEvidence(
        busiest_thread_runnable=_mean(intervals, "busiest_thread_runnable"),
        quota_used=quota.get("quota_used"),
        throttled_periods=quota.get("throttled_periods"),
        others=[OtherProgram(**o) for o in report.get("others", [])],
        end=end,
        role=role,
        busiest_thread=float(intervals["busiest_thread"].mean()),
        most_waiting_thread=float(intervals["most_waiting_thread"].mean()),
        throttled=float(throttled.mean()) if len(throttled) else None,
        busiest_core=float(cores.mean().max()),
        softirq=float(softirq.mean().max()),
    )


def disk_evidence(end: End, report: dict[str, Any] | None) -> DiskEvidence | None:
    if report is None or not report["passes"]:
        return None
    buffered = [p for p in report["passes"] if not p["direct"]] or report["passes"]
    return DiskEvidence(
        end=end,
        path=report["path"],
        read_bps=max(p["read_bps"] for p in buffered),
        write_bps=max(p["write_bps"] for p in buffered),
    )


def _mean(intervals: pd.DataFrame, column: str) -> float | None:
    if column not in intervals or intervals[column].isna().all():
        return None
    return float(intervals[column].mean())
