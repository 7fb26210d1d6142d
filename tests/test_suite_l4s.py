"""The l4s suite (docs/methodology.md §2.5, §5.8) on the simulator: every test gets a verdict,
Prague's are the ones the simulator gives, and a backend that cannot run a test refuses the
suite before any run."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from tcpeval import simulate
from tcpeval.cli import app
from tcpeval.report.html import ReportFile
from tcpeval.report.verdicts import Verdict
from tcpeval.scenario import ScenarioError
from tcpeval.suites import grid_of, load_suite
from tcpeval.suites.measures import l4s_queue, sparse_delay
from tcpeval.suites.runner import run_suite
from tcpeval.units import parse_duration

RTTS = ("10ms", "50ms", "100ms")


@pytest.fixture(scope="module")
def prague(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, ReportFile]:
    out = tmp_path_factory.mktemp("l4s") / "suite"
    return out, run_suite("l4s", "prague", out, quick=True, jobs=2)


def _verdict(report: ReportFile, test: str, metric: str) -> Verdict:
    (found,) = [v for v in report.verdicts if v.test == test and v.rule.metric == metric]
    return found


def _by_rtt(out: Path, test: str, column: str, stack: str = "prague") -> list[float]:
    """A measure of one stack's runs, in the order of RTTS."""
    measured = pd.read_parquet(out / test / "measures.parquet")
    mine = measured[measured["run_id"].str.contains(f"cc={stack}_")]
    values = {rtt: mine[mine["run_id"].str.contains(f"rtt={rtt}_")][column] for rtt in RTTS}
    return [float(v.iloc[0]) for v in values.values() if len(v)]


def test_every_test_of_the_suite_has_a_verdict_for_the_stack(
    prague: tuple[Path, ReportFile],
) -> None:
    out, report = prague
    judged = {(v.test, v.rule.metric) for v in report.verdicts if v.stack == "prague"}
    assert {test for test, _ in judged} == {t.name for t in load_suite("l4s").test}
    assert all(v.passed is not None for v in report.verdicts if v.stack == "prague")
    # The baseline is CUBIC, the suite's own: harm is measured against CUBIC beside CUBIC.
    assert json.loads((out / "run.json").read_text())["baseline"] == "cubic"


def test_prague_alone_overshoots_the_1ms_step_at_10ms_only(prague: tuple[Path, ReportFile]) -> None:
    # The L queue's sojourn p99 over the whole run: 1.08, 0.96 and 0.60 ms at 10, 50 and
    # 100 ms. The published goal as read (RFC 9332's abstract) is a sub-millisecond *average*,
    # which Prague meets everywhere; the p99 rule is stricter and fails at 10 ms.
    out, report = prague
    latency = _verdict(report, "latency", "l4s_p99_ms")
    assert latency.passed is False
    assert latency.failing == ("10 ms",)
    assert _by_rtt(out, "latency", "l4s_p99_ms") == pytest.approx([1.08, 0.96, 0.60], rel=0.15)
    assert max(_by_rtt(out, "latency", "l4s_mean_ms")) < 1.0


def test_prague_beside_cubic_keeps_l4s_below_1ms_and_shares_roughly_equally(
    prague: tuple[Path, ReportFile],
) -> None:
    out, report = prague
    assert _verdict(report, "coupling", "l4s_p99_ms").passed is True
    assert _by_rtt(out, "coupling", "l4s_p99_ms") == pytest.approx([0.72, 0.64, 0.56], rel=0.15)
    assert _verdict(report, "coupling", "throughput_ratio").passed is True
    ratios = _by_rtt(out, "coupling", "stack_classic_ratio")
    assert ratios == pytest.approx([1.31, 1.48, 0.64], rel=0.15)


def test_prague_harms_cubic_by_less_than_half(prague: tuple[Path, ReportFile]) -> None:
    # Harm = 1 − CUBIC's goodput beside Prague / CUBIC's beside CUBIC: 0.13, 0.19 and −0.21
    # (beside Prague, CUBIC does better at 100 ms, where Prague is still filling the link).
    out, report = prague
    assert _verdict(report, "harm", "classic_mbps").passed is True
    beside_prague = _by_rtt(out, "harm", "classic_mbps")
    beside_cubic = _by_rtt(out, "harm", "classic_mbps", stack="cubic")
    harm = [1 - mine / theirs for mine, theirs in zip(beside_prague, beside_cubic, strict=True)]
    assert harm == pytest.approx([0.13, 0.19, -0.21], abs=0.1)
    assert max(harm) <= 0.5


def test_fq_codel_keeps_the_sparse_flow_beside_prague_out_of_the_queue(
    prague: tuple[Path, ReportFile],
) -> None:
    _out, report = prague
    isolation = _verdict(report, "isolation", "sparse_delay_ms")
    assert isolation.passed is True
    assert isolation.value is not None
    assert 0 <= isolation.value < 0.5


def test_a_backend_that_cannot_run_a_test_refuses_the_suite_before_any_run(
    tmp_path: Path,
) -> None:
    # The models assume drop-tail: the first test's DualPI2 is named, and nothing is written.
    with pytest.raises(ScenarioError, match=r"test latency: .*bottleneck.aqm.*dualpi2"):
        run_suite("l4s", "prague", tmp_path / "s", quick=True, jobs=1, backend="model")
    assert not (tmp_path / "s").exists()


@pytest.mark.parametrize("test", [t.name for t in load_suite("l4s").test])
def test_the_lab_grid_keeps_the_stacks_and_queues_and_is_one_point(test: str) -> None:
    """The real-time grid shortens the runs, and only that: the lab must refuse what it cannot
    run (Prague, DualPI2) rather than be handed something it can."""
    suite = load_suite("l4s")
    (chosen,) = [t for t in suite.test if t.name == test]
    full = grid_of(chosen, suite, ["prague", "cubic"], quick=False)
    lab = grid_of(chosen, suite, ["prague", "cubic"], quick=True, real_time=True)
    assert lab["base"]["bottleneck"] == full["base"]["bottleneck"]
    assert [f["cc"] for f in lab["base"]["flow"]] == [f["cc"] for f in full["base"]["flow"]]
    assert lab["axes"][chosen.stack] == ["prague", "cubic"]
    assert all(len(values) == 1 for axis, values in lab["axes"].items() if axis != chosen.stack)
    assert lab["base"]["duration"] == "30s"


def test_the_command_runs_against_the_suites_baseline_unless_told(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    seen: dict[str, object] = {}

    def recorded(name: str, cc: str, out: Path, **kwargs: object) -> ReportFile:
        seen[name] = kwargs["baseline"]
        return ReportFile(out / "report.html", [])

    monkeypatch.setattr("tcpeval.suites.runner.run_suite", recorded)
    for name in ("l4s", "window"):
        done = CliRunner().invoke(app, ["suite", name, "--cc", "prague", "--out", str(tmp_path)])
        assert done.exit_code == 0, done.output
    assert seen == {"l4s": "cubic", "window": "reno"}


def _cbr_alone(delay: str) -> dict[str, object]:
    return {
        "duration": "5s",
        "bottleneck": {"rate": "100Mbps", "delay": delay, "aqm": "fq_codel"},
        "flow": [{"cc": "cubic", "rtt": "40ms", "window": "2pkt"}],
        "cbr": [{"rate": "1Mbps", "packet_size": "200B"}],
    }


@pytest.mark.parametrize("delay", ["0s", "5ms"])
def test_a_sparse_flow_on_an_idle_path_queues_nothing(delay: str) -> None:
    # Its one-way delay is the link's propagation delay and its 16 µs of serialisation, which
    # the measure takes off; a bulk flow of two packets a round trip leaves no queue behind.
    result = simulate(_cbr_alone(delay))
    measured = sparse_delay(result)
    assert result.summary["sources"][0]["mean_delay_ms"] > parse_duration(delay).seconds * 1e3
    assert measured["sparse_delay_ms"] == pytest.approx(0, abs=0.02)


def test_a_queue_without_an_l4s_queue_has_no_l4s_sojourn() -> None:
    measured = l4s_queue(simulate(_cbr_alone("0s")))
    assert math.isnan(measured["l4s_p99_ms"])
    assert math.isnan(measured["l4s_mean_ms"])
