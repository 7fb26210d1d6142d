"""Executors: a worker that dies takes no other run with it; Dask gives the local pool's numbers."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pandas as pd
import pytest

import tcpeval
from tcpeval import backends
from tcpeval.sweep import RunSpec, expand, load_grid
from tcpeval.sweep.dask import NANNY_LOGGER, close_quietly
from tcpeval.sweep.pool import LocalPool
from tcpeval.sweep.rundir import Outcome, execute
from test_sweep import tiny_grid

DOOMED_RATE = "20Mbps"


def crash_on_doomed_rate(spec: RunSpec, sweep_dir: str) -> Outcome:
    """A worker function that kills its own process for one grid point (imported by workers)."""
    if spec.axes["bottleneck.rate"] == DOOMED_RATE and spec.repeat == 0:
        os._exit(3)
    return execute(spec, sweep_dir, backends.get("sim"))


def test_a_dying_worker_fails_only_its_own_run(tmp_path: Path) -> None:
    specs = expand(load_grid(tiny_grid(**{"bottleneck.rate": ["10Mbps", DOOMED_RATE, "30Mbps"]})))
    with LocalPool(jobs=2) as pool:
        outcomes = list(pool.run(crash_on_doomed_rate, specs, tmp_path))

    failed = [outcome for outcome in outcomes if outcome.error is not None]
    doomed = next(s for s in specs if s.axes["bottleneck.rate"] == DOOMED_RATE and s.repeat == 0)
    assert [outcome.run_id for outcome in failed] == [doomed.run_id]
    assert sorted(outcome.run_id for outcome in outcomes) == sorted(spec.run_id for spec in specs)
    error = json.loads((tmp_path / "runs" / doomed.run_id / "error.json").read_text())
    assert error == {"run_id": doomed.run_id, "error": "the worker process died"}
    others = [spec for spec in specs if spec is not doomed]
    assert all((tmp_path / "runs" / s.run_id / "summary.parquet").exists() for s in others)


def test_dask_local_cluster_gives_the_local_pool_numbers(tmp_path: Path) -> None:
    grid = tiny_grid(**{"bottleneck.rate": ["10Mbps", "20Mbps"]})
    pool = tcpeval.sweep(grid, tmp_path / "pool", jobs=2, progress=False)
    dask = tcpeval.sweep(grid, tmp_path / "dask", jobs=2, scheduler="local", progress=False)

    assert (pool.done, dask.done) == (4, 4)
    assert sorted(p.name for p in (tmp_path / "dask" / "runs").iterdir()) == sorted(
        p.name for p in (tmp_path / "pool" / "runs").iterdir()
    )
    on_pool = tcpeval.load(tmp_path / "pool").drop(columns="wall_seconds")
    on_dask = tcpeval.load(tmp_path / "dask").drop(columns="wall_seconds")
    assert len(on_pool) == 8
    pd.testing.assert_frame_equal(on_pool, on_dask)


class SlowToExit:
    """A cluster whose worker outlives the nanny's patience as it closes, as on a busy host."""

    def close(self) -> None:
        logging.getLogger(NANNY_LOGGER).warning("Worker process still alive after 4.0 s, killing")
        logging.getLogger(NANNY_LOGGER).error("a real failure")


def test_closing_the_local_cluster_shows_no_killing_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        close_quietly(SlowToExit())
    assert [record.getMessage() for record in caplog.records] == ["a real failure"]
    assert logging.getLogger(NANNY_LOGGER).level == logging.NOTSET
