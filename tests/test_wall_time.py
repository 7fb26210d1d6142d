"""A run's wall time said before it starts: the simulator's estimate follows the packets the links
will carry and names the key that drives it; `--max-time` refuses above it, a terminal is asked,
a script is not; a real-time backend takes its duration; without a terminal a long simulation
says how far it got now and then."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tcpeval import backends, cli
from tcpeval.backends.sim import progress as sim_progress
from tcpeval.backends.sim.wall_estimate import HOP_PACKETS_PER_S, estimate_wall
from tcpeval.backends.wall_time import REAL_TIME_SETUP_S, about, wall_estimate
from tcpeval.cli import app
from tcpeval.scenario import parse_scenario, resolution

runner = CliRunner()
LONG = ["--set", "duration=1h", "--set", "bottleneck.rate=100Gbps"]


def estimated(**changes: object) -> tuple[float, tuple[str, object, float]]:
    scenario = parse_scenario(
        {
            "duration": "10s",
            "bottleneck": {"rate": "1Gbps", "queue": "100%bdp"},
            "flow": [{"cc": "reno", "rtt": "20ms"}],
        }
        | changes
    )
    estimate = estimate_wall(scenario, resolution(scenario))
    return estimate.total, estimate.largest()


@pytest.fixture
def scenario_file(tmp_path: Path) -> Path:
    path = tmp_path / "s.toml"
    path.write_text(
        'duration = "1s"\n[bottleneck]\nrate = "10Mbps"\nqueue = "50pkt"\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    return path


def test_a_full_link_costs_its_packets_at_the_simulators_pace() -> None:
    seconds, (field, value, _) = estimated()
    packets = 1e9 * 10 / 8 / 1500  # 1 Gb/s for 10 s, in packets of the flow's 1500 bytes
    assert seconds == pytest.approx(packets / HOP_PACKETS_PER_S, rel=0.01)  # + per-flow cost
    assert (field, value) == ("bottleneck.rate", "1Gbps")
    longer, _ = estimated(duration="100s")
    assert longer == pytest.approx(10 * seconds, rel=0.01)


def test_a_link_the_traffic_cannot_fill_is_charged_to_what_bounds_the_traffic() -> None:
    # Behind a 100 Mb/s link, the 1 Gb/s bottleneck carries 100 Mb/s: both are that link's doing.
    slow = [{"name": "slow", "rate": "100Mbps", "queue": "100%bdp"}]
    route = [{"cc": "reno", "rtt": "20ms", "route": ["bottleneck", "slow"]}]
    seconds, (field, value, _) = estimated(link=slow, flow=route)
    assert seconds == pytest.approx(2 * 100e6 * 10 / 8 / 1500 / HOP_PACKETS_PER_S, rel=0.01)
    assert (field, value) == ("link[0].rate", "100Mbps")
    # A 20 Mb/s CBR source beside a flow that ends after 1 s: the source's rate bounds most.
    cbr = [{"rate": "20Mbps", "packet_size": "1500B"}]
    short = [{"cc": "reno", "rtt": "20ms", "stop": "1s", "route": ["bottleneck", "slow"]}]
    _, (field, value, _) = estimated(link=slow, flow=short, cbr=cbr)
    assert (field, value) == ("cbr[0].rate", "20Mbps")


def test_a_real_time_backend_takes_its_duration() -> None:
    scenario = parse_scenario(
        {
            "duration": "15s",
            "bottleneck": {"rate": "1Gbps"},
            "flow": [{"cc": "reno", "rtt": "20ms"}],
        }
    )
    estimate = wall_estimate(backends.get("lab"), scenario)
    assert estimate is not None
    assert estimate.total == 15 + REAL_TIME_SETUP_S
    assert wall_estimate(backends.get("model"), scenario) is None


def test_max_time_refuses_naming_the_key_and_writes_nothing(
    scenario_file: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    done = runner.invoke(
        app, ["sim", str(scenario_file), "--out", str(out), *LONG, "--max-time", "5min"]
    )
    assert done.exit_code == 2
    assert "error: bottleneck.rate: '100Gbps' makes the run take about" in done.output
    assert "more than --max-time 5min" in done.output
    assert not out.exists()


def test_a_bad_max_time_is_one_error_naming_it(scenario_file: Path, tmp_path: Path) -> None:
    done = runner.invoke(
        app, ["sim", str(scenario_file), "--out", str(tmp_path / "o"), "--max-time", "5parsecs"]
    )
    assert done.exit_code == 2
    assert "error: --max-time: '5parsecs' has an unknown time unit" in done.output


@pytest.mark.parametrize(("answer", "exit_code"), [("n\n", 2), ("y\n", 0)])
def test_a_terminal_is_asked_above_the_default(
    scenario_file: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    answer: str,
    exit_code: int,
) -> None:
    monkeypatch.setattr(cli, "_on_terminal", lambda: True)
    monkeypatch.setattr(cli, "DEFAULT_MAX_TIME", "1us")  # this small run is "long"
    out = tmp_path / "out"
    done = runner.invoke(
        app, ["sim", str(scenario_file), "--out", str(out), "--no-plots"], input=answer
    )
    assert "Run it anyway?" in done.output
    assert done.exit_code == exit_code
    assert out.exists() == (exit_code == 0)


def test_a_script_is_not_asked_and_is_told_the_estimate(
    scenario_file: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cli, "ANNOUNCE_AFTER_S", 0.0)
    done = runner.invoke(
        app, ["sim", str(scenario_file), "--out", str(tmp_path / "o"), "--no-plots"]
    )
    assert done.exit_code == 0
    assert "estimated wall time: about" in done.output
    assert "(bottleneck.rate = 10Mbps drives it)" in done.output


def test_without_a_terminal_a_long_run_says_how_far_it_got(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sim_progress, "SHOW_AFTER_S", 0.0)
    monkeypatch.setattr(sim_progress, "LINE_EVERY_S", 0.05)
    scenario = parse_scenario(
        {
            "duration": "30s",
            "bottleneck": {"rate": "2Gbps"},
            "flow": [{"cc": "reno", "rtt": "20ms"}],
        }
    )
    resolved = resolution(scenario).resolved
    sim_progress.simulate_watched(json.dumps(resolved), scenario.duration.ns, show=True)
    lines = capsys.readouterr().err.splitlines()
    assert lines, "no progress line in a run of several poll periods"
    assert all(line.startswith("simulated ") and line.endswith(" left") for line in lines)
    assert "of 30.0 s" in lines[0]


def test_durations_are_said_to_two_figures() -> None:
    assert [about(s) for s in (0.034, 59.4, 61, 3800, 1_045_000)] == [
        "0.034 s",
        "59 s",
        "1 min",
        "1.1 h",
        "290 h",
    ]
