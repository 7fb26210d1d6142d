"""The catalogue of a sweep directory: every run's `summary.parquet`, queried with DuckDB and joined
with the runs' parameters (their axis values, repeat and seed).

In a query, `summaries` is all runs' summary rows, `params` one row per run (failed ones too) and
`runs` the two joined: what `load` returns. Only whole runs count: a run directory whose manifest
does not check out (a file truncated or deleted since) is left out, and `load` warns (DamagedRuns)
naming it, so one damaged run never costs the rest. Axis columns are named by their path and hold
the values as written; an axis of rates, times, sizes or buffers also gets a numeric companion
named with its unit: `bottleneck.rate` → `bottleneck_rate_mbps`, `flow.*.rtt` → `flow_all_rtt_ms`
(Mb/s, ms, bytes; packets, bytes or percent of the BDP: `_pkts`, `_bytes`, `_pct_bdp`).
"""

from __future__ import annotations

import json
import tomllib
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd

from tcpeval import result
from tcpeval.layout import (
    ERROR_FILE,
    GRID_FILE,
    MEASURES_FILE,
    PARAMS_FILE,
    RUNS_DIR,
    SUITE_FILE,
    SUMMARY_FILE,
    SUMMARY_TABLE,
    damage,
)
from tcpeval.sweep.tomlwriter import value_text
from tcpeval.units import parse_buffer, parse_duration, parse_rate, parse_size

# An axis's numeric companion, by the kind of quantity: its unit (in the summary's units, so an
# axis compares with `goodput_mbps` and `rtt_ms` as it is) and how to read a value in it.
_QUANTITIES: tuple[tuple[str, Callable[[str], float]], ...] = (
    ("mbps", lambda text: parse_rate(text).bps / 1e6),
    ("ms", lambda text: parse_duration(text).ns / 1e6),
    ("bytes", lambda text: parse_size(text).bytes),
)
_BUFFER_KINDS = {"pkts": "pkts", "bytes": "bytes", "bdp_percent": "pct_bdp"}
COMPANION_UNITS = ("mbps", "ms", "bytes", "pkts", "pct_bdp")


class DamagedRuns(UserWarning):
    """Runs of a sweep left out because their files are not as written; the text names them."""


def load(directory: str | Path) -> pd.DataFrame | result.Result:
    """A sweep directory (one with grid.toml) as one tidy DataFrame, one row per flow per
    successful run; a suite directory (suite.toml) as the same for every test that has run,
    in the suite's order, with a `test` column and each run's measures; a result directory
    as the single Result saved there."""
    path = Path(directory)
    if is_sweep(path):
        return load_sweep(path)
    if (path / SUITE_FILE).is_file():
        return _load_suite(path)
    if not (path / SUMMARY_FILE).is_file():
        raise FileNotFoundError(
            f"{path}: is not a result, sweep or suite directory "
            f"(no {SUMMARY_FILE}, {GRID_FILE} or {SUITE_FILE})"
        )
    return result.load(path)


def with_measures(frame: pd.DataFrame, path: Path) -> pd.DataFrame:
    """The per-run measures of a suite test (`path`, a measures.parquet) joined to its rows;
    a column the rows have already is kept as it is. Absent file: the rows as they are."""
    if not path.is_file():
        return frame
    measures = pd.read_parquet(path).set_index("run_id")
    return frame.join(measures[[c for c in measures.columns if c not in frame]], on="run_id")


def load_sweep(path: Path) -> pd.DataFrame:
    """A sweep directory's runs, one row per flow per successful run (`load`'s answer for one)."""
    _warn_of_damage(path)
    return query(path, "select * from runs order by all")  # run_id, then flow id


def _load_suite(path: Path) -> pd.DataFrame:
    tests = [test["name"] for test in tomllib.loads((path / SUITE_FILE).read_text())["test"]]
    frames = [
        with_measures(load_sweep(path / name), path / name / MEASURES_FILE).assign(test=name)
        for name in tests
        if is_sweep(path / name)
    ]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def damaged_runs(directory: str | Path) -> dict[str, str]:
    """The run directories of a sweep that are not whole: run_id → what is wrong."""
    runs = sorted(Path(directory).glob(f"{RUNS_DIR}/*/"))
    found = {run.name: damage(run) for run in runs}
    return {run_id: problem for run_id, problem in found.items() if problem is not None}


def _intact(directory: Path, name: str) -> list[Path]:
    """File `name` of every whole run of the sweep."""
    damaged = damaged_runs(directory)
    files = sorted(directory.glob(f"{RUNS_DIR}/*/{name}"))
    return [path for path in files if path.parent.name not in damaged]


def _warn_of_damage(directory: Path) -> None:
    damaged = damaged_runs(directory)
    if damaged:
        run_id, problem = next(iter(damaged.items()))
        more = f" and {len(damaged) - 1} more" if len(damaged) > 1 else ""
        message = (
            f"{directory}: {len(damaged)} damaged run(s) left out (run {run_id}: {problem}{more}); "
            "running the sweep again redoes them"
        )
        warnings.warn(message, DamagedRuns, stacklevel=3)


def load_errors(directory: str | Path) -> pd.DataFrame:
    """The failed runs of a sweep: their parameters and the one-line `error`."""
    errors = [json.loads(path.read_text()) for path in _intact(Path(directory), ERROR_FILE)]
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
    rows = [json.loads(path.read_text()) for path in _intact(Path(directory), PARAMS_FILE)]
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
            unit, numbers = companion
            frame[companion_name(path, unit)] = numbers
    return frame


def companion_name(axis: str, unit: str) -> str:
    """The column of an axis's numbers: `bottleneck.rate` → `bottleneck_rate_mbps`,
    `flow.*.rtt` → `flow_all_rtt_ms` (a name pandas and SQL take unquoted)."""
    return f"{axis.replace('*', 'all').replace('.', '_')}_{unit}"


def numeric_companion(frame: pd.DataFrame, axis: str) -> pd.Series | None:
    """The numbers of an axis's column, in the unit its companion's name carries; None if the
    axis has none (values of mixed kinds, or not quantities)."""
    for unit in COMPANION_UNITS:
        name = companion_name(axis, unit)
        if name in frame:
            return frame[name]
    return None


def _summaries_sql(directory: Path) -> str:
    files = _intact(directory, SUMMARY_TABLE)
    if not files:
        return "select null::varchar as run_id where false"  # no run has finished yet
    literals = ", ".join("'" + str(path).replace("'", "''") + "'" for path in files)
    return f"select * from read_parquet([{literals}], union_by_name=true, hive_partitioning=false)"


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


def _companion(values: list[Any]) -> tuple[str, list[float]] | None:
    """The values as numbers in one unit, and that unit, if they are quantities of one kind."""
    if not values or not all(isinstance(value, str) for value in values):
        return None  # no run yet: nothing says what kind the axis is
    for unit, to_number in _QUANTITIES:
        try:
            return unit, [float(to_number(value)) for value in values]
        except ValueError:
            continue
    return _buffer_numbers(values)


def _buffer_numbers(values: list[str]) -> tuple[str, list[float]] | None:
    """Buffers of one kind (all packets, all bytes or all %bdp) as that number."""
    try:
        buffers = [parse_buffer(value) for value in values]
    except ValueError:
        return None
    for kind, unit in _BUFFER_KINDS.items():
        numbers = [getattr(buffer, kind) for buffer in buffers]
        if None not in numbers:
            return unit, [float(number) for number in numbers]
    return None
