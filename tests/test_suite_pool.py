"""A suite's sweeps share one pool of workers; a worker that dies mid-suite costs only its run."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest

from tcpeval import backends
from tcpeval.backends import Problem, refusals
from tcpeval.result import Result
from tcpeval.scenario import Scenario
from tcpeval.suites.runner import run_suite
from tcpeval.sweep import executors

DOOMED_DURATION_NS = 240 * 10**9  # only the Hamilton convergence test runs 240 s when quick


class Model:
    """The model backend under another name (a test): fast, and sent to the workers."""

    name = "model-in-workers"
    description = "the model (a test)"
    runs_per_host = None
    real_time = False

    def available(self) -> str | None:
        return None

    def algorithms(self) -> list[str]:
        return ["reno", "cubic"]

    def refused_keys(self) -> Mapping[str, str]:
        return {}

    def supports(self, scenario: Scenario) -> list[Problem]:
        return refusals(self, scenario)

    def run(self, scenario: Scenario) -> Result:
        result = backends.get("model").run(scenario)
        result.summary["backend"]["name"] = self.name
        return result


class KillsOneWorker(Model):
    """Kills its worker process on one run of the convergence test: cubic at 16 ms."""

    def run(self, scenario: Scenario) -> Result:
        flow = scenario.flow[0]
        if scenario.duration.ns == DOOMED_DURATION_NS and (
            flow.cc.name,
            flow.rtt.ns,
        ) == ("cubic", 16 * 10**6):
            os._exit(3)
        return super().run(scenario)


@pytest.fixture
def pools_made(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The size of each process pool started, in order."""
    made: list[int] = []
    start = executors._process_pool

    def counted(jobs: int) -> ProcessPoolExecutor:
        made.append(jobs)
        return start(jobs)

    monkeypatch.setattr(executors, "_process_pool", counted)
    return made


def test_a_suite_runs_all_its_sweeps_in_one_pool(tmp_path: Path, pools_made: list[int]) -> None:
    run_suite("hamilton", "cubic", tmp_path / "s", quick=True, jobs=2, backend=Model())
    assert pools_made == [2]
    assert len(list((tmp_path / "s").glob("*/runs/*/summary.json"))) == 30


def test_a_worker_killed_mid_suite_fails_its_run_only(
    tmp_path: Path, pools_made: list[int]
) -> None:
    out = tmp_path / "s"
    run_suite("hamilton", "cubic", out, quick=True, jobs=2, backend=KillsOneWorker())

    errors = [json.loads(path.read_text()) for path in out.glob("*/runs/*/error.json")]
    assert [error["error"] for error in errors] == ["the worker process died"]
    assert "flow._.cc=cubic" in errors[0]["run_id"]
    assert (out / "convergence" / "runs" / errors[0]["run_id"]).is_dir()
    assert len(list(out.glob("*/runs/*/summary.json"))) == 29
    assert len(pools_made) == 3  # the first, one for the suspects, one for the rest
    assert (out / "report.html").is_file()
