"""Run `tcpeval-probe` and convert its output into results.

A `tcp` run becomes a `tcpeval.result.Result` (summary + flows + links) with the simulator's
column names where the meaning is the same (docs/contract.md) and extra TCP_INFO columns with
their units in the names. `udp` and `rr` runs keep their own small JSON results and a plot;
`copy` keeps `copy.json`, with a memory-to-memory rate beside the copy's.
Ctrl-C is passed to the binary, which stops both ends and writes what it measured; the
conversion then runs as usual, so a stopped run still yields its result.
"""

from __future__ import annotations

import json
import math
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval.backends.protocol import BackendError
from tcpeval.metrics import jain_index
from tcpeval.probe.binary import probe_binary
from tcpeval.probe.intervals import BinaryInterval, parse_line
from tcpeval.probe.settings import (
    CopySettings,
    DiskSettings,
    RrSettings,
    TcpSettings,
    UdpSettings,
)
from tcpeval.provenance import stamped
from tcpeval.result import FLOW_COLUMNS, LINK_COLUMNS, Result
from tcpeval.units import parse_duration

# Linux's TCP_INFINITE_SSTHRESH (include/net/tcp.h): ssthresh not yet set.
INFINITE_SSTHRESH = 0x7FFFFFFF
# tcpi_pacing_rate when nothing limits pacing (~0UL; `sk_pacing_rate` unset), times 8.
UNLIMITED_RATES = {2**64 - 1, (2**64 - 1) * 8 % 2**64, 2**32 - 1}
# TCP_INFO fields kept as the binary names them (crates/probe/src/sample.rs), nullable because
# missing is not zero: reordering events the sender detected (kernels before 4.19 do not say),
# the window scale shifts in use (RFC 7323 §2.2; 0 when not negotiated), the needless
# retransmissions the peer reported (D-SACK), the path MTU, the MSS this end advertised, the
# receive autotuning's bytes per RTT, the send buffer's size (a server too old to send these
# leaves them empty).
NULLABLE_COUNTS = (
    "reord_seen",
    "snd_wscale",
    "rcv_wscale",
    "dsack_dups",
    "pmtu_bytes",
    "advmss_bytes",
    "rcv_space_bytes",
    "sndbuf_bytes",
)


class ProbeError(BackendError):
    """The binary refused or failed; the message is its one-line error."""


OnInterval = Callable[[BinaryInterval], None]


def _run(
    subcommand: str,
    arguments: list[str],
    raw: Path,
    wrapper: Sequence[str] = (),
    on_interval: OnInterval | None = None,
    processes: list[subprocess.Popen[str]] | None = None,
) -> float:
    """Runs the binary, echoing its progress lines and handing its interval reports to
    `on_interval`; returns wall seconds.

    `wrapper` goes before the command, e.g. `ip netns exec NS` to run it in a namespace;
    the process is appended to `processes`, for a caller in another thread to signal.
    """
    command = [*wrapper, str(probe_binary()), subcommand, *arguments, "--out", str(raw)]
    started = time.monotonic()
    errors: list[str] = []
    with subprocess.Popen(command, stderr=subprocess.PIPE, text=True) as process:
        if processes is not None:
            processes.append(process)
        try:
            assert process.stderr is not None
            for line in process.stderr:
                interval = parse_line(line)
                if interval is not None:
                    if on_interval is not None:
                        on_interval(interval)
                elif line.startswith("error:"):
                    errors.append(line.removeprefix("error:").strip())
                else:
                    sys.stderr.write(line)
            process.wait()
        except KeyboardInterrupt:
            # Ask the binary to stop; it keeps what it measured. A second Ctrl-C kills it.
            process.send_signal(signal.SIGINT)
            try:
                process.wait()
            except KeyboardInterrupt:
                process.kill()
                process.wait()
                raise
    if process.returncode not in (0, 130):
        raise ProbeError(errors[-1] if errors else f"tcpeval-probe exited {process.returncode}")
    return time.monotonic() - started


def run_tcp(
    settings: TcpSettings,
    name: str | None = None,
    wrapper: Sequence[str] = (),
    keep_raw: Path | None = None,
    on_interval: OnInterval | None = None,
    processes: list[subprocess.Popen[str]] | None = None,
) -> Result:
    """Runs a memory-to-memory TCP test and returns its result; `keep_raw` keeps the binary's
    own output (both ends' TCP_INFO histories as CSV, its run report) in that directory;
    `on_interval` gets the interval reports as they come (with `settings.interval`);
    `processes` gets the binary's process."""
    raw = Path(tempfile.mkdtemp(prefix="tcpeval-probe-"))
    try:
        wall_seconds = _run("tcp", settings.arguments(), raw, wrapper, on_interval, processes)
        if keep_raw is not None:
            shutil.copytree(raw, keep_raw, dirs_exist_ok=True)
        return result_from_raw(raw, settings, wall_seconds, name)
    finally:
        shutil.rmtree(raw, ignore_errors=True)


def run_tcp_both_ways(
    settings: TcpSettings,
    wrapper: Sequence[str] = (),
    on_interval: Callable[[bool, BinaryInterval], None] | None = None,
) -> tuple[Result, Result]:
    """iperf3's --bidir: a forward and a reverse test at once, each its own test on the
    server (two of its client slots), reported apart; returns (forward, reverse).
    `on_interval` gets whether the report is the reverse test's, and the report.

    Ctrl-C (here, in the main thread) is passed to both binaries; each stops both ends of
    its test and keeps what it measured, and both results are returned."""
    processes: list[subprocess.Popen[str]] = []

    def run(reverse: bool) -> Result:
        def report(interval: BinaryInterval) -> None:
            if on_interval is not None:
                on_interval(reverse, interval)

        one_way = settings.model_copy(update={"reverse": reverse})
        return run_tcp(one_way, wrapper=wrapper, on_interval=report, processes=processes)

    with ThreadPoolExecutor(max_workers=2) as pool:
        forward, reverse = pool.submit(run, False), pool.submit(run, True)
        while True:
            try:
                return forward.result(), reverse.result()
            except KeyboardInterrupt:
                # A terminal's Ctrl-C reached them too; a second is harmless (a flag).
                for process in processes:
                    if process.poll() is None:
                        process.send_signal(signal.SIGINT)


def receiver_flows(raw: Path) -> pd.DataFrame:
    """The receiving end's TCP_INFO history from a kept raw directory, as flow rows (empty
    when the server did not keep one)."""
    samples = _read_samples(raw / "receiver_samples.csv")
    return flows_frame(samples) if len(samples) else pd.DataFrame(columns=list(FLOW_COLUMNS))


def run_udp(settings: UdpSettings, out: Path, wrapper: Sequence[str] = ()) -> dict[str, Any]:
    """Runs UDP trains; writes udp.json into `out`; returns the report."""
    out.mkdir(parents=True, exist_ok=True)
    _run("udp", settings.arguments(), out, wrapper)
    return json.loads((out / "udp.json").read_text())


def run_rr(settings: RrSettings, out: Path, wrapper: Sequence[str] = ()) -> dict[str, Any]:
    """Runs request-response exchanges; writes rr.json into `out`; returns the report."""
    out.mkdir(parents=True, exist_ok=True)
    _run("rr", settings.arguments(), out, wrapper)
    return json.loads((out / "rr.json").read_text())


def run_disk(settings: DiskSettings, out: Path, wrapper: Sequence[str] = ()) -> dict[str, Any]:
    """Runs the disk test; writes disk.json into `out`; returns the report."""
    out.mkdir(parents=True, exist_ok=True)
    _run("disk", settings.arguments(), out / "disk.json", wrapper)
    return json.loads((out / "disk.json").read_text())


def run_copy(settings: CopySettings, out: Path, wrapper: Sequence[str] = ()) -> dict[str, Any]:
    """Copies the file, then (if it arrived) measures memory-to-memory TCP; returns
    copy.json's content. A copy that failed still returns its report (`committed` false,
    `problem` says why); ProbeError only when there is no report (bad input, refused)."""
    out.mkdir(parents=True, exist_ok=True)
    path = out / "copy.json"
    path.unlink(missing_ok=True)
    try:
        _run("copy", settings.arguments(), out, wrapper)
    except ProbeError:
        if not path.exists():
            raise
    report = json.loads(path.read_text())
    if report["committed"] and parse_duration(settings.tcp_duration).ns > 0:
        result = run_tcp(settings.tcp_settings(), wrapper=wrapper)
        result.save(out / "tcp")
        goodput_mbps = sum(f["goodput_mbps"] for f in result.summary["flows"])
        report["memory_to_memory"] = {
            "rate_bps": goodput_mbps * 1e6,
            "streams": settings.streams,
            "duration_s": result.summary["backend"]["duration_s"],
            "result": "tcp",
        }
        path.write_text(json.dumps(report, indent=2))
    return report


def ssthresh_reading(ssthresh: pd.Series) -> pd.Series:
    """Linux's "not yet set" is infinite. A larger value is no ssthresh any stack sets: the
    kernel shows one when its ssthresh call did not run a BPF stack's program, until the
    stack's next ACK replaces it (docs/lab.md "BPF stacks"); unknown, NaN."""
    unknown = ssthresh.where(ssthresh <= INFINITE_SSTHRESH, math.nan)
    return unknown.where(unknown != INFINITE_SSTHRESH, math.inf)


def flows_frame(samples: pd.DataFrame) -> pd.DataFrame:
    """TCP_INFO samples (samples.csv) as flow rows: the contract's columns first."""
    s = samples.sort_values(["stream", "t_ns"], kind="stable").reset_index(drop=True)
    ssthresh = s["snd_ssthresh_pkts"].astype(float)
    inflight = s["unacked_pkts"] + s["retrans_pkts"] - s["sacked_pkts"] - s["lost_pkts"]
    pacing = s["pacing_rate_bps"].astype(float)
    frame = pd.DataFrame(
        {
            "t_s": s["t_ns"] / 1e9,
            "flow": s["stream"].astype(int),
            "cwnd_pkts": s["snd_cwnd_pkts"].astype(float),
            "ssthresh_pkts": ssthresh_reading(ssthresh),
            "srtt_ms": s["rtt_us"] / 1e3,
            "inflight_pkts": inflight.clip(lower=0).astype(float),
            "delivered_bytes": s["bytes_acked"].astype(float),
            "retransmits": s["total_retrans_pkts"].astype(int),
            "pacing_rate_bps": pacing.where(~pacing.isin(UNLIMITED_RATES), math.inf),
            "rttvar_ms": s["rttvar_us"] / 1e3,
            "min_rtt_ms": s["min_rtt_us"] / 1e3,
            "rto_ms": s["rto_us"] / 1e3,
            "lost_pkts": s["lost_pkts"].astype(int),
            "sacked_pkts": s["sacked_pkts"].astype(int),
            "unacked_pkts": s["unacked_pkts"].astype(int),
            "delivery_rate_bps": s["delivery_rate_bps"].astype(float),
            "app_limited": s["app_limited"].astype(bool),
            "snd_wnd_bytes": s["snd_wnd_bytes"].astype(float),
            "rcv_wnd_bytes": s["rcv_wnd_bytes"].astype(float),
            "busy_time_s": s["busy_time_us"] / 1e6,
            "rwnd_limited_s": s["rwnd_limited_us"] / 1e6,
            "sndbuf_limited_s": s["sndbuf_limited_us"] / 1e6,
            "bytes_sent": s["bytes_sent"].astype(float),
            "bytes_retrans": s["bytes_retrans"].astype(float),
            "notsent_bytes": s["notsent_bytes"].astype(float),
            "segs_out": s["segs_out"].astype(float),
            "delivered_pkts": s["delivered_pkts"].astype(float),
            "delivered_ce_pkts": s["delivered_ce_pkts"].astype(float),
            "total_rto": s["total_rto"].astype(float),
            "ca_state": s["ca_state"].astype(int),
            "snd_mss_bytes": s["snd_mss_bytes"].astype(int),
            **{column: s[column].astype("Int64") for column in NULLABLE_COUNTS},
        }
    )
    assert tuple(frame.columns[: len(FLOW_COLUMNS)]) == FLOW_COLUMNS
    return frame


def _read_samples(path: Path) -> pd.DataFrame:
    if not path.exists() or path.stat().st_size == 0:
        return pd.DataFrame()
    return pd.read_csv(path)


def result_from_raw(
    raw: Path, settings: TcpSettings, wall_seconds: float, name: str | None = None
) -> Result:
    """The Result of a `tcp` run from the binary's output directory, stamped with the tool's
    version and the settings' hash (provenance.py) like every result."""
    report = json.loads((raw / "summary.json").read_text())
    samples = _read_samples(raw / "samples.csv")
    flows = flows_frame(samples) if len(samples) else pd.DataFrame(columns=list(FLOW_COLUMNS))
    links = pd.DataFrame({column: pd.Series(dtype=float) for column in LINK_COLUMNS})
    flow_summaries = [_flow_summary(stream, report) for stream in report["streams"]]
    summary = {
        "backend": {
            "name": "probe",
            "wall_seconds": wall_seconds,
            "duration_s": report["duration_ns"] / 1e9,
            "details": _details(report, settings, samples),
        },
        "scenario": _scenario(settings, name),
        "flows": flow_summaries,
        "bottleneck": None,
        "links": [],
        "jain_index": jain_index([f["goodput_mbps"] for f in flow_summaries]),
    }
    return Result(summary=stamped(summary), flows=flows, links=links)


def _scenario(settings: TcpSettings, name: str | None) -> dict[str, Any]:
    asked = settings.model_dump(exclude={"secret_file", "progress", "hold_open", "interval"})
    asked["sample_interval"] = settings.sample_interval
    host = settings.server.rpartition(":")[0]
    asked["name"] = name or f"probe-tcp-{host}"
    asked["duration"] = settings.duration or (None if settings.bytes else "10s")
    return asked


def _flow_summary(stream: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    final = stream.get("final_sample") or {}
    span_s = (stream["end_ns"] - stream["start_ns"]) / 1e9
    delivered = stream["bytes_delivered"]
    reverse = report["request"]["reverse"]
    peer = report.get("peer") or {}
    peer_stream = next((p for p in peer.get("streams", []) if p["id"] == stream["id"]), None)
    receiver_final = (peer_stream or {}).get("final_sample") if not reverse else None
    rtt_us = final.get("min_rtt_us") or final.get("rtt_us")
    sender_granted = (peer_stream or {}).get("granted", {}) if reverse else stream["granted"]
    return {
        "id": stream["id"],
        "group": 0,
        # An iperf3 server does not say which CC its sockets used: None, not a guess.
        "cc": sender_granted.get("cc") or None,
        "rtt_ms": rtt_us / 1e3 if rtt_us else None,
        "goodput_mbps": delivered * 8 / span_s / 1e6 if span_s > 0 else 0.0,
        "bytes_delivered": delivered,
        "retransmits": final.get("total_retrans_pkts"),
        "timeouts": final.get("total_rto"),
        "completion_s": span_s if report["request"]["bytes"] is not None else None,
        "start_s": stream["start_ns"] / 1e9,
        "end_s": stream["end_ns"] / 1e9,
        "packets_sent": final.get("segs_out"),
        "congestion_events": None,
        "undos": None,
        "receiver_drops": None,
        # What the receiving socket sent is its ACKs (it carries no data in this direction).
        "acks_sent": receiver_final.get("segs_out") if receiver_final else None,
    }


def _details(report: dict[str, Any], settings: TcpSettings, samples: pd.DataFrame) -> dict:
    interval_ns = report["request"]["sample_interval_ns"]
    expected = report["duration_ns"] // interval_ns
    per_stream = samples.groupby("stream").size().to_dict() if len(samples) else {}
    peer = report.get("peer") or {}
    return {
        "host": settings.server,
        "probe_version": report["version"],
        "kernel": report["kernel"],
        "server_kernel": peer.get("kernel"),
        "sender": report["sender"],
        "reverse": report["request"]["reverse"],
        "interrupted": report["interrupted"],
        "warnings": report["warnings"],
        "asked": report["streams"][0]["asked"] if report["streams"] else {},
        "granted": [s["granted"] for s in report["streams"]],
        "server_granted": [s["granted"] for s in peer.get("streams", [])],
        "samples_per_stream": {str(k): int(v) for k, v in per_stream.items()},
        "expected_samples_per_stream": int(expected),
        "missed_ticks": report["missed_ticks"],
        "cut_by_server_limits": bool(peer.get("cut_by_limits", False)),
        # Each end's CPUs during the test (crates/probe/src/cpu.rs).
        "cpu": {"client": report.get("cpu"), "server": peer.get("cpu")},
    }


def percentile_table(report: dict[str, Any]) -> list[tuple[float, float]]:
    """(percentile, latency in ms) pairs of an rr report."""
    return [(p, ns / 1e6) for p, ns in report["latency_percentiles_ns"]]
