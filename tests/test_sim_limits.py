"""What a simulation may take and how it can be watched and stopped: memory estimated
before the run and refused above the budget, naming the key; finished flows cost no samples;
windows bounded by the path; an allocation failure in the core is a MemoryError; progress is
visible and Ctrl-C stops the core cleanly."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import small_scenario
from tcpeval import _core
from tcpeval.backends.sim.memory import default_budget_bytes, estimate_memory
from tcpeval.backends.sim.progress import simulate_watched
from tcpeval.cli import app
from tcpeval.scenario import ScenarioError, parse_scenario, resolution, resolve


def base(**changes: object) -> dict[str, object]:
    scenario = {
        "duration": "1s",
        "bottleneck": {"rate": "10Mbps", "queue": "50pkt"},
        "flow": [{"cc": "reno", "rtt": "20ms"}],
    }
    return scenario | changes


def test_a_run_beyond_the_budget_is_refused_naming_the_key() -> None:
    """1 µs samples for 100 s needed ~25 GB, and took it."""
    scenario = base(duration="100s", sample_interval="1us")
    with pytest.raises(ScenarioError) as refused:
        tcpeval.simulate(scenario)
    assert refused.value.field == "sample_interval"
    assert refused.value.value == "1us"
    assert "GB of memory" in refused.value.reason


def test_web_flows_are_charged_to_their_arrival_rate(tmp_path: Path) -> None:
    web = {"cc": "reno", "rtt": "20ms", "arrival_rate": 2000.0, "mean_size": "10MB"}
    scenario = parse_scenario(base(duration="50s", sample_interval="1ms", web=[web]))
    estimate = estimate_memory(scenario, resolution(scenario))
    assert estimate.largest()[0] == "web[0].arrival_rate"


def test_max_memory_lowers_the_budget(tmp_path: Path) -> None:
    path = tmp_path / "s.toml"
    path.write_text(
        'duration = "10s"\nsample_interval = "1ms"\n[bottleneck]\nrate = "10Mbps"\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    out = str(tmp_path / "out")
    run = CliRunner().invoke(app, ["sim", str(path), "--out", out, "--max-memory", "10MB"])
    assert run.exit_code == 2
    assert run.stderr.startswith("error: sample_interval: '1ms' makes the run need about ")
    assert default_budget_bytes() > 10**8


def test_finished_flows_cost_no_samples() -> None:
    """A cubic flow with [[web]] traffic kept a row per sample for every flow ever started."""
    web = {"cc": "cubic", "rtt": "20ms", "arrival_rate": 5.0, "mean_size": "20KB"}
    result = tcpeval.simulate(base(duration="60s", web=[web]))
    flows, samples = len(result.summary["flows"]), 600
    assert flows > 200
    assert len(result.flows) < 0.1 * flows * samples
    rows = result.flows.groupby("flow")["t_s"].agg(["min", "max"])
    for flow in result.summary["flows"][1:]:
        first, last = rows.loc[flow["id"]]
        assert first >= flow["start_s"] - 1e-9
        assert last <= flow["end_s"] + 0.1 + 1e-9


def test_a_huge_initial_window_is_bounded_by_the_path() -> None:
    result = tcpeval.simulate(base(flow=[{"cc": "reno", "rtt": "20ms", "initial_cwnd": 1000000}]))
    assert result.flows["inflight_pkts"].max() <= 10_000


def test_the_core_out_of_memory_is_a_memory_error_not_an_abort() -> None:
    """Under a memory cap the core aborted the interpreter (exit 134)."""
    scenario = parse_scenario(base(duration="20s", sample_interval="1us"))
    code = (
        "import sys; from tcpeval import _core\n"
        "try:\n    _core.simulate(sys.stdin.read())\n"
        "except MemoryError as error:\n    print('MemoryError:', error)\n"
    )
    command = ["prlimit", "--as=1200000000", sys.executable, "-c", code]
    run = subprocess.run(
        command, input=json.dumps(resolve(scenario)), capture_output=True, text=True, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("MemoryError: out of memory: the time series could not grow")


def test_progress_is_readable_while_the_core_runs_and_stop_ends_it() -> None:
    scenario = parse_scenario(base(duration="3000s", bottleneck={"rate": "1Gbps"}))
    progress = _core.Progress()
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            _core.simulate(json.dumps(resolve(scenario)), progress)
        except KeyboardInterrupt as stopped:
            outcome.append(stopped)

    worker = threading.Thread(target=run)
    worker.start()
    while progress.now_ns == 0:
        time.sleep(0.05)
    progress.stop()
    worker.join()
    assert progress.events > 0
    assert 0 < progress.now_ns < scenario.duration.ns
    assert len(outcome) == 1


@pytest.fixture
def ctrl_c_as_at_a_terminal() -> Iterator[None]:
    """Ctrl-C raising KeyboardInterrupt here, and reaching the commands started here as it
    would at a terminal, however the tests were started: a shell starts a background job (`make
    test &`) with SIGINT ignored, which Python and every child it starts then keep."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


@pytest.mark.usefixtures("ctrl_c_as_at_a_terminal")
def test_ctrl_c_in_the_watcher_stops_the_core() -> None:
    scenario = parse_scenario(base(duration="3000s", bottleneck={"rate": "1Gbps"}))
    threading.Timer(1.0, lambda: signal.raise_signal(signal.SIGINT)).start()
    with pytest.raises(KeyboardInterrupt):
        simulate_watched(json.dumps(resolve(scenario)), scenario.duration.ns, show=False)
    for thread in threading.enumerate():
        if thread.name == "tcpeval-core":
            thread.join(10)
            assert not thread.is_alive()


@pytest.mark.usefixtures("ctrl_c_as_at_a_terminal")
def test_ctrl_c_of_tcpeval_sim_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "long.toml"
    path.write_text(
        'duration = "3000s"\n[bottleneck]\nrate = "1Gbps"\n[[flow]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    out = tmp_path / "out"
    command = [sys.executable, "-m", "tcpeval", "sim", str(path), "--out", str(out)]
    sim = subprocess.Popen(command, stderr=subprocess.PIPE, text=True)
    time.sleep(5.0)  # the import and the start of the run; it lasts minutes
    sim.send_signal(signal.SIGINT)
    _, stderr = sim.communicate(timeout=60)
    assert sim.returncode == 130, stderr
    said = stderr.strip().splitlines()
    assert said[0].startswith("estimated wall time: about")  # above a terminal's 30 s
    assert said[-1] == f"interrupted: nothing written to {out}"
    assert list(tmp_path.iterdir()) == [path]


def test_small_runs_are_unchanged_by_the_watcher() -> None:
    first, second = (tcpeval.simulate(small_scenario()) for _ in range(2))
    assert first.flows.equals(second.flows)
