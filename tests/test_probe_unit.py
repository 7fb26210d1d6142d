"""The static probe `make dist` builds, and the systemd unit docs/probe.md gives for it (read
from that file, so the two cannot drift apart).

This machine's PID 1 is not systemd, so the unit is not started by a service manager: the
sandboxing options are checked by `systemd-analyze verify` only, and what the service runs —
the unit's ExecStart, word for word, with `%d` a credentials directory laid out as systemd
lays it (the secret mode 400 in a directory mode 500) — is started here by hand.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import signal
import subprocess
from pathlib import Path

import pytest

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
