"""The probe server under attack: floods of handshakes, forged log lines, clients that never
let go, descriptors run out. Its users must still be served, and it must stay within bounds.

The server listens on loopback inside a namespace each test makes; the peers
(`probe_peers.py`) run in the same namespace, from loopback addresses of their own (the
namespace's `lo` answers all of 127/8): strangers from 127.0.9.0/24 or from 127.0.100-149,
the legitimate client from 127.0.1.1, a network of its own. The server's log goes to a file.
"""

from __future__ import annotations

import json
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from probe_server import served, start
from tcpeval.probe import probe_binary
from tcpeval.probe.netns import lab

CLIENT_SOURCE = "127.0.1.1"
STRANGER = "127.0.9.1"
# The bound the server must keep under a flood, for every login (the goal as stated).
LOGIN_BOUND_S = 2.0
# The server's own log rate limit (log.rs): lines a source may write per 10 s window.
LINES_PER_SOURCE = 20


FLOODS = {
    # The lock-out first seen: six threads that connect, say nothing, reconnect when dropped.
    "six silent threads": ("silent-threads", "--threads", "6", "--source", STRANGER),
    # Enough connections from enough networks to fill every handshake slot many times over.
    "500 silent connections": ("held-connections", "--count", "500", "--networks", "50"),
}


@pytest.mark.parametrize("flood", FLOODS)
def test_a_silent_flood_never_locks_a_client_out(tmp_path: Path, flood: str) -> None:
    with served(tmp_path) as server:
        flooding = server.start_peers(*FLOODS[flood], "--seconds", "13")
        time.sleep(1.0)  # the flood holds its slots before the client comes
        logins = server.peers("logins", "--source", CLIENT_SOURCE, "--tries", "20")
        flooded = json.loads(flooding.communicate(timeout=30)[0])
    print(f"{flood}: {flooded}; login times (s): {[round(t, 4) for t in logins['times_s']]}")
    assert logins["errors"] == []
    assert len(logins["times_s"]) == 20
    assert max(logins["times_s"]) < LOGIN_BOUND_S
    # The flood was real: the server kept cutting it off and it kept coming back.
    assert flooded["dropped"] >= 20, flooded


def control_characters(text: str) -> set[str]:
    return {c for c in text if c != "\n" and (ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0)}


def test_a_forged_log_line_is_one_escaped_line_and_a_flood_of_them_is_cut(
    tmp_path: Path,
) -> None:
    with served(tmp_path) as server:
        one = server.peers("inject", "--source", STRANGER)
        server.peers("inject", "--source", "127.0.8.1", "--long", "--times", "100")
        time.sleep(0.5)  # the last connection's line is written as its thread ends
    assert one["answer"] == {"type": "refused", "reason": "not authorised"}
    text = server.log.read_text()
    lines = text.splitlines()
    forged = [line for line in lines if line.startswith(f"client {STRANGER}:")]
    print(f"log: {len(lines)} lines, {len(text)} bytes; the forged frame's line: {forged}")
    assert len(forged) == 1
    assert "x\\u{a}client 10.9.9.9:1: FORGED LINE …\\u{1b}[2J" in forged[0]
    assert not any(line.startswith("client 10.9.9.9") for line in lines)
    assert control_characters(text) == set()
    # 100 frames with 65 000-byte type names: the source's budget of lines, each cut short.
    flood = [line for line in lines if line.startswith("client 127.0.8.1:")]
    assert len(flood) == LINES_PER_SOURCE
    assert max(len(line.encode()) for line in flood) < 1100


def test_tests_whose_clients_never_close_leave_no_thread_or_descriptor(tmp_path: Path) -> None:
    with served(tmp_path) as server:
        time.sleep(0.5)
        idle = (server.threads(), server.fds())
        idle_rss = server.rss_bytes()
        holder = server.start_peers("held-tests", "--count", "300")
        assert holder.stdout is not None
        done = json.loads(holder.stdout.readline())
        time.sleep(1.0)  # the bound: idle again within 1 s of the last test's end
        after = (server.threads(), server.fds())
        after_rss = server.rss_bytes()
        logins = server.peers("logins", "--source", CLIENT_SOURCE, "--tries", "1")
        assert holder.stdin is not None
        holder.stdin.close()
    # Memory is shown, not asserted: the allocator keeps freed pages as it sees fit.
    print(
        f"{done['tests']} tests in {done['seconds']:.1f} s, control connections held open; "
        f"threads, fds idle {idle}, 1 s after the last test {after}; "
        f"RSS {idle_rss / 2**20:.1f} MiB, then {after_rss / 2**20:.1f} MiB"
    )
    assert done["tests"] == 300
    # Exact: one thread or descriptor left per test would show as 300 more.
    assert after == idle
    assert logins["errors"] == []


def test_out_of_descriptors_the_accept_loop_waits_and_then_serves(tmp_path: Path) -> None:
    # 40 descriptors: about 17 handshakes (two each) exhaust them, and accept fails (EMFILE).
    wrapper = ("prlimit", "--nofile=40:40", "--")
    with served(tmp_path, wrapper=wrapper) as server:
        flooding = server.start_peers(
            "held-connections", "--count", "100", "--networks", "25", "--seconds", "6"
        )
        time.sleep(1.0)
        cpu_before = server.cpu_s()
        time.sleep(4.0)
        busy = (server.cpu_s() - cpu_before) / 4.0
        flooded = json.loads(flooding.communicate(timeout=30)[0])
        time.sleep(2.5)  # the last flood handshakes time out (2 s) and free their descriptors
        logins = server.peers("logins", "--source", CLIENT_SOURCE, "--tries", "6")
    log = server.log.read_text()
    print(f"flood {flooded}; server CPU while out of descriptors: {busy:.1%} of a core")
    assert "Too many open files" in log
    # A loop that retried at once spun at 73% of a core; one that backs off wakes at most
    # 100 times a second and serves the handshakes the freed descriptors allow.
    assert busy < 0.25
    assert logins["errors"] == []
    assert len(logins["times_s"]) == 6


def test_a_data_connection_that_never_joins_is_answered_by_name(tmp_path: Path) -> None:
    with served(tmp_path, "--idle-timeout-ms", "1000") as server:
        seen = server.peers("join-timeout")
    assert seen["ready"] == "ready"
    assert seen["answer"] == {
        "type": "rejected", "field": "streams", "value": "2",
        "reason": "did not all join within 1000 ms",
    }  # fmt: skip
    assert 0.9 <= seen["after_s"] <= 3.0, seen


def test_an_mss_the_kernel_refuses_is_answered_by_name(tmp_path: Path) -> None:
    request = {
        "type": "start_tcp", "streams": 1, "duration_ns": 1_000_000, "bytes": None,
        "reverse": False, "cc": None, "window_bytes": None, "mss_bytes": 4294967295,
        "pacing_bps": None, "sample_interval_ns": 10_000_000,
    }  # fmt: skip
    with served(tmp_path) as server:
        seen = server.peers("request", "--json", json.dumps(request))
    assert seen["answer"] == {
        "type": "rejected", "field": "mss_bytes", "value": "4294967295",
        "reason": "must be 88..=32767",
    }  # fmt: skip


def test_udp_counts_no_more_than_was_sent_and_memory_is_bounded(tmp_path: Path) -> None:
    with served(tmp_path, "--max-udp-memory-bytes", "48000") as server:
        seen = server.peers("udp-beyond-count", "--sent", "1000")
        too_many = {"type": "start_udp", "size_bytes": 64, "count": 1001, "spacings_ns": [0]}
        refused = server.peers("request", "--json", json.dumps(too_many))
    (train,) = seen["report"]["trains"]
    print(f"asked 1, sent 1000 distinct: {train['received']} received of {train['sent']}")
    assert (train["sent"], train["received"], train["lost"]) == (1, 1, 0)
    assert refused["answer"]["field"] == "count"
    assert refused["answer"]["value"] == "1001"
    reason = refused["answer"]["reason"]
    assert "48048 bytes of the server's memory; it gives a test at most 48000" in reason


# The soak: a measurement through a bottleneck while strangers attack the server beside it.
SOAK_RATE_BPS = 50_000_000
SOAK_QUEUE_BYTES = 150_000
SOAK_SECONDS = 8
# The goal as stated: attacked, the client's rate is within 10% of its quiet rate.
SOAK_RATE_TOLERANCE = 0.10
# Bounds from the server's own limits at their defaults: 64 handshakes (a thread and two
# descriptors each), 4 tests of at most 5 threads and 8 descriptors with one stream (control,
# its watcher, data listener, stream, sampler), 2 threads and 4 descriptors idle, rounded up.
SOAK_MAX_THREADS = 100
SOAK_MAX_FDS = 200
# A few MiB idle; each handshake may hold one 64 KiB frame (4 MiB in all), each test 128 KiB of
# buffer per stream and its history: 64 MiB leaves room for the allocator and nothing else.
SOAK_MAX_RSS_BYTES = 64 << 20
ATTACKS = {
    "silent-threads": ("--threads", "6"),
    "slowloris": ("--threads", "4"),
    "fuzz": ("--threads", "2", "--answer-s", "5"),
    "inject": ("--long", "--times", "400"),
    "oversized": (),
}


def measured_rate_bps(the_lab, client_ns: str, server: str, secret: Path, out: Path) -> float:
    the_lab.in_ns(
        client_ns, str(probe_binary()), "tcp", server, "--secret-file", str(secret),
        "--duration-ms", str(SOAK_SECONDS * 1000), "--out", str(out),
    )  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    return sum(s["bytes_delivered"] * 8e9 / s["end_ns"] for s in summary["streams"])


def test_a_measurement_beside_every_attack_at_once_keeps_its_rate(tmp_path: Path) -> None:
    with lab() as the_lab:
        hosts = the_lab.routed(SOAK_RATE_BPS, SOAK_QUEUE_BYTES)
        # Strangers come over a link of their own, so they load the server, not the path.
        strangers = the_lab.namespace("a")
        their_link, _ = the_lab.link(strangers, "10.77.3.10", hosts.server_ns, "10.77.3.2", "z")
        server = start(the_lab, hosts.server_ns, "0.0.0.0:0", tmp_path)
        server.peer_ns, server.host = strangers, "10.77.3.2"
        address = f"{hosts.server_ip}:{server.port}"
        quiet = measured_rate_bps(the_lab, hosts.client_ns, address, server.secret, tmp_path / "q")
        attacks = {}
        for i, (mode, args) in enumerate(ATTACKS.items()):
            source = f"10.77.3.{20 + i}"  # an address each, all in one /24
            the_lab.in_ns(strangers, "ip", "addr", "add", f"{source}/24", "dev", their_link)
            until = ("--seconds", str(SOAK_SECONDS + 3))
            attacks[mode] = server.start_peers(mode, "--source", source, *until, *args)
        time.sleep(1.0)
        peaks = [0, 0, 0]
        with ThreadPoolExecutor(max_workers=1) as pool:
            measuring = pool.submit(
                measured_rate_bps, the_lab, hosts.client_ns, address, server.secret, tmp_path / "a"
            )
            while not measuring.done():
                figures = (server.threads(), server.fds(), server.rss_bytes())
                peaks = [max(p, f) for p, f in zip(peaks, figures, strict=True)]
                time.sleep(0.25)
            attacked = measuring.result()
        outcomes = {mode: json.loads(p.communicate(timeout=60)[0]) for mode, p in attacks.items()}
    print(
        f"quiet {quiet / 1e6:.1f} Mb/s, attacked {attacked / 1e6:.1f} Mb/s; server peaks: "
        f"{peaks[0]} threads, {peaks[1]} fds, {peaks[2] / 2**20:.1f} MiB; attacks: {outcomes}"
    )
    assert abs(attacked - quiet) <= SOAK_RATE_TOLERANCE * quiet
    assert peaks[0] <= SOAK_MAX_THREADS
    assert peaks[1] <= SOAK_MAX_FDS
    assert peaks[2] <= SOAK_MAX_RSS_BYTES
