"""Slow start after idle (tcpeval/diagnose/idle.py): the arithmetic, the rule on made-up
exchanges, and on a lab path (real kernel sockets in namespaces the test makes) with the
server's `net.ipv4.tcp_slow_start_after_idle` on and off: about 12 s each."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from diagnose_cases import Case, case_target
from tcpeval.diagnose.idle import (
    IdleEvidence,
    completion_s,
    exchange_plan_ns,
    idle_evidence,
    idle_restart,
    initial_window_pkts,
    measure_idle,
)
from tcpeval.diagnose.verdict import decide
from test_diagnose_verdict import evidence, tcp

MSS = 1448
RTT_S = 0.040
RATE_BPS = 100e6


def test_a_warm_window_takes_one_rtt_plus_the_size_at_the_capacity() -> None:
    assert completion_s(1_000_000, MSS, float("inf"), RTT_S, RATE_BPS) == pytest.approx(
        RTT_S + 1_000_000 * 8 / RATE_BPS, rel=1e-12
    )


def test_slow_start_takes_a_round_trip_per_doubling() -> None:
    # 150 segments from 10: rounds of 10, 20 and 40 (70 sent), then the window of 80 holds
    # the 80 left: three extra round trips, and the last 80 segments at the capacity.
    expected_s = 4 * RTT_S + 80 * MSS * 8 / RATE_BPS
    assert completion_s(150 * MSS, MSS, 10, RTT_S, RATE_BPS) == pytest.approx(expected_s)
    # 1000 segments: the path holds 345 (100 Mb/s × 40 ms), so after rounds of 10 … 320
    # (630 sent) the window of 640 fills it and the remaining 370 flow at the capacity.
    expected_s = 7 * RTT_S + 370 * MSS * 8 / RATE_BPS
    assert completion_s(1000 * MSS, MSS, 10, RTT_S, RATE_BPS) == pytest.approx(expected_s)


def test_the_initial_window_follows_rfc_6928() -> None:
    # min(10·MSS, max(2·MSS, 14600 B)): ten segments of an Ethernet MSS, two jumbo ones.
    assert initial_window_pkts(1448) == 10
    assert initial_window_pkts(536) == 10
    assert initial_window_pkts(8948) == 2


def _report(latencies_ms: list[float], cwnds: list[int], rto_ms: float = 250) -> dict[str, Any]:
    """An rr report made with the step's plan: a first response, warm ones, ones after idle."""
    plan = exchange_plan_ns(RTT_S)
    assert len(latencies_ms) == len(cwnds) == len(plan)
    return {
        "exchanges": [
            {
                "index": i,
                "think_ns": think,
                "latency_ns": round(ms * 1e6),
                "cwnd_at_start_pkts": cwnd,
                "rto_at_start_us": round(rto_ms * 1e3),
                "mss_bytes": MSS,
                "window_at_start_bytes": 4 << 20,
            }
            for i, (think, ms, cwnd) in enumerate(zip(plan, latencies_ms, cwnds, strict=True))
        ],
        "warnings": [],
    }


def _evidence(latencies_ms: list[float], cwnds: list[int], **kw: Any) -> IdleEvidence:
    return idle_evidence(_report(latencies_ms, cwnds, **kw), 256_000, RTT_S, RATE_BPS)


def test_responses_slowed_by_a_restarted_window_hold() -> None:
    e = _evidence([200, 80, 41, 41, 200, 201, 199], [10, 135, 300, 320, 10, 11, 11])
    finding = idle_restart(e)
    assert finding.holds, finding
    assert e.warm_ms == 41
    assert e.after_idle_ms == 200
    assert e.cwnd_warm_pkts == 300
    assert e.cwnd_after_idle_pkts == 11
    assert any("tcp_slow_start_after_idle=0" in line for line in finding.advice)


def test_the_responses_finding_comes_before_the_bulk_limit() -> None:
    # The user asked about responses (--response-size): a restart that slows them is the
    # answer, the full link of the bulk test the second name.
    idle = _evidence([200, 80, 41, 41, 200, 201, 199], [10, 135, 300, 320, 10, 11, 11])
    verdict = decide(evidence(tcp(93e6), idle=idle))
    assert [f.limit for f in verdict.ranked] == ["idle_restart", "path_capacity"]
    assert any("tcp_slow_start_after_idle=0" in line for line in verdict.advice)
    kept = _evidence([200, 80, 41, 41, 200, 200, 200], [10, 135, 300, 320, 320, 330, 330])
    assert decide(evidence(tcp(93e6), idle=kept)).limit == "path_capacity"


def test_a_window_kept_across_idle_is_not_a_restart_even_when_slower() -> None:
    finding = idle_restart(
        _evidence([200, 80, 41, 41, 200, 200, 200], [10, 135, 300, 320, 320, 330, 330])
    )
    assert not finding.holds
    assert "did not shrink" in finding.headline


def test_gaps_within_the_rto_cannot_restart() -> None:
    e = _evidence([200, 80, 41, 41, 200, 201, 199], [10, 135, 300, 320, 10, 11, 11], rto_ms=3000)
    finding = idle_restart(e)
    assert not finding.holds
    assert "RTO" in finding.headline


def test_a_response_that_fits_the_restarted_window_costs_nothing() -> None:
    small = _report([41, 41, 41, 41, 41, 41, 41], [10, 20, 20, 20, 10, 10, 10])
    finding = idle_restart(idle_evidence(small, 10_000, RTT_S, RATE_BPS))
    assert not finding.holds
    assert "fits" in finding.headline


def test_a_restart_that_does_not_show_in_the_times_is_not_named() -> None:
    # Slow start from 11 packets should add about 140 ms; 10 ms is less than half of it.
    finding = idle_restart(
        _evidence([200, 80, 41, 41, 51, 51, 51], [10, 135, 300, 320, 10, 11, 11])
    )
    assert not finding.holds
    assert "should add" in finding.headline


@pytest.mark.parametrize(("slow_start_after_idle", "found"), [(1, True), (0, False)])
def test_idle_restart_is_found_when_the_server_restarts(
    slow_start_after_idle: int, found: bool, tmp_path: Path
) -> None:
    # The server (the far end, in the path's receiver namespace) sends the responses; its
    # namespace's sysctl decides whether it restarts. 256 kB is 177 segments: from a restart
    # window of 10, four round trips of slow start more than a warm window needs.
    # CUBIC: Linux skips the restart for a stack with its own control loop (BBR), and BBR
    # may be the host's default, which a new namespace inherits.
    sysctl = {
        "net.ipv4.tcp_slow_start_after_idle": str(slow_start_after_idle),
        "net.ipv4.tcp_congestion_control": "cubic",
    }
    with case_target(Case("idle_restart", receiver_sysctls=sysctl)) as (target, _):
        # The lab path's own RTT and rate: the test runs this step alone.
        e = measure_idle(target, 256_000, RTT_S, RATE_BPS, tmp_path)
    finding = idle_restart(e)
    assert finding.holds == found, (finding, e)
    assert e.cwnd_warm_pkts is not None
    assert e.cwnd_after_idle_pkts is not None
    if found:
        # Linux's restart: the window at most the initial window, or halved per RTO idle.
        assert e.cwnd_after_idle_pkts <= max(initial_window_pkts(MSS), e.cwnd_warm_pkts // 2)
    else:
        assert e.cwnd_after_idle_pkts >= e.cwnd_warm_pkts


@pytest.mark.parametrize(
    ("size", "message"),
    [
        ("0B", "error: response-size: '0B' must be 1B to 64MB"),
        ("65MB", "error: response-size: '65MB' must be 1B to 64MB"),
        ("lots", "error: response-size: 'lots' "),
    ],
)
def test_a_bad_response_size_is_one_error_line(size: str, message: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tcpeval.cli import app

    secret = tmp_path / "secret"
    secret.write_text("x" * 32)
    args = ["diagnose", "192.0.2.1", "--secret-file", str(secret), "--out", str(tmp_path / "o")]
    done = CliRunner().invoke(app, [*args, "--response-size", size])
    assert done.exit_code == 2
    assert done.output.strip().startswith(message), done.output
