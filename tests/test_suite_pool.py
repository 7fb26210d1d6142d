"""A suite's sweeps share one pool of workers; a worker that dies mid-suite costs only its run."""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest

from helpers import ModelUnderAnotherName
from tcpeval.report.content import section_view
from tcpeval.report.dataset import load_report_data
from tcpeval.report.verdicts import evaluate
from tcpeval.result import Result
from tcpeval.scenario import Scenario
from tcpeval.suites.runner import run_suite
from tcpeval.sweep import pool

DOOMED_DURATION_NS = 240 * 10**9  # only the Hamilton convergence test runs 240 s when quick


class Model(ModelUnderAnotherName):
    """The model backend under another name (a test): fast, and sent to the workers."""

    name = "model-in-workers"


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


@dataclass(frozen=True)
class SuiteRun:
    out: Path
    pools: list[int]
    """The size of each process pool started, in order."""


def run_counting_pools(out: Path, backend: Model) -> SuiteRun:
    pools: list[int] = []
    start = pool._process_pool

    def counted(jobs: int) -> ProcessPoolExecutor:
        pools.append(jobs)
        return start(jobs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(pool, "_process_pool", counted)
        run_suite("hamilton", "cubic", out, quick=True, jobs=2, backend=backend)
    return SuiteRun(out, pools)


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> SuiteRun:
    return run_counting_pools(tmp_path_factory.mktemp("suite") / "s", Model())


def test_a_suite_runs_all_its_sweeps_in_one_pool(suite: SuiteRun) -> None:
    assert suite.pools == [2]
    assert len(list(suite.out.glob("*/runs/*/summary.json"))) == 30


def test_the_report_shows_every_figure_of_every_test(suite: SuiteRun) -> None:
    data = load_report_data(suite.out)
    verdicts = evaluate(data.frame(), data.rules, axes=data.axes(), baseline=data.baseline)
    views = [section_view(section, data, verdicts) for section in data.sections]
    titles = [panel.title for view in views for panel in view.panels if panel.figure is not None]
    page = (suite.out / "report.html").read_text()
    images = re.findall(r'<img src="data:image/png;base64,[^"]+" alt="([^"]+)"', page)
    assert len(titles) > 10
    assert [unescape(alt).split(": ", 1)[1] for alt in images] == titles


def test_a_worker_killed_mid_suite_fails_its_run_only(tmp_path: Path) -> None:
    out = tmp_path / "s"
    killed = run_counting_pools(out, KillsOneWorker())

    errors = [json.loads(path.read_text()) for path in out.glob("*/runs/*/error.json")]
    assert [error["error"] for error in errors] == ["the worker process died"]
    assert "flow._.cc=cubic" in errors[0]["run_id"]
    assert (out / "convergence" / "runs" / errors[0]["run_id"]).is_dir()
    assert len(list(out.glob("*/runs/*/summary.json"))) == 29
    assert len(killed.pools) == 3  # the first, one for the suspect, one for the rest
    assert (out / "report.html").is_file()
