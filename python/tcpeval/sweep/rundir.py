"""One run of a sweep, written atomically into `DIR/runs/<run_id>/`.

A run directory holds `params.json` plus either the result (`summary.json`, `summary.parquet`,
`flows.parquet`, `links.parquet`) or `error.json`, and the manifest of them all. It is put together
in `DIR/.staging/` and swapped into place when whole (layout.publish_directory), so a killed sweep
leaves only whole runs; one damaged afterwards (a file truncated or deleted) fails its manifest's
check and counts as not run. `execute` is what a worker (a local process or a Dask worker) runs; it
needs DIR on a filesystem it can write, and the backend object (it is sent along, so a backend
registered only in the caller's process runs too).
"""

from __future__ import annotations

import json
import shutil
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval.backends import Backend, as_scenario, run_on
from tcpeval.layout import (
    ERROR_FILE,
    PARAMS_FILE,
    RUNS_DIR,
    STAGING_DIR,
    SUMMARY_TABLE,
    damage,
    publish_directory,
    read_manifest,
)
from tcpeval.result import Result
from tcpeval.scenario import ScenarioError
from tcpeval.sweep.grid import RunSpec


@dataclass(frozen=True)
class Outcome:
    """How a run ended: `error` is None when its result was written."""

    run_id: str
    error: str | None = None


def execute(spec: RunSpec, sweep_dir: str, backend: Backend) -> Outcome:
    """Run one point on `backend` and write its directory; a run that raises writes
    `error.json`. The sweep checked beforehand that the backend supports every point."""
    root = Path(sweep_dir)
    if is_complete(root, spec.run_id):
        return Outcome(spec.run_id)
    try:
        result = run_on(backend, as_scenario(spec.scenario))
    except Exception as error:
        return record_error(root, spec, one_line(error))
    _publish(root, spec, lambda work: _write_result(work, spec, result))
    return Outcome(spec.run_id)


def record_error(sweep_dir: Path, spec: RunSpec, error: str) -> Outcome:
    """Write the run's directory with `error.json` (`{"run_id", "error"}`) instead of a result."""
    body = {"run_id": spec.run_id, "error": error}
    _publish(sweep_dir, spec, lambda work: _write_json(work / ERROR_FILE, body))
    return Outcome(spec.run_id, error)


RUN_KIND = "run"


def is_complete(sweep_dir: Path, run_id: str) -> bool:
    """A run whose result is in place and whole; a failed run (error.json) is not complete."""
    return state(sweep_dir / RUNS_DIR / run_id) == "complete"


def state(run_dir: Path) -> str:
    """`missing`, `damaged` (its manifest does not check out), `failed` or `complete`."""
    if not run_dir.exists():
        return "missing"
    if damage(run_dir) is not None:
        return "damaged"
    files = (read_manifest(run_dir) or {}).get("files", {})
    return "complete" if SUMMARY_TABLE in files else "failed"


def clear_staging(sweep_dir: Path) -> None:
    """Remove what killed runs left half-written; only one sweep writes into DIR at a time."""
    shutil.rmtree(sweep_dir / STAGING_DIR, ignore_errors=True)


def one_line(error: BaseException) -> str:
    """The error as one line: a ScenarioError as it is, anything else with its type."""
    text = str(error) if isinstance(error, ScenarioError) else f"{type(error).__name__}: {error}"
    last_frame = "" if isinstance(error, ScenarioError) else _where(error)
    return " ".join((text + last_frame).split())


def summary_table(summary: dict[str, Any], run_id: str) -> pd.DataFrame:
    """`summary.parquet`: one row per flow, its fields plus `run_id`, `backend`, `valid`,
    `invalid_reason`, `bottleneck_*` (when the backend knows the bottleneck), `jain_index`,
    `whole_run_jain_index`, the measurement window (`measure_window`, `measure_start_s`,
    `measure_end_s`), `tcpeval_version`, `scenario_sha256` and `wall_seconds`."""
    backend = summary["backend"]
    run = {
        "valid": backend.get("valid", True),
        "invalid_reason": backend.get("invalid_reason"),
        **_prefixed("bottleneck_", summary["bottleneck"]),
        "jain_index": summary["jain_index"],
        "whole_run_jain_index": summary.get("whole_run_jain_index"),
        **_prefixed("measure_", summary.get("measure")),
        "tcpeval_version": summary.get("tcpeval_version"),
        "scenario_sha256": summary.get("scenario_sha256"),
        "wall_seconds": backend["wall_seconds"],
    }
    # A section within a section (the bottleneck's `queue` accounting, in summary.json) is not
    # one value: null here, as it always was.
    run = {name: None if isinstance(value, dict) else value for name, value in run.items()}
    head = {"run_id": run_id, "backend": backend["name"]}
    # Built from one record per flow, in one go: a DataFrame of the flows with the run's
    # values broadcast took five times as long, in every run of a sweep.
    table = pd.DataFrame([head | flow | run for flow in summary["flows"]])
    for name, dtype in table.dtypes.items():
        if pd.api.types.is_object_dtype(dtype) and table[name].isna().all():
            table[name] = table[name].astype("float64")  # all null (completion_s): a number
    return table


def _prefixed(prefix: str, section: dict[str, Any] | None) -> dict[str, Any]:
    return {prefix + key: value for key, value in (section or {}).items()}


def _write_result(work: Path, spec: RunSpec, result: Result) -> None:
    result.write_into(work)
    summary_table(result.summary, spec.run_id).to_parquet(work / SUMMARY_TABLE, index=False)


def _publish(sweep_dir: Path, spec: RunSpec, write: Callable[[Path], None]) -> None:
    """Let `write` fill the run's directory in the staging area, then put it in place (over a
    failed attempt of the same run, never over a complete one: another worker may have
    finished it first)."""

    def write_with_params(work: Path) -> None:
        write(work)
        _write_json(work / PARAMS_FILE, spec.params())

    publish_directory(
        sweep_dir / RUNS_DIR / spec.run_id,
        write_with_params,
        kind=RUN_KIND,
        staging=sweep_dir / STAGING_DIR,
        keep_existing=lambda: is_complete(sweep_dir, spec.run_id),
    )


def _write_json(path: Path, body: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n")


def _where(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    return f" (at {Path(frames[-1].filename).name}:{frames[-1].lineno})" if frames else ""
