"""The server's defences: authentication, limits, timeouts, hostile control messages.

The server listens on loopback inside a namespace the test makes; hand-made clients speak the
control protocol (docs/probe.md: 4-byte big-endian length, then JSON) from inside it too.
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tcpeval.lab.netns import listening_address
from tcpeval.probe import ProbeError, TcpSettings, probe_binary, run_tcp
from tcpeval.probe.netns import lab, secret_file

HANDSHAKE_TIMEOUT_MS = 1000


@pytest.fixture
def server(tmp_path: Path):
    with lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        address = the_lab.server(
            hosts.server_ns, hosts.server_ip, secret,
            "--handshake-timeout-ms", str(HANDSHAKE_TIMEOUT_MS), "--max-duration-s", "60",
        )  # fmt: skip
        yield the_lab, hosts, address, secret


def in_ns(ns: str) -> list[str]:
    return ["ip", "netns", "exec", ns]


def client(the_lab, hosts, *args: str, out: Path) -> subprocess.CompletedProcess[str]:
    command = [*in_ns(hosts.client_ns), str(probe_binary()), "tcp", *args, "--out", str(out)]
    return subprocess.run(command, capture_output=True, text=True, timeout=30, check=False)


def test_wrong_secret_is_refused(server, tmp_path: Path) -> None:
    _, hosts, address, _ = server
    stranger = secret_file(tmp_path, "other")
    settings = TcpSettings(server=address, secret_file=str(stranger), duration="1s")
    with pytest.raises(ProbeError, match="not authorised"):
        run_tcp(settings, wrapper=in_ns(hosts.client_ns))


def test_limits_refuse_the_129th_stream_and_a_long_duration(server, tmp_path: Path) -> None:
    the_lab, hosts, address, secret = server
    common = (address, "--secret-file", str(secret))
    done = client(the_lab, hosts, *common, "--streams", "129", out=tmp_path / "a")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: server rejected streams: '129' must be 1..=128 on this server"
    )
    done = client(the_lab, hosts, *common, "--duration-ms", "61000", out=tmp_path / "b")
    assert done.returncode == 2
    assert "duration_ns: '61000000000'" in done.stderr, done.stderr
    # The server goes on serving.
    done = client(the_lab, hosts, *common, "--duration-ms", "300", out=tmp_path / "c")
    assert done.returncode == 0, done.stderr


HOSTILE_CLIENT = r"""
import json, socket, struct, sys, time
host, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
s = socket.create_connection((host, port), timeout=10)
def frame():
    n = struct.unpack(">I", s.recv(4, socket.MSG_WAITALL))[0]
    return json.loads(s.recv(n, socket.MSG_WAITALL))
hello = frame()
start = time.monotonic()
if mode == "silent":
    pass
elif mode == "trickle":
    s.sendall(b"\x00\x00")
elif mode == "huge":
    s.sendall(struct.pack(">I", 2**31) + b"x" * 100)
elif mode == "garbage":
    s.sendall(struct.pack(">I", 9) + b"\xff{garbage")
frames = []
while True:
    header = s.recv(4, socket.MSG_WAITALL)
    if len(header) < 4:
        break
    frames.append(json.loads(s.recv(struct.unpack(">I", header)[0], socket.MSG_WAITALL)))
print(json.dumps({"hello": hello, "frames": frames, "closed_after_s": time.monotonic() - start}))
"""


@pytest.mark.parametrize("mode", ["silent", "trickle", "huge", "garbage"])
def test_hostile_or_silent_clients_get_one_refusal_and_are_dropped(server, mode: str) -> None:
    the_lab, hosts, address, _ = server
    host, port = address.rsplit(":", 1)
    out = the_lab.in_ns(hosts.client_ns, "python3", "-c", HOSTILE_CLIENT, host, port, mode)
    seen = json.loads(out)
    assert seen["hello"]["type"] == "hello"
    assert seen["frames"] == [{"type": "refused", "reason": "not authorised"}]
    if mode in ("silent", "trickle"):
        # Dropped at the handshake deadline, not before and not much after.
        assert HANDSHAKE_TIMEOUT_MS / 1e3 - 0.1 <= seen["closed_after_s"] <= 3.0, seen
    else:
        assert seen["closed_after_s"] < 1.0, seen


def test_server_keeps_serving_after_hostile_clients(server, tmp_path: Path) -> None:
    the_lab, hosts, address, secret = server
    host, port = address.rsplit(":", 1)
    for mode in ("huge", "garbage"):
        the_lab.in_ns(hosts.client_ns, "python3", "-c", HOSTILE_CLIENT, host, port, mode)
    settings = TcpSettings(server=address, secret_file=str(secret), duration="500ms")
    result = run_tcp(settings, wrapper=in_ns(hosts.client_ns))
    assert result.summary["flows"][0]["bytes_delivered"] > 0


def test_a_secret_on_the_command_line_is_impossible_and_loose_files_are_refused(
    tmp_path: Path,
) -> None:
    loose = secret_file(tmp_path, "loose")
    for mode, complaint in ((0o644, "readable by other users"), (0o602, "writable by other users")):
        loose.chmod(mode)
        done = subprocess.run(
            [str(probe_binary()), "serve", "--listen", "127.0.0.1:0", "--secret-file", str(loose)],
            capture_output=True, text=True, timeout=10, check=False,
        )  # fmt: skip
        assert done.returncode == 2
        assert f"{complaint}; chmod 600 it" in done.stderr
    assert (
        "--secret "
        not in subprocess.run(
            [str(probe_binary()), "serve", "--help"], capture_output=True, text=True, check=True
        ).stdout
    )


def test_a_sigterm_to_tcpeval_probe_serve_leaves_nothing_listening(tmp_path: Path) -> None:
    """systemd stops a service with SIGTERM to its main process: `tcpeval probe serve` is the
    server itself, so within 2 s no process of it is left and its port is free again."""
    tcpeval = Path(sys.executable).with_name("tcpeval")
    command = [str(tcpeval), "probe", "serve", "--listen", "127.0.0.1:0",
               "--secret-file", str(secret_file(tmp_path))]  # fmt: skip
    pipes: dict[str, Any] = {"stdout": subprocess.PIPE, "stderr": subprocess.DEVNULL}
    with subprocess.Popen(command, text=True, **pipes) as server:
        try:
            address = listening_address(server, "the probe server")
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=2)
        finally:
            server.kill()
    host, port = address.rsplit(":", 1)
    with socket.socket() as probe, pytest.raises(ConnectionRefusedError):
        probe.connect((host, int(port)))
    assert not [p for p in Path("/proc").glob("[0-9]*/cmdline") if _serving(p)]


def _serving(cmdline: Path) -> bool:
    """Whether /proc/PID/cmdline is a server started as the test's was."""
    try:
        words = cmdline.read_bytes().split(b"\0")
    except OSError:
        return False
    return any(w.endswith(b"tcpeval-probe") for w in words) and b"127.0.0.1:0" in words
