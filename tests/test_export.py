"""`tcpeval export`: a result as tidy CSV that holds every sample, a sweep as its runs table, and
a result as a Flent data file that Flent itself reads and plots with the same numbers."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import small_scenario
from tcpeval.cli import app

runner = CliRunner()
FLENT = Path(sys.executable).with_name("flent")  # a dev dependency, to read what we write


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> Path:
    scenario = small_scenario() | {
        "flow": [{"cc": "reno", "rtt": "20ms"}, {"cc": "cubic", "rtt": "40ms", "start": "1s"}]
    }
    out = tmp_path_factory.mktemp("run") / "result"
    tcpeval.simulate(scenario).save(out)
    return out


def test_csv_holds_every_sample_one_observation_per_row(saved: Path, tmp_path: Path) -> None:
    done = runner.invoke(app, ["export", str(saved), "--csv", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    run = tcpeval.load(saved)
    flows = pd.read_csv(tmp_path / "flows.csv")
    assert list(flows.columns) == ["t_s", "flow", "cc", "metric", "value"]
    back = flows.pivot(index=["t_s", "flow", "cc"], columns="metric", values="value")
    numeric = run.flows.set_index(["t_s", "flow", "cc"])[list(back.columns)].astype(float)
    pd.testing.assert_frame_equal(
        back.sort_index(), numeric.sort_index(), check_names=False, check_index_type=False
    )
    links = pd.read_csv(tmp_path / "links.csv")
    assert len(links) == len(run.links) * (len(run.links.columns) - 2)
    summary = pd.read_csv(tmp_path / "summary_flows.csv")
    expected = [flow["goodput_mbps"] for flow in run.summary["flows"]]
    assert summary["goodput_mbps"].tolist() == pytest.approx(expected, rel=1e-12)


def test_a_sweep_exports_its_runs_table(tmp_path: Path) -> None:
    grid = {"base": small_scenario(), "axes": {"bottleneck.rate": ["10Mbps", "20Mbps"]}}
    tcpeval.sweep(grid, tmp_path / "sweep", jobs=1, progress=False)
    done = runner.invoke(app, ["export", str(tmp_path / "sweep"), "--out", str(tmp_path / "x")])
    assert done.exit_code == 0, done.output
    runs = pd.read_csv(tmp_path / "x" / "runs.csv")
    loaded = tcpeval.load(tmp_path / "sweep")
    assert list(runs.columns) == list(loaded.columns)
    assert len(runs) == len(loaded)
    assert set(runs["bottleneck_rate_mbps"]) == {10.0, 20.0}


def test_flent_reads_the_data_file_with_the_same_numbers(saved: Path, tmp_path: Path) -> None:
    done = runner.invoke(app, ["export", str(saved), "--format", "flent", "--out", str(tmp_path)])
    assert done.exit_code == 0, done.output
    data_file = Path(done.output.strip())
    shown = subprocess.run(
        [FLENT, "-i", data_file, "-f", "csv"], capture_output=True, text=True, check=True
    )
    header = shown.stdout.index("tcp_nup,")  # after Flent's greeting
    table = pd.read_csv(io.StringIO(shown.stdout[header:])).set_index("tcp_nup")
    goodput = tcpeval.load(saved).flows.pivot(index="t_s", columns="flow", values="goodput_mbps")
    for flow in goodput.columns:
        ours = goodput[flow].reindex(table.index)
        assert table[f"TCP upload::{flow + 1}"].tolist() == pytest.approx(
            ours.tolist(), rel=1e-12, nan_ok=True
        )
    assert table["TCP upload sum"].tolist() == pytest.approx(
        goodput.sum(axis=1, min_count=1).reindex(table.index).tolist(), rel=1e-12
    )
    plot = tmp_path / "totals.png"
    subprocess.run(
        [FLENT, "-i", data_file, "-p", "totals", "-o", plot], check=True, capture_output=True
    )
    assert plot.stat().st_size > 10_000  # a drawn figure, not an empty file


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (["--format", "xls"], "error: --format: 'xls' is not one of csv, flent"),
        (["--format", "flent"], "is not a single result: Flent's data file holds one test run"),
    ],
)
def test_bad_export_requests_are_one_line(tmp_path: Path, arguments: list[str], said: str) -> None:
    sweep = tmp_path / "sweep"
    grid = {"base": small_scenario(), "axes": {"bottleneck.rate": ["10Mbps"]}}
    tcpeval.sweep(grid, sweep, jobs=1, progress=False)
    done = runner.invoke(app, ["export", str(sweep), *arguments])
    assert done.exit_code == 2
    assert said in done.output
    assert len(done.output.strip().splitlines()) == 1


def test_a_directory_that_is_no_result_is_named(tmp_path: Path) -> None:
    done = runner.invoke(app, ["export", str(tmp_path / "none"), "--csv"])
    assert done.exit_code == 2
    assert done.output.startswith("error: DIRECTORY: '")
    assert "is not a result, sweep or suite directory" in done.output
