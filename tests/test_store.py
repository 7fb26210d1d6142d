"""The sweep catalogue: `load` as one tidy frame, numeric companions, DuckDB queries."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import tcpeval
from helpers import small_scenario
from tcpeval import store
from tcpeval.suites.runner import run_suite
from tcpeval.sweep.tomlwriter import dumps


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Rates × queues × cc, one repeat, two flows per run: 8 runs."""
    base = small_scenario() | {"duration": "1s"}
    grid = {
        "base": base,
        "axes": {
            "bottleneck.rate": ["10Mbps", "1Gb/s"],
            "bottleneck.queue": ["20%bdp", "100%bdp"],
            "flow.*.cc": ["reno", "cubic"],
        },
    }
    out = tmp_path_factory.mktemp("store") / "out"
    tcpeval.sweep(grid, out, jobs=2, progress=False)
    return out


def test_load_is_one_row_per_flow_per_run_with_axes_and_companions(swept: Path) -> None:
    runs = tcpeval.load(swept)
    assert len(runs) == 8 * 2
    assert list(runs.columns[:10]) == [
        "run_id",
        "repeat",
        "seed",
        "bottleneck.rate",
        "bottleneck_rate_mbps",
        "bottleneck.queue",
        "bottleneck_queue_pct_bdp",
        "flow.*.cc",
        "backend",
        "id",
    ]
    assert {"goodput_mbps", "bottleneck_utilization", "jain_index", "wall_seconds"} <= set(runs)
    rates = dict(zip(runs["bottleneck.rate"], runs["bottleneck_rate_mbps"], strict=True))
    assert rates == {"10Mbps": 10.0, "1Gb/s": 1000.0}
    queues = dict(zip(runs["bottleneck.queue"], runs["bottleneck_queue_pct_bdp"], strict=True))
    assert queues == {"20%bdp": 20.0, "100%bdp": 100.0}
    assert (runs["cc"] == runs["flow.*.cc"]).all()
    assert runs.groupby("run_id").size().eq(2).all()


def test_query_runs_sql_over_the_parquet_files(swept: Path) -> None:
    table = store.query(
        swept,
        'select "flow.*.cc" as cc, count(distinct run_id) as runs, count(*) as flows,'
        " avg(bottleneck_utilization) as utilization from runs group by 1 order by 1",
    )
    assert list(table["cc"]) == ["cubic", "reno"]
    assert list(table["runs"]) == [4, 4]
    assert list(table["flows"]) == [8, 8]
    assert table["utilization"].between(0, 1).all()
    assert store.query(swept, "select count(*) as n from summaries")["n"][0] == 16


def test_a_run_missing_from_disk_is_missing_from_load(swept: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(swept, out)
    shutil.rmtree(next((out / "runs").iterdir()))
    assert len(tcpeval.load(out)) == 7 * 2
    assert len(tcpeval.load_errors(out)) == 0


def test_a_sweep_without_results_loads_empty(tmp_path: Path) -> None:
    grid = {"base": small_scenario(), "axes": {"flow.0.cc": [{"name": "reno", "nosuch": 1.0}]}}
    tcpeval.sweep(grid, tmp_path / "out", jobs=1, progress=False)
    assert tcpeval.load(tmp_path / "out").empty
    assert len(tcpeval.load_errors(tmp_path / "out")) == 1


def test_a_directory_without_grid_toml_loads_as_one_result(tmp_path: Path) -> None:
    tcpeval.simulate(small_scenario()).save(tmp_path / "one")
    loaded = tcpeval.load(tmp_path / "one")
    assert isinstance(loaded, tcpeval.Result)
    assert loaded.summary["scenario"]["name"] == "small"


def test_grid_toml_round_trips() -> None:
    import tomllib

    document = {
        "repeats": 2,
        "base": small_scenario() | {"seed": 7},
        "axes": {
            "flow.*.cc": ["reno", {"name": "htcp", "beta_adaptive": False}],
            "x.y": [0.5, 1e-9],
        },
    }
    document["base"]["flow"][0]["drop_at"] = ["1s", "2s"]
    assert tomllib.loads(dumps(document)) == document


def test_a_suite_directory_loads_every_test_with_its_measures(tmp_path: Path) -> None:
    # The quick streams suite with the baseline as the stack: one test, two runs of one
    # striped transfer (1 and 8 streams).
    run_suite("streams", "reno", tmp_path / "suite", quick=True, jobs=1)
    frame = tcpeval.load(tmp_path / "suite")
    assert set(frame["test"]) == {"streams"}
    assert frame["run_id"].nunique() == 2
    assert len(frame) == 1 + 8  # one row per flow
    assert (frame["completion_s"] > 0).all()  # the measure, joined to each run's rows


def test_a_directory_that_holds_nothing_of_ours_is_named_in_the_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match=f"{tmp_path}: is not a result, sweep or suite"):
        tcpeval.load(tmp_path)
