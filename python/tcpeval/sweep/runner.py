"""`sweep`: expand a grid, skip the runs already in DIR, run the rest with a progress bar.

Resumption: a run whose directory holds a whole result (its manifest checks out) is skipped; a
run that failed before (`error.json`) runs again, since a fix may have landed since, and so
does a damaged one (a file truncated or deleted since it was written). One sweep at a time
writes into DIR: it holds DIR/.lock, and a second one is refused naming the holder.
"""

from __future__ import annotations

import dataclasses
import os
import time
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
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

from tcpeval import backends
from tcpeval.backends import Backend
from tcpeval.layout import GRID_FILE, LOCK_FILE, RUNS_DIR, publish_file
from tcpeval.processes import Locked, held
from tcpeval.scenario import ScenarioError, parse_scenario
from tcpeval.sweep.dask import LOCAL_CLUSTER, dask_cluster
from tcpeval.sweep.grid import Grid, RunSpec, expand, load_grid
from tcpeval.sweep.pool import LocalPool, Work
from tcpeval.sweep.rundir import Outcome, clear_staging, execute, state
from tcpeval.sweep.tomlwriter import dumps


@dataclass(frozen=True)
class SuiteProgress:
    """What a suite's progress bar says besides the count of its test's runs: the test, the
    stack of the run that just finished, and the count over the whole suite."""

    test: str
    stack_axis: str
    done_before: int
    """Runs of the suite's earlier tests."""
    suite_total: int

    def describe(self, spec: RunSpec | None, done: int) -> str:
        stack = "" if spec is None else f" · {spec.axes.get(self.stack_axis, '')}"
        return f"{self.test}{stack} · suite {self.done_before + done}/{self.suite_total}"


@dataclass(frozen=True)
class SweepReport:
    """What a sweep did: runs written now, found already done, failed; its wall time."""

    out: Path
    done: int
    skipped: int
    failed: int
    wall_seconds: float
    damaged: int = 0
    """Runs found damaged and run again (counted in done or failed too)."""

    @property
    def total(self) -> int:
        return self.done + self.skipped + self.failed


def sweep(
    grid: str | Path | dict[str, Any],
    out: str | Path,
    jobs: int | None = None,
    scheduler: str | None = None,
    *,
    backend: str | Backend | None = None,
    progress: bool = True,
    suite: SuiteProgress | None = None,
    pool: LocalPool | None = None,
) -> SweepReport:
    """Run every point × repeat of `grid` into `out`, finishing only what is missing there.

    On `backend` (a name or the object; default: the grid's `backend`, else the simulator),
    in `jobs` local processes (default: one per CPU, and never more than the backend's
    `runs_per_host`), or on the Dask scheduler at `scheduler` ("local" starts a LocalCluster
    of `jobs` workers; on a remote cluster each host's lab lock keeps its runs one at a time).
    Raises ScenarioError, before anything runs, if a grid point is invalid or the backend
    cannot run it, or if `out` holds a sweep of another grid or backend. `suite` says what a
    suite's bar shows besides the count; `pool` is local workers the caller keeps across
    sweeps (a suite), used instead of starting `jobs` processes for this sweep alone (not
    on Dask).
    """
    started = time.perf_counter()
    loaded, chosen, specs = checked(grid, backend)
    jobs = worker_count(jobs, chosen, scheduler)
    root = Path(out)
    _claim(root, loaded)
    try:
        with held(root / LOCK_FILE):
            clear_staging(root)
            states = {spec.run_id: state(root / RUNS_DIR / spec.run_id) for spec in specs}
            todo = [spec for spec in specs if states[spec.run_id] != "complete"]
            work = partial(execute, backend=chosen)
            failed = 0
            outcomes = _outcomes(work, todo, root, jobs, scheduler, pool)
            for outcome in _tracked(outcomes, specs, len(todo), progress, suite):
                failed += outcome.error is not None
    except Locked as holder:
        raise ScenarioError("--out", str(root), f"is in use by another sweep ({holder})") from None
    wall = time.perf_counter() - started
    damaged = list(states.values()).count("damaged")
    return SweepReport(root, len(todo) - failed, len(specs) - len(todo), failed, wall, damaged)


def checked(
    grid: str | Path | dict[str, Any], backend: str | Backend | None = None
) -> tuple[Grid, Backend, list[RunSpec]]:
    """The grid, the backend it runs on and its runs, every point checked: ScenarioError for the
    first mistake. A caller about to start a cluster checks first, so a typo in the grid does
    not submit batch jobs."""
    loaded = load_grid(grid)
    chosen = backends.get(backend or loaded.backend)
    loaded = dataclasses.replace(loaded, backend=chosen.name)
    specs = expand(loaded)
    _check_points(chosen, specs)
    return loaded, chosen, specs


def _check_points(backend: Backend, specs: list[RunSpec]) -> None:
    """The first point the backend cannot run (each point is checked: an axis may set a key
    or an algorithm the backend refuses), as an error naming the point."""
    for spec in (spec for spec in specs if spec.repeat == 0):  # repeats differ in seed only
        point = ", ".join(f"{path}={value}" for path, value in spec.axes.items())
        try:
            backends.check(backend, parse_scenario(spec.scenario))
        except ScenarioError as error:
            raise ScenarioError("grid point", point or "base", f"is refused: {error}") from None


def worker_count(jobs: int | None, backend: Backend, scheduler: str | None) -> int:
    """`jobs`, by default one per CPU, and on this host never more than the backend's
    `runs_per_host`."""
    count = jobs or os.cpu_count() or 1
    if scheduler in (None, LOCAL_CLUSTER) and backend.runs_per_host is not None:
        count = min(count, backend.runs_per_host)
    return count


def _outcomes(
    work: Work,
    todo: list[RunSpec],
    root: Path,
    jobs: int,
    scheduler: str | None,
    pool: LocalPool | None,
) -> Iterator[Outcome]:
    if not todo:
        return iter(())
    if scheduler is not None:
        return dask_cluster(work, todo, root, jobs, scheduler)
    if pool is not None:
        return pool.run(work, todo, root)
    return _own_pool(work, todo, root, jobs)


def _own_pool(work: Work, todo: list[RunSpec], root: Path, jobs: int) -> Iterator[Outcome]:
    with LocalPool(jobs) as pool:
        yield from pool.run(work, todo, root)


def _claim(root: Path, grid: Grid) -> None:
    """Write `grid.toml` into `out`, or check that the one there is this grid."""
    path = root / GRID_FILE
    if path.exists():
        if tomllib.loads(path.read_text()) != grid.as_dict():
            reason = (
                "holds a sweep of another grid or backend (see its grid.toml); "
                "use another directory"
            )
            raise ScenarioError("--out", str(root), reason)
        return
    if root.exists() and any(root.iterdir()):
        raise ScenarioError("--out", str(root), "is not empty and holds no sweep; not using it")
    publish_file(path, dumps(grid.as_dict()))


def _tracked(
    outcomes: Iterator[Outcome],
    specs: list[RunSpec],
    todo: int,
    shown: bool,
    suite: SuiteProgress | None,
) -> Iterator[Outcome]:
    """Pass outcomes through while a progress bar counts runs done of all and the ETA."""
    total = len(specs)
    by_id = {spec.run_id: spec for spec in specs}
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
        done = total - todo
        title = "runs" if suite is None else suite.describe(None, done)
        task = bar.add_task(title, total=total, completed=done)
        failed = 0
        for outcome in outcomes:
            failed += outcome.error is not None
            done += 1
            if suite is not None:
                title = suite.describe(by_id.get(outcome.run_id), done)
            description = f"{title} ({failed} failed)" if failed else title
            bar.update(task, advance=1, description=description)
            yield outcome
