"""Sweeps: a grid of scenarios × repeats, run in a local process pool or on Dask, each run
written atomically under one directory so that a killed sweep resumes where it stopped.

- `grid`: the grid file, its validation and expansion into runs (and their ids).
- `rundir`: one run written into `DIR/runs/<run_id>/` (result or error.json).
- `executors`: the local process pool and the Dask cluster.
- `runner`: `sweep()`, resumption and the progress bar.
- `tomlwriter`: the grid as run, written back as `DIR/grid.toml`.

The contract (grid file, directory layout, `load`) is docs/sweeps.md.
"""

from __future__ import annotations

from tcpeval.sweep.grid import Grid, RunSpec, expand, load_grid, run_id
from tcpeval.sweep.runner import SuiteProgress, SweepReport, sweep

__all__ = [
    "Grid",
    "RunSpec",
    "SuiteProgress",
    "SweepReport",
    "expand",
    "load_grid",
    "run_id",
    "sweep",
]
