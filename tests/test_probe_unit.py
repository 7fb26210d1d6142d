"""The static probe `make dist` builds, and the systemd unit docs/probe.md gives for it (read
from that file, so the two cannot drift apart).

The unit is checked three ways: `systemd-analyze verify`; its ExecStart, word for word, started
by hand with `%d` a credentials directory laid out as systemd lays it (the secret mode 400 in a
directory mode 500), serving a `probe tcp` and ending within 2 s of SIGTERM; and started by a
real systemd (`systemd_sandbox.py`: this machine's PID 1 is not systemd), sandbox and all,
stopped in the middle of a test.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from systemd_sandbox import SYSTEMD, Systemd, booted
from tcpeval.lab.netns import listening_address
from tcpeval.probe import TcpSettings, run_tcp
from tcpeval.probe.netns import lab
from tcpeval.processes import die_with_parent

CHECKOUT = Path(__file__).resolve().parents[1]
DOC = CHECKOUT / "docs" / "probe.md"
STATIC_PROBE = CHECKOUT / "dist" / "tcpeval-probe-x86_64-linux-static"
# Where the doc tells the administrator to install the static binary.
INSTALLED_AT = "/usr/local/bin/tcpeval-probe"
# systemd's stop: SIGTERM, then SIGKILL after TimeoutStopSec; the server must not need that.
STOP_BOUND_S = 2
RUN_TIMEOUT_S = 30
SANDBOX_SECRET = "/run/probe-test.secret"


def unit_text() -> str:
    found = re.search(r"```ini\n(# /etc/systemd/system/tcpeval-probe\.service\n.*?)```",
                      DOC.read_text(), re.DOTALL)  # fmt: skip
    assert found, f"no tcpeval-probe.service block in {DOC}"
    return found.group(1)


def service_settings() -> dict[str, str]:
    """The [Service] section's settings (each key is given once in this unit)."""
    section = unit_text().split("[Service]\n", 1)[1].split("\n[", 1)[0]
    lines = [line for line in section.splitlines() if line and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def static_probe() -> Path:
    if not STATIC_PROBE.is_file():
        if os.environ.get("CI"):
            pytest.fail("no static probe in dist/: `make test` runs `make dist` first")
        pytest.skip("no static probe in dist/: `make dist` builds it")
    return STATIC_PROBE


def test_the_static_probe_links_nothing_at_run_time() -> None:
    described = subprocess.run(["file", "-b", str(static_probe())], capture_output=True,
                               text=True, check=True).stdout  # fmt: skip
    assert "statically linked" in described or "static-pie linked" in described, described
    assert "interpreter" not in described, described  # no dynamic loader named


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="needs systemd-analyze")
def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    # verify checks that ExecStart's program exists: the binary stands where the doc puts it.
    unit = tmp_path / "tcpeval-probe.service"
    unit.write_text(unit_text().replace(INSTALLED_AT, str(static_probe())))
    done = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                          text=True, check=False)  # fmt: skip
    # verify exits 0 on unknown keys and bad values too, and says so on stderr.
    assert (done.returncode, done.stderr) == (0, ""), done.stderr


def test_the_units_command_serves_and_ends_within_2_s_of_sigterm(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = service_settings()
    credential, _ = service["LoadCredential"].split(":", 1)
    credentials = tmp_path / "credentials"
    credentials.mkdir()
    secret = credentials / credential
    secret.write_text(os.urandom(32).hex() + "\n")
    secret.chmod(0o400)
    credentials.chmod(0o500)
    words = shlex.split(service["ExecStart"].replace("%d", str(credentials)))
    assert words[0] == INSTALLED_AT, words
    command = [str(static_probe()), *words[1:]]
    port = words[words.index("--listen") + 1].rsplit(":", 1)[1]
    # The client is the static binary too.
    monkeypatch.setenv("TCPEVAL_PROBE", str(static_probe()))
    with lab() as the_lab:
        hosts = the_lab.pair()
        server = subprocess.Popen(
            ["ip", "netns", "exec", hosts.server_ns, *command], stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True, preexec_fn=die_with_parent,
        )  # fmt: skip
        the_lab.processes.append(server)
        listening_address(server, "the unit's ExecStart")
        settings = TcpSettings(
            server=f"{hosts.server_ip}:{port}", secret_file=str(secret), duration="1s"
        )
        result = run_tcp(settings, wrapper=["ip", "netns", "exec", hosts.client_ns])
        assert result.summary["flows"][0]["goodput_mbps"] > 0
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=STOP_BOUND_S)
        left = the_lab.sh("ip", "netns", "pids", hosts.server_ns).split()
        assert not left, f"processes left in the server's namespace: {left}"


# What the sandboxed systemd changes of the doc's unit, and why:
# - DefaultDependencies=no: the default ones pull in the whole boot (sysinit.target, udev,
#   tmpfiles), none of it the unit's business;
# - the secret comes in by ExecStartPre (from that systemd's /run: the host's /tmp, where
#   the test's files are, is hidden from it), not LoadCredential: systemd 252 booted this way
#   makes the credentials directory root's, mode 700, for every service user (DynamicUser or
#   not), so the credential itself is covered by the ExecStart test above only.
HARNESS = """[Unit]
DefaultDependencies=no
[Service]
LoadCredential=
RuntimeDirectory=tcpeval-probe
ExecStartPre=+/bin/sh -c 'install -m 400 -o $(stat -c %%u $RUNTIME_DIRECTORY) \\
    {secret} $RUNTIME_DIRECTORY/probe.secret'
ExecStart=
ExecStart={command}
"""


@pytest.mark.skipif(not SYSTEMD.exists(), reason="needs systemd installed (not as PID 1)")
def test_systemd_starts_the_sandboxed_unit_and_stops_it_mid_test(tmp_path: Path) -> None:
    service = service_settings()
    words = shlex.split(service["ExecStart"].replace("%d", "%t/tcpeval-probe"))
    command = shlex.join([str(static_probe()), *words[1:]])
    secret = tmp_path / "secret"
    secret.write_text(os.urandom(32).hex() + "\n")
    secret.chmod(0o600)
    port = words[words.index("--listen") + 1].rsplit(":", 1)[1]
    with booted(f"tcpeval-test-{os.getpid()}") as systemd:
        systemd.run("sh", "-c", f"umask 077 && cat > {SANDBOX_SECRET}", stdin=secret.read_text())
        systemd.add_unit("tcpeval-probe.service", unit_text())
        systemd.add_unit("tcpeval-probe.service.d/harness.conf",
                         HARNESS.format(secret=SANDBOX_SECRET, command=command))  # fmt: skip
        systemd.run("systemctl", "daemon-reload")
        started = systemd.run("systemctl", "start", "tcpeval-probe", check=False)
        journal = systemd.run("journalctl", "-u", "tcpeval-probe", "-o", "cat").stdout
        assert started.returncode == 0, journal
        # Type=simple: started is not yet listening.
        _wait_for_sockets(systemd, "state", "listening", f"sport = :{port}")
        shown = systemd.run("systemctl", "show", "tcpeval-probe", "-p", "MainPID").stdout
        main_pid = shown.strip().removeprefix("MainPID=")
        # DynamicUser took effect: the server runs as a user of its own, not root.
        uid = systemd.run("stat", "-c", "%u", f"/proc/{main_pid}").stdout.strip()
        assert int(uid) > 0, uid
        client = subprocess.Popen(
            systemd.net(str(static_probe()), "tcp", f"127.0.0.1:{port}",
                        "--secret-file", str(secret), "--reverse", "--duration-ms", "20000",
                        "--out", str(tmp_path / "raw")),
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        try:
            # A test under way: control and data connections (on a port of the server's
            # choosing), both ends of each in this namespace.
            _wait_for_sockets(systemd, "state", "established", count=4)
            stop_at = time.monotonic()
            systemd.run("systemctl", "stop", "tcpeval-probe")
            stopped_s = time.monotonic() - stop_at
        finally:
            client.kill()
            client.communicate()
        state = systemd.run("systemctl", "show", "tcpeval-probe", "-p", "Result",
                            "-p", "ExecMainStatus", "-p", "ControlGroup").stdout  # fmt: skip
        listening = systemd.run("ss", "-Hltn", f"sport = :{port}").stdout
    assert stopped_s < STOP_BOUND_S, stopped_s
    assert "Result=success" in state, state
    assert "ExecMainStatus=0" in state, state
    assert not listening.strip(), listening


def _wait_for_sockets(systemd: Systemd, *condition: str, count: int = 1) -> None:
    """Until `count` TCP sockets of the namespace meet `condition` (an ss filter)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while time.monotonic() < deadline:
        if len(systemd.run("ss", "-Htan", *condition).stdout.splitlines()) >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"fewer than {count} TCP sockets {condition} in {RUN_TIMEOUT_S} s")
