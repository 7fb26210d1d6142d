"""Running a suite: each test is a sweep of the stack and the baseline over the test's grid,
then the test's measure is taken from every run, then the report.

A suite directory holds `suite.toml` (the suite as run, for the report's rules), `run.json`
(the stack, the baseline, full or quick) and one sweep directory per test, each with
`measures.parquet` (one row per run). Everything is resumable as sweeps are: a second run of
the same command finishes only what is missing.
"""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import pandas as pd

from tcpeval.report.html import ReportFile, write_report
from tcpeval.result import load as load_result
from tcpeval.suites import Suite, SuiteTest, grid_of, load_suite
from tcpeval.suites.layout import MEASURES_FILE, RUN_FILE, SUITE_FILE
from tcpeval.suites.measures import MEASURES
from tcpeval.sweep import sweep


def run_suite(
    name: str,
    cc: str,
    out: Path,
    *,
    baseline: str = "reno",
    quick: bool = False,
    jobs: int | None = None,
    scheduler: str | None = None,
) -> ReportFile:
    """Run suite `name` for stack `cc` against `baseline` into `out`; returns its report."""
    suite = load_suite(name)
    stacks = [cc] if cc == baseline else [cc, baseline]
    out.mkdir(parents=True, exist_ok=True)
    _record(out, suite, cc, baseline, quick)
    for test in suite.test:
        test_dir = out / test.name
        sweep(grid_of(test, suite, stacks, quick), test_dir, jobs=jobs, scheduler=scheduler)
        write_measures(test_dir, test)
    return write_report(out, baseline=baseline)


def _record(out: Path, suite: Suite, cc: str, baseline: str, quick: bool) -> None:
    text = resources.files("tcpeval.suites").joinpath(f"{suite.name}.toml").read_text()
    (out / SUITE_FILE).write_text(text)
    run = {"suite": suite.name, "cc": cc, "baseline": baseline, "quick": quick}
    (out / RUN_FILE).write_text(json.dumps(run, indent=2) + "\n")


def write_measures(test_dir: Path, test: SuiteTest) -> pd.DataFrame:
    """Take the test's measure from every complete run; write and return the table."""
    measure = MEASURES[test.measure]
    rows = []
    for run_dir in sorted((test_dir / "runs").iterdir()):
        if not (run_dir / "summary.json").exists():
            continue  # a failed run: error.json says why
        params = json.loads((run_dir / "params.json").read_text())
        values = measure(load_result(run_dir))
        rows.append({"run_id": params["run_id"], **values})
    table = pd.DataFrame(rows)
    staging = test_dir / f".{MEASURES_FILE}.tmp"
    table.to_parquet(staging, index=False)
    staging.replace(test_dir / MEASURES_FILE)
    return table
