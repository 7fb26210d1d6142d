"""Running a suite: each test is a sweep of the stack and the baseline over the test's grid,
then the test's measure is taken from every run, then the report.

A suite directory holds `suite.toml` (the suite as run, for the report's rules), `run.json`
(the stack, the baseline, full or quick) and one sweep directory per test, each with
`measures.parquet` (one row per run). Everything is resumable as sweeps are: a second run of
the same command finishes only what is missing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval import backends
from tcpeval.backends import Backend
from tcpeval.layout import MEASURES_FILE, RUN_FILE, SUITE_FILE, publish_file
from tcpeval.report.html import ReportFile, write_report
from tcpeval.result import load as load_result
from tcpeval.scenario import ScenarioError
from tcpeval.suite_files import suite_text
from tcpeval.suites import Suite, SuiteTest, grid_of, load_suite
from tcpeval.suites.measures import MEASURES
from tcpeval.sweep import SuiteProgress, sweep
from tcpeval.sweep.pool import LocalPool
from tcpeval.sweep.runner import checked, worker_count


def run_suite(
    name: str,
    cc: str,
    out: Path,
    *,
    baseline: str | None = None,
    quick: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
    backend: str | Backend = backends.DEFAULT,
) -> ReportFile:
    """Run suite `name` for stack `cc` against `baseline` (default: the suite's) on `backend`
    into `out`; returns its report. A test the backend refuses refuses the whole suite before
    anything runs."""
    suite = load_suite(name)
    chosen = backends.get(backend)
    baseline = baseline or suite.baseline
    stacks = [cc] if cc == baseline else [cc, baseline]
    grids = [grid_of(test, suite, stacks, quick, chosen.real_time) for test in suite.test]
    sizes = _run_counts(suite, grids, chosen)
    out.mkdir(parents=True, exist_ok=True)
    _record(out, suite, cc, baseline, quick, chosen.name)
    # One pool for every test: a worker starts once per suite, not once per sweep.
    with LocalPool(worker_count(jobs, chosen, scheduler)) as pool:
        for index, (test, grid) in enumerate(zip(suite.test, grids, strict=True)):
            test_dir = out / test.name
            shown = SuiteProgress(test.name, test.stack, sum(sizes[:index]), sum(sizes))
            sweep(
                grid,
                test_dir,
                jobs=jobs,
                scheduler=scheduler,
                backend=chosen,
                suite=shown,
                pool=pool,
            )
            write_measures(test_dir, test)
    return write_report(out, baseline=baseline)


def _run_counts(suite: Suite, grids: list[dict[str, Any]], backend: Backend) -> list[int]:
    """Each test's number of runs, every grid checked against the backend first; a test it
    refuses is a ScenarioError naming the test and the backend's reason. Each sweep checks
    its own grid only when it starts: a lab run would otherwise spend minutes on the tests
    before the one it refuses (the l4s suite's Prague or DualPI2), then stop."""
    counts = []
    for test, grid in zip(suite.test, grids, strict=True):
        try:
            counts.append(len(checked(grid, backend)[2]))
        except ScenarioError as error:
            raise ScenarioError(f"suite {suite.name}, test {test.name}", None, str(error)) from None
    return counts


def _record(out: Path, suite: Suite, cc: str, baseline: str, quick: bool, backend: str) -> None:
    publish_file(out / SUITE_FILE, suite_text(suite.name))
    run = {"suite": suite.name, "cc": cc, "baseline": baseline, "quick": quick}
    publish_file(out / RUN_FILE, json.dumps(run | {"backend": backend}, indent=2) + "\n")


def write_measures(test_dir: Path, test: SuiteTest) -> pd.DataFrame:
    """Take the test's measure from every complete run its backend did not void; write and
    return the table."""
    measure = MEASURES[test.measure]
    rows = []
    for run_dir in sorted((test_dir / "runs").iterdir()):
        if not (run_dir / "summary.json").exists():
            continue  # a failed run: error.json says why
        params = json.loads((run_dir / "params.json").read_text())
        result = load_result(run_dir)
        if not result.summary["backend"].get("valid", True):
            continue  # counted and shown by the report (report/dataset.py)
        values = measure(result)
        rows.append({"run_id": params["run_id"], **values})
    # Every run voided or failed: still a table, with the column runs are joined on.
    table = pd.DataFrame(rows) if rows else pd.DataFrame({"run_id": pd.Series(dtype=str)})
    publish_file(test_dir / MEASURES_FILE, table)
    return table
