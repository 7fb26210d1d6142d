"""The figures a verdict is drawn from, read out of the raw runs (docs/diagnose.md,
"Evidence"). Each figure says what it is a share of; nothing here decides anything.
"""

from __future__ import annotations

from typing import Any, Literal

import pandas as pd
from pydantic import BaseModel

from tcpeval.diagnose.measure import Runs, _received_rate
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

    @property
    def wire_bps(self) -> float:
        """The goodput with the TCP/IP headers (timestamps on) it cost on the wire."""
        return self.goodput_bps * (self.mss_bytes + TCP_IP_HEADER_BYTES) / self.mss_bytes


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


def gather(runs: Runs) -> Evidence:
    single, multi = tcp_evidence(runs.single), tcp_evidence(runs.multi)
    busier = runs.single if single.goodput_bps >= multi.goodput_bps else runs.multi
    return Evidence(
        path=_path(runs, max(single.wire_bps, multi.wire_bps)),
        single=single,
        multi=multi,
        cpu=_cpu(busier),
        disks=[
            disk
            for disk in (_disk("client", runs.disk), _disk("server", runs.server_disk))
            if disk is not None
        ],
        notes=runs.notes,
    )


def _path(runs: Runs, tcp_wire_bps: float) -> PathEvidence:
    train = runs.loss_train
    sent = int(train["sent"])
    udp_bps = _received_rate(runs.capacity_train)
    sender_limited = bool(runs.capacity_train["sent_rate_bps"] < SENDER_MARGIN * udp_bps)
    return PathEvidence(
        capacity_bps=max(udp_bps, tcp_wire_bps),
        udp_capacity_bps=udp_bps,
        udp_sender_limited=sender_limited,
        capacity_known=not sender_limited and udp_bps >= TRAIN_AGREES * tcp_wire_bps,
        udp_sent=sent,
        udp_lost=int(train["lost"]),
        udp_loss=int(train["lost"]) / sent if sent else 0.0,
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
    )


def _share(part: float, whole: float) -> float:
    return float(min(1.0, part / whole)) if whole > 0 else 0.0


def _cpu(result: Result) -> list[CpuEvidence]:
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
    return CpuEvidence(
        end=end,
        role=role,
        busiest_thread=float(intervals["busiest_thread"].mean()),
        most_waiting_thread=float(intervals["most_waiting_thread"].mean()),
        throttled=float(throttled.mean()) if len(throttled) else None,
        busiest_core=float(cores.mean().max()),
        softirq=float(softirq.mean().max()),
    )


def _disk(end: End, report: dict[str, Any] | None) -> DiskEvidence | None:
    if report is None or not report["passes"]:
        return None
    buffered = [p for p in report["passes"] if not p["direct"]] or report["passes"]
    return DiskEvidence(
        end=end,
        path=report["path"],
        read_bps=max(p["read_bps"] for p in buffered),
        write_bps=max(p["write_bps"] for p in buffered),
    )
