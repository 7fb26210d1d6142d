"""`tcpeval probe tcp` prints what iperf3 users read: interval rows, totals, JSON, both
directions, a log file and progress off a terminal. The command runs as users run it (a
process whose stdout is a pipe) in the client namespace of a 100 Mb/s routed lab that each
test makes and removes; 8 s of traffic in all."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tcpeval.probe.intervals import BinaryInterval, StreamInterval, figures
from tcpeval.probe.netns import lab, secret_file
from tcpeval.result import load

RATE_BPS = 100_000_000
QUEUE_BYTES = 150_000
# A 1448-byte payload rides in 1514 bytes on the wire (Ethernet, IPv4, TCP with timestamps).
PAYLOAD_RATE_BPS = RATE_BPS * 1448 / 1514
ROW = re.compile(r"^\[\s*(\d+|SUM)\]\s+(\d+\.\d\d)-(\d+\.\d\d)\s+s\s")


@pytest.fixture
def routed(tmp_path: Path):
    with lab() as the_lab:
        hosts = the_lab.routed(RATE_BPS, QUEUE_BYTES)
        secret = secret_file(tmp_path)
        server = the_lab.server(hosts.server_ns, hosts.server_ip, secret)

        def probe_tcp(out: Path, *flags: str) -> list[str]:
            return [
                "ip", "netns", "exec", hosts.client_ns, sys.executable, "-m", "tcpeval",
                "probe", "tcp", server, "--secret-file", str(secret), "--out", str(out),
                "--no-plots", *flags,
            ]  # fmt: skip

        yield the_lab, probe_tcp


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done


def test_intervals_totals_logfile_and_progress_off_a_terminal(routed, tmp_path: Path) -> None:
    """-t 3 -i 1 -P 2: three intervals of one second each, per stream and [SUM], then a
    sender and a receiver total per stream and summed, all in the log file and nothing on
    stdout; with --progress auto and no terminal, a progress line per interval on stderr."""
    log = tmp_path / "probe.log"
    _, probe_tcp = routed
    done = run(probe_tcp(tmp_path / "out", "-t", "3", "-i", "1", "-P", "2", "--logfile", str(log)))
    assert done.stdout == ""
    text = log.read_text()
    intervals, _, table = text.partition("- - -")
    interval_rows = [m.groups() for m in map(ROW.match, intervals.splitlines()) if m]
    bounds = [(start, end) for _, start, end in interval_rows]
    assert bounds == [(f"{i}.00", f"{i + 1}.00") for i in range(3) for _ in range(3)], text
    assert [who for who, _, _ in interval_rows] == ["0", "1", "SUM"] * 3
    totals = [line for line in table.splitlines() if line.endswith(("sender", "receiver"))]
    assert [line.split()[-1] for line in totals] == ["sender", "receiver"] * 3, text
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 3, done.stderr
    result = load(tmp_path / "out")
    assert len(result.summary["flows"]) == 2


def test_json_document_omits_the_first_second_from_its_totals(routed, tmp_path: Path) -> None:
    """-t 2 -O 1 -J: the test runs 3 s; the first interval is marked omitted and its bytes
    are not in the totals, which cover the 2 s after it at the bottleneck's rate."""
    out = tmp_path / "out"
    _, probe_tcp = routed
    done = run(probe_tcp(out, "-t", "2", "-O", "1", "-J"))
    document = json.loads(done.stdout)
    intervals = document["intervals"]
    assert [i["sum"]["omitted"] for i in intervals[:3]] == [True, False, False]
    end = document["end"]["forward"]
    result = load(out)
    delivered = sum(f["bytes_delivered"] for f in result.summary["flows"])
    first_second = delivered - end["sum_received"]["bytes"]
    # What the first second carried: the bottleneck's second less slow start's first round
    # trips (about 0.1 s at this 10 ms RTT), so within 15% of a full second's payload.
    assert abs(first_second - PAYLOAD_RATE_BPS / 8) <= 0.15 * PAYLOAD_RATE_BPS / 8, end
    # After the omit the link is full: the receiver's rate within 5% of the payload rate.
    rate = end["sum_received"]["rate_bps"]
    assert abs(rate - PAYLOAD_RATE_BPS) <= 0.05 * PAYLOAD_RATE_BPS, end
    assert end["sum_received"]["seconds"] == pytest.approx(2.0, abs=0.2)


def test_bidir_json_stream_reports_both_directions(routed, tmp_path: Path) -> None:
    """--bidir --json-stream -t 2: one JSON object per line (start, intervals, end), both
    directions non-zero, and totals equal to each direction's result directory (same
    counts, so no tolerance), the sender's within 1% of them (all it sent was delivered)."""
    out = tmp_path / "out"
    _, probe_tcp = routed
    done = run(probe_tcp(out, "-t", "2", "--bidir", "--json-stream"))
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert events[0]["event"] == "start"
    assert events[-1]["event"] == "end"
    directions = {e["data"]["direction"] for e in events if e["event"] == "interval"}
    assert directions == {"forward", "reverse"}
    for direction, end in events[-1]["data"].items():
        result = load(out / direction)
        delivered = sum(f["bytes_delivered"] for f in result.summary["flows"])
        assert end["sum_received"]["bytes"] == delivered > 0
        assert abs(end["sum_sent"]["bytes"] - delivered) <= 0.01 * delivered, end


def test_ctrl_c_stops_both_directions_and_keeps_what_they_measured(routed, tmp_path: Path) -> None:
    """SIGINT to the command alone (not its process group, as `kill -INT` sends it) during
    an 8 s --bidir test: it ends within 5 s with both directions' totals printed and both
    results saved as interrupted."""
    the_lab, probe_tcp = routed
    out = tmp_path / "out"
    command = probe_tcp(out, "-t", "8", "--bidir", "-i", "0", "--progress", "always")
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    the_lab.processes.append(process)
    assert process.stderr is not None
    first = process.stderr.readline()
    assert first.startswith("["), first
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=5)
    assert process.returncode == 0, stderr
    assert stdout.count("sender") == 2, stdout
    for direction in ("forward", "reverse"):
        summary = load(out / direction).summary
        assert summary["backend"]["details"]["interrupted"], direction
        assert summary["backend"]["duration_s"] < 6, direction


def test_interval_figures_sum_streams_and_mark_the_omitted() -> None:
    raw = BinaryInterval(
        start_ns=1_000_000_000,
        end_ns=2_000_000_000,
        streams=[
            StreamInterval(id=0, bytes=1000, retransmits=2, cwnd_pkts=10, mss_bytes=1000,
                           rtt_us=4000),
            StreamInterval(id=1, bytes=3000, retransmits=1, cwnd_pkts=20, mss_bytes=1000,
                           rtt_us=2000),
        ],
    )  # fmt: skip
    shown = figures(raw, "forward", omit_s=2.0)
    assert (shown.sum.bytes, shown.sum.rate_bps) == (4000, 32_000)
    assert (shown.sum.retransmits, shown.sum.cwnd_bytes, shown.sum.rtt_ms) == (3, 30_000, 3.0)
    assert (shown.sum.omitted, shown.streams[0].omitted) == (True, True)
    assert not figures(raw, "forward", omit_s=1.5).sum.omitted
    receiving = BinaryInterval(start_ns=0, end_ns=10**9, streams=[StreamInterval(id=0, bytes=8)])
    assert figures(receiving, "reverse", 0.0).sum.retransmits is None
