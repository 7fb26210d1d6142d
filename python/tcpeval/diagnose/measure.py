"""The measurements a diagnosis rests on, taken in order against one probe server
(docs/diagnose.md): UDP trains for the path's capacity and loss without TCP, memory-to-memory
TCP with one stream and with N (TCP_INFO histories and both ends' CPUs), with a response
size, request-response exchanges after idle gaps (idle.py), and with a directory, the disks'
rates of both ends. Against a stock `iperf3 -s` only the TCP tests run (with the near end's
TCP_INFO and CPU): iperf3 speaks no UDP train or request-response protocol, keeps no TCP_INFO
history and measures neither its CPU nor its disk for us. Ctrl-C stops the diagnosis (the
binary keeps what it measured of the step it was in, but half a diagnosis would name the wrong
limit).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd
from pydantic import BaseModel

from tcpeval.diagnose.idle import IdleEvidence, measure_idle, min_rtt_s
from tcpeval.probe.driver import ProbeError, receiver_flows, run_disk, run_tcp, run_udp
from tcpeval.probe.settings import DiskSettings, TcpSettings, UdpSettings
from tcpeval.result import Result

T = TypeVar("T")
UDP_PAYLOAD_BYTES = 1472
UDP_OVERHEAD_BYTES = 28
# Back to back: long enough that the bottleneck, not the sender's first burst, sets the
# arrival rate (3 MB: many queues' worth at 1 Gb/s, a few ms at 10 Gb/s).
CAPACITY_TRAIN_PKTS = 2000
# When none of the back-to-back train arrives: a train of datagrams that fit the smallest
# MTU IPv4 hosts must accept (RFC 791: 576 B), paced at 1 ms so no queue drops them.
SMALL_PAYLOAD_BYTES = 548
SMALL_TRAIN_PKTS = 200
SMALL_TRAIN_SPACING_NS = 1_000_000
# The loss train is paced at half the capacity, so the queue stays empty and every loss is
# the path's own; it lasts about a second, within these bounds.
LOSS_TRAIN_SHARE = 0.5
LOSS_TRAIN_PKTS = (2_000, 100_000)
# Each TCP test takes this share of --duration.
TCP_SHARE = 0.35
MIN_TCP_S = 2.0
# The disk file: what the network moves in this long, within these bounds.
DISK_SECONDS = 2.0
DISK_BYTES = (32 << 20, 1 << 30)


@dataclass(frozen=True)
class Target:
    """The far end: a `tcpeval probe serve`, and how to run the near end's binary."""

    server: str
    # None against a stock iperf3 server, which asks for no secret.
    secret_file: str | None
    # Before the binary's command line, e.g. `ip netns exec NS` (tests run in namespaces).
    wrapper: tuple[str, ...] = ()
    # The far end is a stock `iperf3 -s`, not a `tcpeval probe serve`.
    iperf3: bool = False


class TrainEvidence(BaseModel):
    """A train of small datagrams, sent when no full-size datagram arrived: a path that
    carries these and not those drops large packets (a path-MTU black hole)."""

    size_bytes: int
    sent: int
    received: int


@dataclass
class Runs:
    """What each step measured, raw."""

    single: Result
    multi: Result
    # The receiving end's TCP_INFO history of the single-stream test (the server's).
    single_receiver: pd.DataFrame
    # The UDP trains; empty against an iperf3 server, which runs none.
    capacity_train: dict[str, Any] = field(default_factory=dict)
    loss_train: dict[str, Any] = field(default_factory=dict)
    # The near end's disk (the sender's: its read rate counts) and the far end's (its
    # write rate), when measured; a server without --root has none.
    disk: dict[str, Any] | None = None
    server_disk: dict[str, Any] | None = None
    small_train: TrainEvidence | None = None
    # Slow start after idle, when a response size was given.
    idle: IdleEvidence | None = None
    notes: list[str] = field(default_factory=list)
    step_seconds: dict[str, float] = field(default_factory=dict)


def measure(
    target: Target,
    duration_s: float,
    streams: int,
    path: Path | None,
    out: Path,
    response_bytes: int | None = None,
) -> Runs:
    """Runs every step in order; raw outputs go under `out`."""
    timer = _Timer()
    capacity: dict[str, Any] = {}
    loss: dict[str, Any] = {}
    small = None
    if not target.iperf3:
        capacity = timer.step("udp capacity", lambda: _train(target, 0, CAPACITY_TRAIN_PKTS, out))
        if capacity["received"] == 0:
            small = timer.step("udp small", lambda: _small_train(target, out))
        spacing_ns, count = _loss_train_shape(_received_rate(capacity))
        loss = timer.step("udp loss", lambda: _train(target, spacing_ns, count, out))
    tcp_s = tcp_seconds(duration_s)
    single = timer.step("tcp 1 stream", lambda: tcp_test(target, tcp_s, out, streams=1))
    multi = timer.step(
        f"tcp {streams} streams", lambda: tcp_test(target, tcp_s, out, streams=streams)
    )
    receiver = receiver_flows(_raw_dir(out, "tcp-1"))
    runs = Runs(single, multi, receiver, capacity, loss, small_train=small)
    if response_bytes is not None and target.iperf3:
        runs.notes.append("slow start after idle was not timed: iperf3 has no request-response")
    elif response_bytes is not None:
        capacity_bps = _received_rate(capacity)
        path_bps = max(capacity_bps, _goodput_bps(single), _goodput_bps(multi))
        rtt_s = min_rtt_s(single)
        runs.idle = timer.step(
            "request-response", lambda: measure_idle(target, response_bytes, rtt_s, path_bps, out)
        )
    if path is not None:
        size = _disk_bytes(max(_goodput_bps(single), _goodput_bps(multi)))
        runs.disk = timer.step("disk", lambda: _disk(target, path, size, out))
        runs.server_disk = _server_disk_or_note(target, size, out, timer, runs.notes)
    runs.step_seconds = timer.seconds
    return runs


def tcp_seconds(duration_s: float) -> float:
    """How long each TCP test of a diagnosis of `duration_s` runs."""
    return max(MIN_TCP_S, duration_s * TCP_SHARE)


def _train(
    target: Target, spacing_ns: int, count: int, out: Path, size: int = UDP_PAYLOAD_BYTES
) -> dict[str, Any]:
    settings = UdpSettings(
        server=target.server,
        secret_file=_secret(target),
        size=size,
        count=count,
        spacing=f"{spacing_ns}ns",
        steps=1,
    )
    report = run_udp(settings, out / f"udp-{size}B-{spacing_ns}ns", target.wrapper)
    return report["trains"][0]


def _small_train(target: Target, out: Path) -> TrainEvidence:
    train = _train(target, SMALL_TRAIN_SPACING_NS, SMALL_TRAIN_PKTS, out, SMALL_PAYLOAD_BYTES)
    return TrainEvidence(
        size_bytes=SMALL_PAYLOAD_BYTES + UDP_OVERHEAD_BYTES,
        sent=int(train["sent"]),
        received=int(train["received"]),
    )


def _received_rate(train: dict[str, Any]) -> float:
    """The received rate of the datagrams that arrived in order (one the path held back
    arrives late and would stretch the span), counted over whole IP packets as link rates
    are."""
    wire_share = (UDP_PAYLOAD_BYTES + UDP_OVERHEAD_BYTES) / UDP_PAYLOAD_BYTES
    rate = train.get("in_order_rate_bps") or train["received_rate_bps"]
    return float(rate) * wire_share


def _loss_train_shape(capacity_bps: float) -> tuple[int, int]:
    packet_bits = (UDP_PAYLOAD_BYTES + UDP_OVERHEAD_BYTES) * 8
    spacing_ns = int(packet_bits * 1e9 / (LOSS_TRAIN_SHARE * max(capacity_bps, 1e6)))
    low, high = LOSS_TRAIN_PKTS
    return spacing_ns, min(high, max(low, int(1e9 / spacing_ns)))


def tcp_test(target: Target, seconds: float, out: Path, label: str = "", **changes: Any) -> Result:
    """One memory-to-memory TCP test with `changes` to TcpSettings (streams, window, cc, …);
    its raw output is kept under `out` as raw-tcp-<streams><label>."""
    settings = TcpSettings(
        server=target.server,
        secret_file=target.secret_file,
        iperf3=target.iperf3,
        duration=f"{int(seconds * 1000)}ms",
        **changes,
    )
    name = f"diagnose-{settings.streams}-streams{label}"
    raw = _raw_dir(out, f"tcp-{settings.streams}{label}")
    result = run_tcp(settings, name=name, wrapper=target.wrapper, keep_raw=raw)
    if result.summary["backend"]["details"]["interrupted"]:
        raise KeyboardInterrupt
    return result


def _raw_dir(out: Path, test: str) -> Path:
    """The probe's own output of a TCP test: both ends' histories as CSV."""
    return out / f"raw-{test}"


def _secret(target: Target) -> str:
    """The secret for requests only a tcpeval server answers (UDP trains, its disk)."""
    if target.secret_file is None:
        raise ProbeError("only a tcpeval probe server answers this request, not iperf3")
    return target.secret_file


def _goodput_bps(result: Result) -> float:
    return sum(f["goodput_mbps"] for f in result.summary["flows"]) * 1e6


def _disk_bytes(network_bps: float) -> int:
    low, high = DISK_BYTES
    wanted = int(network_bps * DISK_SECONDS / 8)
    return min(high, max(low, wanted)) >> 20 << 20


def _disk(target: Target, path: Path, size_bytes: int, out: Path) -> dict[str, Any]:
    settings = DiskSettings(path=str(path), size=f"{size_bytes}B", block="1MiB")
    return run_disk(settings, out / "disk", target.wrapper)


def _server_disk_or_note(
    target: Target, size_bytes: int, out: Path, timer: _Timer, notes: list[str]
) -> dict[str, Any] | None:
    if target.iperf3:
        notes.append("the server's disk was not measured: iperf3 does not measure disks")
        return None
    try:
        return timer.step("server disk", lambda: _server_disk(target, size_bytes, out))
    except ProbeError as e:
        notes.append(f"the server's disk was not measured: {e}")
        return None


def _server_disk(target: Target, size_bytes: int, out: Path) -> dict[str, Any]:
    settings = DiskSettings(
        server=target.server, secret_file=_secret(target), size=f"{size_bytes}B", block="1MiB"
    )
    return run_disk(settings, out / "server-disk", target.wrapper)


class _Timer:
    """How long each step took: the diagnosis's own cost, reported."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}

    def step(self, name: str, action: Callable[[], T]) -> T:
        started = time.monotonic()
        value = action()
        self.seconds[name] = time.monotonic() - started
        return value
