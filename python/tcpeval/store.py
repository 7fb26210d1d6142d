"""The catalogue of a sweep directory: every run's `summary.parquet`, queried with DuckDB and
joined with the runs' parameters (their axis values, repeat and seed).

In a query, `summaries` is all runs' summary rows, `params` one row per run (failed ones too)
and `runs` the two joined: what `load` returns. Axis columns are named by their path and hold
the values as written; an axis of rates, times, sizes or buffers also gets a numeric companion
`<path>:value` in base units (bit/s, ns, bytes; packets, bytes or percent of the BDP).
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from tcpeval import result
from tcpeval.sweep.rundir import ERROR_FILE, PARAMS_FILE, RUNS_DIR, SUMMARY_TABLE
from tcpeval.sweep.runner import GRID_FILE
from tcpeval.sweep.tomlwriter import value_text
from tcpeval.units import parse_buffer, parse_duration, parse_rate, parse_size

COMPANION_SUFFIX = ":value"
_IN_BASE_UNITS: tuple[Callable[[str], float], ...] = (
    lambda text: parse_rate(text).bps,
    lambda text: parse_duration(text).ns,
    lambda text: parse_size(text).bytes,
)


def load(directory: str | Path) -> pd.DataFrame | result.Result:
    """A sweep directory (one with grid.toml) as one tidy DataFrame, one row per flow per
    successful run; any other directory as the single Result saved there."""
    if not is_sweep(directory):
        return result.load(directory)
    return query(directory, "select * from runs order by all")  # run_id, then flow id


def load_errors(directory: str | Path) -> pd.DataFrame:
    """The failed runs of a sweep: their parameters and the one-line `error`."""
    errors = [
        json.loads(path.read_text()) for path in Path(directory).glob(f"{RUNS_DIR}/*/{ERROR_FILE}")
    ]
    frame = pd.DataFrame(errors, columns=["run_id", "error"])
    return params(directory).merge(frame, on="run_id").sort_values("run_id", ignore_index=True)


def query(directory: str | Path, sql: str) -> pd.DataFrame:
    """Run DuckDB `sql` over the sweep in `directory` (tables `summaries`, `params`, `runs`)."""
    with duckdb.connect() as db:
        db.register("params", params(directory))
        db.execute(f"create view summaries as {_summaries_sql(Path(directory))}")
        db.execute("create view runs as select * from params join summaries using (run_id)")
        return db.execute(sql).df()


def is_sweep(directory: str | Path) -> bool:
    return (Path(directory) / GRID_FILE).is_file()


def params(directory: str | Path) -> pd.DataFrame:
    """One row per run: `run_id`, `repeat`, `seed`, then each axis (in the grid's order) and
    its numeric companion."""
    rows = [
        json.loads(path.read_text()) for path in Path(directory).glob(f"{RUNS_DIR}/*/{PARAMS_FILE}")
    ]
    frame = pd.DataFrame(
        {
            "run_id": pd.Series([row["run_id"] for row in rows], dtype=object),
            "repeat": pd.Series([row["repeat"] for row in rows], dtype="int64"),
            "seed": pd.Series([row["seed"] for row in rows], dtype="int64"),
        }
    )
    for path in _axis_order(Path(directory), rows):
        values = _as_written([row["axes"].get(path) for row in rows])
        frame[path] = values
        companion = _companion(values)
        if companion is not None:
            frame[path + COMPANION_SUFFIX] = companion
    return frame


def _summaries_sql(directory: Path) -> str:
    pattern = directory / RUNS_DIR / "*" / SUMMARY_TABLE
    if next(directory.glob(f"{RUNS_DIR}/*/{SUMMARY_TABLE}"), None) is None:
        return "select null::varchar as run_id where false"  # no run has finished yet
    literal = "'" + str(pattern).replace("'", "''") + "'"
    return f"select * from read_parquet({literal}, union_by_name=true, hive_partitioning=false)"


def _axis_order(directory: Path, rows: list[dict[str, Any]]) -> list[str]:
    """The axes of grid.toml in order, then any other axis a run names."""
    grid = tomllib.loads((directory / GRID_FILE).read_text())
    paths = list(grid.get("axes", {}))
    for row in rows:
        paths += [path for path in row["axes"] if path not in paths]
    return paths


def _as_written(values: list[Any]) -> list[Any]:
    """Values as in the grid file; tables, lists and columns of mixed types as TOML text."""
    kinds = {_kind(value) for value in values if value is not None}
    if len(kinds) == 1 and not kinds & {"dict", "list"}:
        return values
    return [
        value if value is None or isinstance(value, str) else value_text(value) for value in values
    ]


def _kind(value: object) -> str:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    return "number" if number else type(value).__name__


def _companion(values: list[Any]) -> list[float] | None:
    """The values in base units, if they are all quantities of one kind."""
    if not all(isinstance(value, str) for value in values):
        return None
    for to_number in _IN_BASE_UNITS:
        try:
            return [float(to_number(value)) for value in values]
        except ValueError:
            continue
    return _buffer_numbers(values)


def _buffer_numbers(values: list[str]) -> list[float] | None:
    """Buffers of one kind (all packets, all bytes or all %bdp) as that number."""
    try:
        buffers = [parse_buffer(value) for value in values]
    except ValueError:
        return None
    for kind in ("pkts", "bytes", "bdp_percent"):
        numbers = [getattr(buffer, kind) for buffer in buffers]
        if None not in numbers:
            return [float(number) for number in numbers]
    return None
