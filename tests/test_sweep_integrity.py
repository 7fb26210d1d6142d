"""What a sweep resumes and what it shares: a run counts as done
only when its manifest checks out; damaged runs are re-run and counted, and left out (named) by
`load` and `report`; one sweep at a time per directory; workers die with their sweep."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import small_scenario
from tcpeval.cli import app
from tcpeval.layout import LOCK_FILE
from tcpeval.processes import held
from tcpeval.scenario import ScenarioError
from tcpeval.store import DamagedRuns


def grid() -> dict[str, Any]:
    base = small_scenario() | {"duration": "1s"}
    return {"repeats": 1, "base": base, "axes": {"bottleneck.rate": ["10Mbps", "20Mbps", "30Mbps"]}}


def runs(out: Path) -> list[Path]:
    return sorted((out / "runs").iterdir())


def damage_three(out: Path) -> list[str]:
    """Truncate a summary.parquet, delete a params.json, truncate a flows.parquet."""
    first, second, third = runs(out)
    for path, keep in ((first / "summary.parquet", 10), (third / "flows.parquet", 20)):
        path.write_bytes(path.read_bytes()[:keep])
    (second / "params.json").unlink()
    return [first.name, second.name, third.name]


def test_resume_reruns_damaged_runs_and_says_how_many(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    tcpeval.sweep(grid(), out, jobs=1, progress=False)
    rows = len(tcpeval.load(out))
    damage_three(out)
    report = tcpeval.sweep(grid(), out, jobs=1, progress=False)
    assert (report.done, report.skipped, report.damaged) == (3, 0, 3)
    assert len(tcpeval.load(out)) == rows


def test_load_and_report_leave_damaged_runs_out_and_name_them(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    tcpeval.sweep(grid(), out, jobs=1, progress=False)
    whole = tcpeval.load(out)
    first, *_ = damage_three(out)
    with pytest.warns(DamagedRuns, match=rf"3 damaged run\(s\) left out \(run {first}: "):
        assert len(tcpeval.load(out)) == 0
    (runs(out)[0] / "summary.parquet").unlink()  # and a run that lost a file only
    assert len(whole) > 0
    report = CliRunner().invoke(app, ["report", str(out)])
    assert report.exit_code in (0, 2), report.output
    assert "Traceback" not in report.output
    assert "damaged run(s) left out" in report.stderr or report.exit_code == 2


def test_a_truncated_summary_json_is_named_not_a_json_error(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    tcpeval.sweep(grid(), out, jobs=1, progress=False)
    run = runs(out)[1]
    (run / "summary.json").write_text("{")
    with pytest.warns(DamagedRuns, match=rf"run {run.name}: summary.json has 1 bytes"):
        frame = tcpeval.load(out)
    assert set(frame["run_id"]) == {path.name for path in runs(out)} - {run.name}


def test_a_second_sweep_on_a_directory_names_the_one_holding_it(tmp_path: Path) -> None:
    out = tmp_path / "sweep"
    tcpeval.sweep(grid(), out, jobs=1, progress=False)
    with held(out / LOCK_FILE), pytest.raises(ScenarioError) as refused:
        tcpeval.sweep(grid(), out, jobs=1, progress=False)
    assert f"is in use by another sweep (pid {os.getpid()} on " in str(refused.value)


def test_pool_workers_die_with_a_killed_sweep(tmp_path: Path) -> None:
    slow = grid()
    slow["base"]["duration"] = "600s"
    slow["base"]["sample_interval"] = "1s"
    slow["axes"] = {"bottleneck.rate": ["1Gbps", "2Gbps"]}
    path = tmp_path / "grid.json"
    path.write_text(json.dumps(slow))
    out = tmp_path / "o"
    code = f"import json, tcpeval; tcpeval.sweep(json.load(open({str(path)!r})), {str(out)!r})"
    sweep = subprocess.Popen([sys.executable, "-c", code])
    # The resource tracker, the fork server, then the workers it forks: wait for both.
    workers = _wait_for(lambda: len(_descendants(sweep.pid)) >= 4 and _descendants(sweep.pid))
    time.sleep(1.0)
    os.kill(sweep.pid, signal.SIGKILL)
    sweep.wait()
    assert _wait_for(lambda: not any(_alive(pid) for pid in workers) or None)


def _descendants(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (int(c) for c in (task / "children").read_text().split()):
            found += [child, *_descendants(child)]
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def _wait_for(condition: Any, limit_s: float = 60.0) -> Any:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        found = condition()
        if found:
            return found
        time.sleep(0.2)
    raise AssertionError("not within the limit")
