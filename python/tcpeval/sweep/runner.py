"""`sweep`: expand a grid, skip the runs already in DIR, run the rest with a progress bar.

Resumption: a run whose directory holds a result is skipped; a run that failed before
(`error.json`) runs again, since a fix may have landed since.
"""

from __future__ import annotations

import os
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from tcpeval.scenario import ScenarioError
from tcpeval.sweep.executors import dask_cluster, local_pool
from tcpeval.sweep.grid import Grid, RunSpec, expand, load_grid
from tcpeval.sweep.rundir import Outcome, clear_staging, execute, is_complete
from tcpeval.sweep.tomlwriter import dumps

GRID_FILE = "grid.toml"


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: runs written now, found already done, failed; its wall time."""

    out: Path
    done: int
    skipped: int
    failed: int
    wall_seconds: float

    @property
    def total(self) -> int:
        return self.done + self.skipped + self.failed


def sweep(
    grid: str | Path | dict[str, Any],
    out: str | Path,
    jobs: int | None = None,
    scheduler: str | None = None,
    *,
    progress: bool = True,
) -> SweepReport:
    """Run every point × repeat of `grid` into `out`, finishing only what is missing there.

    `jobs` local processes (default: one per CPU), or the Dask scheduler at `scheduler`
    ("local" starts a LocalCluster of `jobs` workers). Raises ScenarioError, before anything
    runs, if a grid point is invalid or `out` holds a sweep of another grid.
    """
    started = time.perf_counter()
    jobs = jobs or os.cpu_count() or 1
    loaded = load_grid(grid)
    specs = expand(loaded)
    root = Path(out)
    _claim(root, loaded)
    clear_staging(root)
    todo = [spec for spec in specs if not is_complete(root, spec.run_id)]
    failed = 0
    for outcome in _tracked(
        _outcomes(todo, root, jobs, scheduler), len(specs), len(todo), progress
    ):
        failed += outcome.error is not None
    wall = time.perf_counter() - started
    return SweepReport(root, len(todo) - failed, len(specs) - len(todo), failed, wall)


def _outcomes(
    todo: list[RunSpec], root: Path, jobs: int, scheduler: str | None
) -> Iterator[Outcome]:
    if not todo:
        return iter(())
    if scheduler is None:
        return local_pool(execute, todo, root, jobs)
    return dask_cluster(execute, todo, root, jobs, scheduler)


def _claim(root: Path, grid: Grid) -> None:
    """Write `grid.toml` into `out`, or check that the one there is this grid."""
    path = root / GRID_FILE
    if path.exists():
        if tomllib.loads(path.read_text()) != grid.as_dict():
            reason = "holds a sweep of another grid (see its grid.toml); use another directory"
            raise ScenarioError("--out", str(root), reason)
        return
    if root.exists() and any(root.iterdir()):
        raise ScenarioError("--out", str(root), "is not empty and holds no sweep; not using it")
    root.mkdir(parents=True, exist_ok=True)
    partial = root / f".{GRID_FILE}.partial"
    partial.write_text(dumps(grid.as_dict()))
    partial.replace(path)


def _tracked(outcomes: Iterator[Outcome], total: int, todo: int, shown: bool) -> Iterator[Outcome]:
    """Pass outcomes through while a progress bar counts runs done of all and the ETA."""
    console = Console(stderr=True)
    columns = (
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, disable=not (shown and console.is_terminal)) as bar:
        task = bar.add_task("runs", total=total, completed=total - todo)
        failed = 0
        for outcome in outcomes:
            failed += outcome.error is not None
            bar.update(task, advance=1, description=f"runs ({failed} failed)" if failed else "runs")
            yield outcome
