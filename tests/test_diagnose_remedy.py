"""The advice as remedies, the arithmetic of their predictions and the near end's sysctls,
without a network: evidence made by hand (test_diagnose_verdict's helpers) and a fake `sysctl`
found through the wrapper's PATH, so no host setting is touched. Adds under a second."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tcpeval.cli import app
from tcpeval.diagnose.host_sysctls import HostSysctlError, apply_near_sysctls
from tcpeval.diagnose.remedy import HostSysctl, remedies
from tcpeval.diagnose.verify import (
    Check,
    ShareRun,
    _capacity_goodput_bps,
    _check,
    granted_buffer_bytes,
)
from tcpeval.models import mathis_goodput_bps
from test_diagnose_verdict import evidence, tcp


def test_a_window_limit_is_lifted_by_both_buffers_and_the_far_ends_sysctls() -> None:
    plan = remedies("receiver_window", evidence(tcp(15e6, rwnd_limited=0.9)), {})
    # 100 Mb/s × 40 ms = 500 kB; twice that is under the 4 MiB floor.
    assert [(r.setting, r.value) for r in plan.per_connection] == [("window", "4194304B")]
    assert {(s.end, s.key) for s in plan.host} == {
        ("far", "net.core.rmem_max"),
        ("far", "net.ipv4.tcp_rmem"),
    }


def test_a_send_buffer_limit_names_this_hosts_sysctls() -> None:
    plan = remedies("send_buffer", evidence(tcp(7e6, sndbuf_limited=0.9)), {})
    assert plan.per_connection[0].setting == "window"
    assert {(s.end, s.key, s.value) for s in plan.host} == {
        ("near", "net.core.wmem_max", "4194304"),
        ("near", "net.ipv4.tcp_wmem", "4096 16384 4194304"),
    }


def test_loss_is_lifted_by_streams_and_the_simulators_best_stack() -> None:
    mathis = mathis_goodput_bps(1448, 0.04, 1e-3)
    e = evidence(tcp(12e6, retransmits=100, loss_rate=1e-3, mathis_bps=mathis))
    plan = remedies("path_loss", e, {"reno": 11e6, "bbr": 94e6})
    # 100 Mb/s over Mathis's 11.2 Mb/s per stream: 9 streams, as the verdict's advice says.
    assert [(r.setting, r.value) for r in plan.per_connection] == [("streams", 9), ("cc", "bbr")]


def test_a_cpu_limit_has_nothing_to_apply_to_one_connection() -> None:
    plan = remedies("cpu", evidence(tcp(30e6)), {})
    assert plan.per_connection == []
    assert plan.not_applied


def details(granted: list[dict[str, int]], server_granted: list[dict[str, int]]) -> dict[str, Any]:
    """A TCP test's details as the driver writes them (the parts that name buffers)."""
    return {"granted": granted, "server_granted": server_granted, "sender": "client"}


def test_the_granted_buffer_is_the_senders_send_and_the_receivers_receive_buffer() -> None:
    client = [{"sndbuf_bytes": 4 << 20, "rcvbuf_bytes": 1 << 20}]
    server = [{"sndbuf_bytes": 1 << 20, "rcvbuf_bytes": 2 << 20}]
    assert granted_buffer_bytes(details(client, server)) == 2 << 20
    # An iperf3 server reports nothing (or zeros): the client's send buffer alone.
    assert granted_buffer_bytes(details(client, [])) == 4 << 20
    unreported = [{"sndbuf_bytes": 0, "rcvbuf_bytes": 0}]
    assert granted_buffer_bytes(details(client, unreported)) == 4 << 20


def window_check(granted_bytes: int, share: float | None, capacity_known: bool = True) -> Check:
    e = evidence(tcp(15e6, rwnd_limited=0.9, min_rtt_ms=40.0))
    e.path.capacity_known = capacity_known
    remedy = remedies("receiver_window", e, {}).per_connection[0]
    run = ShareRun(
        goodput_bps=15e6, srtt_ms=40.0, granted_buffer_bytes=64 << 10, held=0.9, share=share
    )
    return _check(remedy, 90e6, granted_bytes, e, run, {})


def test_a_window_prediction_is_the_measured_share_of_the_granted_buffer_per_rtt() -> None:
    # 1.2 × 256 KiB in flight per 40 ms: 62.9 Mb/s, under the 100 Mb/s path.
    check = window_check(256 << 10, 1.2)
    assert check.predicted_bps == pytest.approx(1.2 * (256 << 10) * 8 / 0.04)
    assert check.measured_gain == pytest.approx(90e6 / 15e6)
    # 4 MiB would allow 1 Gb/s: the path's capacity, as goodput, is the prediction.
    capped = window_check(4 << 20, 1.2)
    capacity = _capacity_goodput_bps(evidence(tcp(15e6)))
    assert capped.predicted_bps == capacity
    assert capacity == pytest.approx(100e6 * 1448 / 1500)
    assert capped.predicted_gain == pytest.approx(capacity / 15e6)


def test_no_share_or_no_capacity_is_said_not_guessed() -> None:
    unknown = window_check(256 << 10, None)
    assert unknown.predicted_bps is None
    assert "held by its buffers 90% of the time" in unknown.basis
    uncapped = window_check(4 << 20, 1.2, capacity_known=False)
    assert uncapped.predicted_bps == pytest.approx(1.2 * (4 << 20) * 8 / 0.04)
    assert "capacity is unknown" in uncapped.basis


@pytest.fixture
def fake_sysctl(tmp_path: Path) -> tuple[str, ...]:
    """A wrapper whose `sysctl` keeps its values as files in tmp_path (reads `-n KEY`,
    writes `-q -w KEY=VALUE`)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    script = bin_dir / "sysctl"
    script.write_text(
        "#!/bin/sh\n"
        f'store="{tmp_path}"\n'
        'if [ "$1" = "-n" ]; then cat "$store/$2" 2>/dev/null || { echo "no $2" >&2; exit 1; }\n'
        'else key="${3%%=*}"; printf "%s\\n" "${3#*=}" > "$store/$key"; fi\n'
    )
    script.chmod(0o755)
    (tmp_path / "net.core.wmem_max").write_text("212992\n")
    (tmp_path / "net.ipv4.tcp_wmem").write_text("4096\t16384\t4194304\n")
    return ("env", f"PATH={bin_dir}:{os.environ['PATH']}")


def test_apply_host_sets_only_the_near_ends_changed_sysctls_and_says_how_to_undo(
    fake_sysctl: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    wanted = [
        HostSysctl(end="near", key="net.core.wmem_max", value="4194304"),
        HostSysctl(end="near", key="net.ipv4.tcp_wmem", value="4096 16384 4194304"),
        HostSysctl(end="far", key="net.core.rmem_max", value="4194304"),
    ]
    changes = apply_near_sysctls(wanted, fake_sysctl)
    # tcp_wmem already holds the value (tabs as the kernel prints them), the far end's is
    # not ours: one change.
    assert [(c.key, c.before, c.after) for c in changes] == [
        ("net.core.wmem_max", "212992", "4194304")
    ]
    assert changes[0].undo == "sysctl -w net.core.wmem_max='212992'"
    printed = capsys.readouterr().err
    assert "net.core.wmem_max: 212992 → 4194304 (undo: sysctl -w net.core.wmem_max='212992')" in (
        printed
    )


def test_a_sysctl_that_cannot_be_read_is_one_error_naming_it(fake_sysctl: tuple[str, ...]) -> None:
    unknown = HostSysctl(end="near", key="net.core.rmem_max", value="1")
    with pytest.raises(HostSysctlError, match=r"^net\.core\.rmem_max: no net\.core\.rmem_max$"):
        apply_near_sysctls([unknown], fake_sysctl)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--verify", "--apply-host"], "error: secret-file: '' is required (except with --iperf3)"),
        (["--apply-host", "--iperf3"], "error: apply-host: '--apply-host' needs --verify"),
    ],
)
def test_diagnose_flags_that_do_not_go_together_are_one_line(
    args: list[str], message: str, tmp_path: Path
) -> None:
    result = CliRunner().invoke(app, ["diagnose", "192.0.2.1", "--out", str(tmp_path), *args])
    assert result.exit_code == 2
    assert result.output.strip() == message
