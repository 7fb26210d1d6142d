"""The backend seam: a backend of a few lines, registered here, runs through run, sweep,
suite and compare without any other module knowing it; backends refuse what they cannot do
by name, on the command line too."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import SMALL_TOML, ModelUnderAnotherName, small_scenario
from tcpeval import backends
from tcpeval.cli import app
from tcpeval.compare import compare_backends
from tcpeval.report.compare_page import overlay, overlay_chart
from tcpeval.report.dataset import ReportError
from tcpeval.report.plots import LEGEND_MAX_LINES
from tcpeval.result import Result
from tcpeval.scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from tcpeval.suites.runner import run_suite

runner = CliRunner()


class Halved(ModelUnderAnotherName):
    """A test backend: the model's answer with every flow's goodput halved."""

    name = "halved"
    description = "the model, halved (a test)"

    def refused_keys(self) -> Mapping[str, str]:
        return {"cbr": "a test backend has no background traffic"}

    def run(self, scenario: Scenario) -> Result:
        result = super().run(scenario)
        for flow in result.summary["flows"]:
            flow["goodput_mbps"] /= 2
        return result


@pytest.fixture
def halved() -> Iterator[Halved]:
    backend = Halved()
    backends.register(backend)
    yield backend
    backends.registry._registered.pop(backend.name)


def test_a_registered_backend_runs_a_scenario_and_says_so(halved: Halved) -> None:
    result = tcpeval.run(small_scenario(), "halved")
    model = tcpeval.run(small_scenario(), "model")
    assert result.backend == "halved"
    halves = [f["goodput_mbps"] * 2 for f in result.summary["flows"]]
    assert halves == pytest.approx([f["goodput_mbps"] for f in model.summary["flows"]])


def test_a_registered_backend_sweeps_in_worker_processes(halved: Halved, tmp_path: Path) -> None:
    grid = {"base": small_scenario(), "axes": {"bottleneck.rate": ["10Mbps", "20Mbps"]}}
    report = tcpeval.sweep(grid, tmp_path / "sweep", jobs=2, backend="halved", progress=False)
    assert (report.done, report.failed) == (2, 0)
    runs = tcpeval.load(tmp_path / "sweep")
    assert set(runs["backend"]) == {"halved"}
    by_rate = runs.groupby("bottleneck.rate")["goodput_mbps"].sum()
    assert by_rate["20Mbps"] == pytest.approx(2 * by_rate["10Mbps"], rel=0.01)
    assert 'backend = "halved"' in (tmp_path / "sweep" / "grid.toml").read_text()


def test_a_sweep_dir_of_one_backend_is_not_resumed_by_another(
    halved: Halved, tmp_path: Path
) -> None:
    grid = {"base": small_scenario(), "axes": {"bottleneck.rate": ["10Mbps"]}}
    tcpeval.sweep(grid, tmp_path / "sweep", jobs=1, backend="halved", progress=False)
    with pytest.raises(ScenarioError, match="another grid or backend"):
        tcpeval.sweep(grid, tmp_path / "sweep", jobs=1, backend="model", progress=False)


def test_a_registered_backend_runs_a_suite(halved: Halved, tmp_path: Path) -> None:
    run_suite("window", "cubic", tmp_path / "suite", quick=True, jobs=1, backend=halved)
    assert json.loads((tmp_path / "suite" / "run.json").read_text())["backend"] == "halved"
    measured = tcpeval.load(tmp_path / "suite")
    assert len(measured) > 0
    assert set(measured["backend"]) == {"halved"}
    assert (tmp_path / "suite" / "report.html").is_file()


class VoidsCubic(Halved):
    """A test backend that checks itself, as the lab does, and voids every cubic run."""

    name = "voids-cubic"

    def run(self, scenario: Scenario) -> Result:
        result = super().run(scenario)
        result.summary["backend"]["name"] = self.name
        if scenario.flow[0].cc.name == "cubic":
            result.summary["backend"] |= {"valid": False, "invalid_reason": "rate missed by 3%"}
        return result


def test_a_suite_leaves_out_the_runs_a_backend_voids_and_the_report_lists_them(
    tmp_path: Path,
) -> None:
    """A voided run's measures stay out of the suite's verdicts; the report says which runs
    and why."""
    backend = VoidsCubic()
    report = run_suite("window", "cubic", tmp_path / "suite", quick=True, jobs=1, backend=backend)
    runs = tcpeval.load(tmp_path / "suite" / "window")
    voided = set(runs[~runs["valid"]]["run_id"])
    assert voided
    assert set(runs[runs["cc"] == "cubic"]["run_id"]) == voided
    measured = pd.read_parquet(tmp_path / "suite" / "window" / "measures.parquet")
    assert not voided & set(measured["run_id"])
    page = report.path.read_text()
    assert f"{len(voided)} runs invalid, left out" in page
    assert "rate missed by 3%" in page


def test_a_suite_whose_every_run_was_voided_loads_and_says_why_it_has_no_report(
    tmp_path: Path,
) -> None:
    with pytest.raises(ReportError, match=r"no successful runs .*\d+ runs voided"):
        run_suite(
            "window", "cubic", tmp_path / "s", baseline="cubic", quick=True, jobs=1,
            backend=VoidsCubic(),
        )  # fmt: skip
    runs = tcpeval.load(tmp_path / "s")
    assert not runs["valid"].any()


def test_a_registered_backend_is_compared_and_its_difference_flagged(halved: Halved) -> None:
    comparison = compare_backends(parse_scenario(small_scenario()), ["model", "halved"])
    goodput = next(row for row in comparison.rows if row.figure == "goodput flow 0")
    assert goodput.ratios["halved"] == pytest.approx(0.5)
    assert goodput.flagged == ["halved"]
    jain = next(row for row in comparison.rows if row.figure == "Jain index")
    assert jain.flagged == []


def test_a_backend_refuses_a_key_by_name_before_anything_runs(halved: Halved) -> None:
    data = small_scenario() | {"cbr": [{"rate": "1Mbps"}]}
    with pytest.raises(ScenarioError) as raised:
        tcpeval.run(data, "halved")
    assert raised.value.field == "cbr[0]"
    assert "backend 'halved'" in str(raised.value)


def test_a_backend_refuses_an_algorithm_it_does_not_know(halved: Halved) -> None:
    data = small_scenario()
    data["flow"][0]["cc"] = "bbr"
    with pytest.raises(ScenarioError, match=r"flow\[0\].cc: 'bbr' is not an algorithm"):
        tcpeval.run(data, "halved")


def test_the_simulator_refuses_an_algorithm_it_has_not_by_name() -> None:
    data = small_scenario()
    data["flow"][0]["cc"] = "renoo"
    with pytest.raises(ScenarioError) as raised:
        tcpeval.simulate(data)
    assert (raised.value.field, raised.value.value) == ("flow[0].cc", "renoo")
    assert "choose from reno, aimd" in raised.value.reason


def test_a_sweep_names_the_grid_point_its_backend_refuses(tmp_path: Path) -> None:
    grid = {"base": small_scenario(), "axes": {"bottleneck.aqm": ["droptail", "codel"]}}
    with pytest.raises(ScenarioError) as raised:
        tcpeval.sweep(grid, tmp_path / "sweep", backend="model", progress=False)
    assert "bottleneck.aqm=codel" in str(raised.value)
    assert "no model of codel here" in str(raised.value)
    assert not (tmp_path / "sweep").exists()


# The command line


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path


def test_backends_lists_each_backend_with_its_algorithms_and_refusals() -> None:
    run = runner.invoke(app, ["backends", "--json"])
    assert run.exit_code == 0, run.output
    listed = {row["name"]: row for row in json.loads(run.stdout)}
    assert {"model", "sim"} <= listed.keys()
    assert listed["sim"]["unavailable"] is None
    assert "bbr" in listed["sim"]["algorithms"]
    assert "web" in listed["model"]["refused_keys"]
    table = runner.invoke(app, ["backends"])
    assert table.exit_code == 0
    assert "refused keys" in table.stdout


def test_run_on_the_model_writes_a_result_that_says_so(small_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    run = runner.invoke(app, ["run", str(small_file), "--backend", "model", "--out", str(out)])
    assert run.exit_code == 0, run.output
    result = tcpeval.load(out)
    assert result.backend == "model"
    assert [flow["limited_by"] for flow in result.summary["flows"]] == ["link share"] * 2
    assert (out / "goodput.png").is_file()


def test_run_refuses_a_key_the_backend_cannot_honour(small_file: Path, tmp_path: Path) -> None:
    web = (
        small_file.read_text()
        + '\n[[web]]\ncc = "reno"\nrtt = "20ms"\narrival_rate = 1.0\nmean_size = "100KB"\n'
    )
    small_file.write_text(web)
    args = ["run", str(small_file), "--backend", "model", "--out", str(tmp_path / "o")]
    run = runner.invoke(app, args)
    assert run.exit_code == 2
    assert run.stderr.strip() == (
        "error: web[0]: is not supported: no model of short web transfers (backend 'model')"
    )
    assert not (tmp_path / "o").exists()


def test_an_unknown_backend_is_one_line_listing_the_known(small_file: Path, tmp_path: Path) -> None:
    args = ["run", str(small_file), "--backend", "labb", "--out", str(tmp_path / "o")]
    run = runner.invoke(app, args)
    assert run.exit_code == 2
    assert "error: --backend: 'labb' is not a backend (choose from" in run.stderr
    assert "model" in run.stderr
    assert "sim" in run.stderr


def test_compare_prints_the_table_and_writes_the_page(small_file: Path, tmp_path: Path) -> None:
    out = tmp_path / "cmp"
    run = runner.invoke(
        app, ["compare", str(small_file), "--backends", "model,sim", "--out", str(out)]
    )
    assert run.exit_code == 0, run.output
    assert "sim/model" in run.stdout
    page = (out / "compare.html").read_text()
    assert page.count("data:image/png;base64,") == 2
    assert tcpeval.load(out / "sim").backend == "sim"
    saved = json.loads((out / "compare.json").read_text())
    assert saved["backends"] == ["model", "sim"]


def test_a_comparison_of_many_flows_shows_the_first_and_names_each_backends_lines(
    tmp_path: Path,
) -> None:
    # 10,000 flows once took the terminal a row each and the overlay a legend entry each (over
    # ten minutes of drawing); the file keeps every row.
    path = tmp_path / "many.toml"
    path.write_text(
        'duration = "2s"\nbottleneck = { rate = "100Mbps", queue = "100%bdp" }\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\ncount = 60\n'
    )
    out = tmp_path / "cmp"
    args = ["compare", str(path), "--backends", "model,sim", "--out", str(out)]
    run = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert run.exit_code == 0, run.output
    assert "goodput flow 39 " in run.stdout
    assert "goodput flow 40 " not in run.stdout
    assert "… 20 more rows of flows, in compare.json" in run.stdout
    rows = json.loads((out / "compare.json").read_text())["rows"]
    assert sum(row["figure"].startswith("goodput flow ") for row in rows) == 60
    comparison = compare_backends(load_scenario(path), ["model", "sim"])
    figure = overlay(comparison, "cwnd_pkts")
    axes = figure.axes[0]
    assert [len(collection.get_paths()) for collection in axes.collections] == [60, 60]
    assert [text.get_text() for text in axes.get_legend().get_texts()] == ["model", "sim"]
    assert len(overlay_chart(comparison, "cwnd_pkts").lines) == 2 * LEGEND_MAX_LINES
    drawn, (width, height) = figure.get_tightbbox(), figure.get_size_inches()
    assert drawn.x0 >= 0  # fixed margins hold every label
    assert drawn.y0 >= 0
    assert drawn.x1 <= width
    assert drawn.y1 <= height


def test_compare_sets_a_saved_result_beside_the_backends(small_file: Path, tmp_path: Path) -> None:
    saved = tcpeval.run(small_file, "model").save(tmp_path / "measured")
    args = ["compare", str(small_file), "--backends", "sim", "--with", str(saved)]
    args += ["--out", str(tmp_path / "cmp")]
    run = runner.invoke(app, args)
    assert run.exit_code == 0, run.output
    compared = json.loads((tmp_path / "cmp" / "compare.json").read_text())
    assert compared["backends"] == ["sim", "model"]
    missing = runner.invoke(app, [*args[:4], "--with", str(tmp_path / "nothing")])
    assert missing.exit_code == 2
    assert "is not a result directory" in missing.stderr


def test_compare_needs_two_backends(small_file: Path) -> None:
    run = runner.invoke(app, ["compare", str(small_file), "--backends", "sim"])
    assert run.exit_code == 2
    assert "must name two or more backends" in run.stderr


def test_suite_takes_a_backend_and_checks_the_stack_against_it(tmp_path: Path) -> None:
    args = ["suite", "window", "--cc", "vegas", "--backend", "nope", "--out", str(tmp_path)]
    run = runner.invoke(app, args)
    assert run.exit_code == 2
    assert "'nope' is not a backend" in run.stderr


def test_summary_tables_show_a_dash_where_a_backend_has_no_figure() -> None:
    data = small_scenario()
    data["flow"][0]["cc"] = "bbr"
    result = tcpeval.run(data, "model")
    assert [f["goodput_mbps"] for f in result.summary["flows"]] == [None, None]
    assert result.summary["jain_index"] is None
    frame = pd.DataFrame(result.summary["flows"])
    assert frame["limited_by"].str.startswith("no model").all()
