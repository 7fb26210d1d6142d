"""Sweeps: grid expansion, run directories, resumption, failures, and the local pool vs Dask."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import assert_packets_conserved, small_scenario
from tcpeval.cli import app
from tcpeval.sweep import expand, load_grid, run_id
from tcpeval.sweep.rundir import summary_table
from tcpeval.sweep.tomlwriter import dumps

RATES = ["10Mbps", "20Mbps"]
RTTS = ["10ms", "30ms"]


def tiny_grid(**axes: list[Any]) -> dict[str, Any]:
    """2 s of two Reno flows with a little random loss (so seeds matter), 2 repeats."""
    base = small_scenario() | {"duration": "2s"}
    base["bottleneck"]["loss"] = 0.001
    return {
        "repeats": 2,
        "base": base,
        "axes": axes or {"bottleneck.rate": RATES, "flow.*.rtt": RTTS},
    }


@pytest.fixture(scope="module")
def swept(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One 2×2 grid × 2 repeats, swept once for the tests that only read it."""
    out = tmp_path_factory.mktemp("sweep") / "out"
    report = tcpeval.sweep(tiny_grid(), out, jobs=2, progress=False)
    assert (report.done, report.skipped, report.failed) == (8, 0, 0)
    return out


def run_dirs(out: Path) -> list[Path]:
    return sorted((out / "runs").iterdir())


def test_every_point_and_repeat_is_a_run_with_its_axis_values_and_seed(swept: Path) -> None:
    params = [json.loads((run / "params.json").read_text()) for run in run_dirs(swept)]
    assert len(params) == 8
    points = {(p["axes"]["bottleneck.rate"], p["axes"]["flow.*.rtt"]) for p in params}
    assert points == {(rate, rtt) for rate in RATES for rtt in RTTS}
    for rate, rtt in points:
        mine = [p for p in params if p["axes"] == {"bottleneck.rate": rate, "flow.*.rtt": rtt}]
        assert sorted((p["repeat"], p["seed"]) for p in mine) == [(0, 1), (1, 2)]
    for run, p in zip(run_dirs(swept), params, strict=True):
        assert run.name == p["run_id"]
        summary = json.loads((run / "summary.json").read_text())
        assert_packets_conserved(summary["backend"]["details"])
        assert summary["scenario"]["seed"] == p["seed"]
        assert summary["scenario"]["bottleneck"]["rate"] == p["axes"]["bottleneck.rate"]
        assert {flow["rtt"] for flow in summary["scenario"]["flow"]} == {p["axes"]["flow.*.rtt"]}


def test_repeats_differ_because_their_seeds_do(swept: Path) -> None:
    runs = tcpeval.load(swept)
    per_repeat = runs.groupby(["bottleneck.rate", "flow.*.rtt", "repeat"])["retransmits"].sum()
    by_point = per_repeat.unstack("repeat")
    assert (by_point[0] != by_point[1]).any()


def test_run_directory_holds_the_result_and_a_summary_table(swept: Path) -> None:
    run = run_dirs(swept)[0]
    names = {entry.name for entry in run.iterdir()}
    assert names == {
        "params.json",
        "summary.json",
        "summary.parquet",
        "flows.parquet",
        "links.parquet",
        "tcpeval.json",
    }
    table = pd.read_parquet(run / "summary.parquet")
    summary = json.loads((run / "summary.json").read_text())
    assert list(table["id"]) == [flow["id"] for flow in summary["flows"]]
    assert (table["run_id"] == run.name).all()
    assert table["bottleneck_utilization"].iloc[0] == summary["bottleneck"]["utilization"]
    assert table["jain_index"].iloc[0] == summary["jain_index"]
    assert table["wall_seconds"].iloc[0] == summary["backend"]["wall_seconds"]
    assert (table["backend"] == "sim").all()
    assert tomllib.loads((swept / "grid.toml").read_text()) == load_grid(tiny_grid()).as_dict()


def test_the_summary_table_repeats_run_values_per_flow_and_types_empty_columns_as_numbers(
    swept: Path,
) -> None:
    summary = json.loads((run_dirs(swept)[0] / "summary.json").read_text())
    voided = summary | {"backend": summary["backend"] | {"valid": False, "invalid_reason": "x"}}

    table, void = summary_table(summary, "r"), summary_table(voided, "r")

    assert list(table.columns[:2]) == ["run_id", "backend"]
    assert table.columns[-1] == "wall_seconds"
    assert len(table) == len(summary["flows"])
    assert (table["jain_index"] == summary["jain_index"]).all()
    assert table["invalid_reason"].dtype == "float64"  # no run has one: a column of NaN
    assert table["completion_s"].dtype == "float64"  # the flows run to the end
    assert list(void["valid"]) == [False] * len(summary["flows"])
    assert list(void["invalid_reason"]) == ["x"] * len(summary["flows"])


def test_resuming_runs_only_the_missing_and_leaves_the_rest_untouched(
    swept: Path, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    shutil.copytree(swept, out)
    gone = run_dirs(out)[:3]
    for run in gone:
        shutil.rmtree(run)
    stale = out / ".staging" / f"{gone[0].name}.killed"
    stale.mkdir(parents=True)
    (stale / "summary.json").write_text("{half")
    kept = {run.name: (run / "summary.parquet").stat() for run in run_dirs(out)}

    report = tcpeval.sweep(tiny_grid(), out, jobs=2, progress=False)

    assert (report.done, report.skipped, report.failed) == (3, 5, 0)
    assert not stale.exists()
    assert len(run_dirs(out)) == 8
    for name, before in kept.items():
        after = (out / "runs" / name / "summary.parquet").stat()
        assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    again = tcpeval.load(out).drop(columns="wall_seconds")
    pd.testing.assert_frame_equal(again, tcpeval.load(swept).drop(columns="wall_seconds"))


def test_a_run_the_core_rejects_records_its_error_and_the_others_finish(tmp_path: Path) -> None:
    bad = {"name": "reno", "nosuch": 1.0}
    grid = tiny_grid(**{"flow.0.cc": ["reno", bad]})
    report = tcpeval.sweep(grid, tmp_path / "out", jobs=2, progress=False)

    assert (report.done, report.failed) == (2, 2)
    errors = tcpeval.load_errors(tmp_path / "out")
    assert list(errors["repeat"]) == [0, 1]
    assert errors["error"].str.contains("nosuch").all()
    assert (errors["flow.0.cc"] == '{ name = "reno", nosuch = 1.0 }').all()
    for run_id_ in errors["run_id"]:
        body = json.loads((tmp_path / "out" / "runs" / run_id_ / "error.json").read_text())
        assert body["run_id"] == run_id_
        assert "\n" not in body["error"]
    assert set(tcpeval.load(tmp_path / "out")["flow.0.cc"]) == {"reno"}

    again = tcpeval.sweep(grid, tmp_path / "out", jobs=1, progress=False)
    assert (again.done, again.skipped, again.failed) == (0, 2, 2)  # failed runs are retried


def test_an_invalid_axis_value_fails_before_anything_runs(tmp_path: Path) -> None:
    grid = tiny_grid(**{"bottleneck.rate": ["10Mbps", "10Mbz"]})
    with pytest.raises(tcpeval.ScenarioError, match=r"^axes\.bottleneck\.rate: '10Mbz' .*unit"):
        tcpeval.sweep(grid, tmp_path / "out", jobs=1, progress=False)
    assert not (tmp_path / "out").exists()


def test_an_axis_path_outside_the_scenario_names_the_axis(tmp_path: Path) -> None:
    with pytest.raises(tcpeval.ScenarioError, match=r"^axes\.flow\.3\.rtt: '10ms' names item '3'"):
        tcpeval.sweep(tiny_grid(**{"flow.3.rtt": ["10ms"]}), tmp_path / "out", progress=False)


def test_a_point_invalid_only_in_combination_is_named(tmp_path: Path) -> None:
    base = small_scenario()
    base["bottleneck"]["delay"] = "10ms"
    grid = {"base": base, "axes": {"bottleneck.delay": ["1ms", "20ms"], "flow.0.rtt": ["50ms"]}}
    with pytest.raises(tcpeval.ScenarioError, match=r"^axes\.bottleneck\.delay: '20ms'"):
        tcpeval.sweep(grid, tmp_path / "out", progress=False)


def test_a_directory_of_another_grid_is_refused(swept: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(swept, out)
    other = tiny_grid(**{"bottleneck.rate": ["30Mbps"]})
    with pytest.raises(tcpeval.ScenarioError, match="another grid"):
        tcpeval.sweep(other, out, progress=False)


def test_run_ids_are_readable_safe_and_distinct() -> None:
    ids = {
        run_id({"flow.*.cc": "reno", "bottleneck.rate": "10Gb/s"}, 0),
        run_id({"flow.*.cc": "reno", "bottleneck.rate": "10Gb_s"}, 0),
        run_id(
            {"flow.*.cc": {"name": "htcp", "beta_adaptive": False}, "bottleneck.rate": "1Gbps"}, 1
        ),
    }
    assert len(ids) == 3
    assert all("/" not in i and "*" not in i and " " not in i for i in ids)
    assert run_id({"flow.*.cc": "reno", "bottleneck.rate": "10Gb/s"}, 0).startswith(
        "flow._.cc=reno__bottleneck.rate=10Gb_s__rep=0__"
    )


def test_a_base_file_is_read_relative_to_the_grid(tmp_path: Path) -> None:
    (tmp_path / "scenarios").mkdir()
    (tmp_path / "scenarios" / "base.toml").write_text(dumps(small_scenario()))
    (tmp_path / "grid.toml").write_text(
        'repeats = 3\nbase = "scenarios/base.toml"\n[axes]\n"flow.0.count" = [1, 2]\n'
    )
    runs = expand(load_grid(tmp_path / "grid.toml"))
    assert len(runs) == 6
    assert [run.scenario["flow"][0]["count"] for run in runs] == [1, 1, 1, 2, 2, 2]
    assert [run.seed for run in runs] == [1, 2, 3, 1, 2, 3]


def test_cli_sweep_runs_and_reports_an_invalid_grid_in_one_line(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(dumps(tiny_grid(**{"bottleneck.rate": ["10Mbps"]})))
    done = CliRunner().invoke(
        app, ["sweep", str(grid), "--out", str(tmp_path / "out"), "--jobs", "1"]
    )
    assert done.exit_code == 0, done.output
    assert "2 runs: 2 done, 0 already there, 0 failed" in done.output

    grid.write_text(dumps(tiny_grid(**{"flow.0.rtt": ["fast"]})))
    bad = CliRunner().invoke(app, ["sweep", str(grid), "--out", str(tmp_path / "bad")])
    assert bad.exit_code == 2
    assert bad.output.startswith("error: axes.flow.0.rtt: 'fast' ")
    assert len(bad.output.strip().splitlines()) == 1


def test_cli_sweep_exits_1_when_runs_failed(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(dumps(tiny_grid(**{"flow.0.cc": [{"name": "reno", "nosuch": 1.0}]})))
    failed = CliRunner().invoke(
        app, ["sweep", str(grid), "--out", str(tmp_path / "out"), "--jobs", "1"]
    )
    assert failed.exit_code == 1
    assert "0 done, 0 already there, 2 failed" in failed.output
