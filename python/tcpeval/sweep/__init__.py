"""Sweeps: a grid of scenarios × repeats, run in a local process pool or on Dask, each run
written atomically under one directory so that a killed sweep resumes where it stopped.

- `grid`: the grid file, its validation and expansion into runs (and their ids).
- `rundir`: one run written into `DIR/runs/<run_id>/` (result or error.json).
- `pool`: the local process pool (Ctrl-C stops its runs within seconds).
- `dask`: runs on Dask: a scheduler, a LocalCluster, or a cluster file (SLURM, PBS).
- `runner`: `sweep()`, resumption and the progress bar.
- `tomlwriter`: the grid as run, written back as `DIR/grid.toml`.

The contract (grid file, directory layout, `load`) is docs/sweeps.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcpeval.lazy import exports

if TYPE_CHECKING:
    from tcpeval.sweep.grid import Grid as Grid
    from tcpeval.sweep.grid import RunSpec as RunSpec
    from tcpeval.sweep.grid import expand as expand
    from tcpeval.sweep.grid import load_grid as load_grid
    from tcpeval.sweep.grid import run_id as run_id
    from tcpeval.sweep.runner import SuiteProgress as SuiteProgress
    from tcpeval.sweep.runner import SweepReport as SweepReport
    from tcpeval.sweep.runner import sweep as sweep

# Imported when first used (lazy.py): a worker process unpickling a run imports `rundir`, and
# with it this package, and needs neither the runner nor its progress bar (rich).
__getattr__, __all__ = exports(
    __name__,
    {
        "tcpeval.sweep.grid": ("Grid", "RunSpec", "expand", "load_grid", "run_id"),
        "tcpeval.sweep.runner": ("SuiteProgress", "SweepReport", "sweep"),
    },
)
