"""The HTML report of a sweep and of a suite: self-contained, with the verdict table and the
figures, and `tcpeval report DIR` on the command line."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
import tomllib
from html.parser import HTMLParser
from pathlib import Path

import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import small_scenario
from tcpeval.cli import app
from tcpeval.report.content import section_view
from tcpeval.report.dataset import ReportError, load_report_data
from tcpeval.report.html import write_report
from tcpeval.suites import Suite
from tcpeval.suites.runner import write_measures

PNG_PREFIX = "data:image/png;base64,"
SUITE_TOML = """\
name = "mini"
description = "A two-test suite small enough for a unit test"

[[test]]
name = "fair"
description = "Two like flows"
measure = "fairness"
stack = "flow.*.cc"
base = {}
axes = {}

[[test]]
name = "response"
description = "One flow under random loss"
measure = "response"
stack = "flow.0.cc"
base = {}
axes = {}

[[rule]]
test = "fair"
metric = "throughput_ratio"
below = 0.99
message = "fairness between like flows below {threshold} at {where} (ratio {value:.2f})"

[[rule]]
test = "response"
metric = "window_pkts"
worse_than_baseline_by = 0.5
message = "much less throughput than standard TCP at {where}"
"""


class Page(HTMLParser):
    """The parts of the report a test looks at: images, table headers and the text."""

    def __init__(self) -> None:
        super().__init__()
        self.images: list[str] = []
        self.script_sources: list[str] = []
        self.headers: list[str] = []
        self.text: list[str] = []
        self._in_header = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "img":
            self.images.append(dict(attrs)["src"] or "")
        if tag == "script" and "src" in dict(attrs):
            self.script_sources.append(dict(attrs)["src"] or "")
        self._in_header = tag == "th"

    def handle_endtag(self, tag: str) -> None:
        self._in_header = False

    def handle_data(self, data: str) -> None:
        self.text.append(data)
        if self._in_header:
            self.headers.append(data.strip())


def parsed(path: Path) -> tuple[str, Page]:
    html = path.read_text()
    page = Page()
    page.feed(html)
    page.close()
    return html, page


def sweep(out: Path, scenario: dict[str, object], axes: dict[str, list[object]]) -> Path:
    tcpeval.sweep({"repeats": 2, "base": scenario, "axes": axes}, out, jobs=2, progress=False)
    return out


@pytest.fixture(scope="module")
def suite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A suite directory as suites/runner.py writes it: suite.toml, run.json, one sweep per
    test with its measures.parquet. 8 + 6 runs of 2 s."""
    out = tmp_path_factory.mktemp("suite")
    (out / "suite.toml").write_text(SUITE_TOML)
    run = {"suite": "mini", "cc": "scalable", "baseline": "reno", "quick": True}
    (out / "run.json").write_text(json.dumps(run))
    fair = small_scenario() | {"duration": "2s"}
    sweep(
        out / "fair",
        fair,
        {"bottleneck.rate": ["5Mbps", "10Mbps"], "flow.*.cc": ["reno", "scalable"]},
    )
    alone = fair | {
        "flow": [{"cc": "reno", "rtt": "20ms"}],
        "bottleneck": {"rate": "10Mbps", "queue": "1000pkt"},
    }
    loss = {"bottleneck.loss": [1e-2, 1e-3, 1e-4], "flow.0.cc": ["reno", "scalable"]}
    sweep(out / "response", alone, loss)
    suite = Suite.model_validate(tomllib.loads(SUITE_TOML))
    for test in suite.test:
        write_measures(out / test.name, test)
    return out


@pytest.fixture(scope="module")
def suite_report(suite_dir: Path) -> tuple[str, Page]:
    return parsed(write_report(suite_dir).path)


def test_the_report_is_one_self_contained_file_that_parses(suite_report: tuple[str, Page]) -> None:
    html, page = suite_report
    assert "<link" not in html
    assert "<script" in html  # the charts' library and code, inline
    assert page.script_sources == []
    assert "url(http" not in html
    assert all(src.startswith(PNG_PREFIX) for src in page.images)


def test_the_verdict_table_names_each_rule_and_its_worst_point(
    suite_report: tuple[str, Page],
) -> None:
    html, page = suite_report
    for header in ("verdict", "test", "stack", "rule", "worst point", "value", "baseline"):
        assert header in page.headers
    text = " ".join(page.text)
    assert "throughput ratio (min/max) at least 0.99" in text
    assert "average window at least 50% of the baseline's" in text
    assert "at 5 Mb/s" in text or "at 10 Mb/s" in text
    # One verdict per test, metric and stack; the baseline (reno) is not judged.
    assert html.count('class="badge') == 2


def test_every_figure_is_there_or_says_why_not(suite_report: tuple[str, Page]) -> None:
    html, page = suite_report
    # fair: box plot, time series, response (congestion events) or its note; no heatmap
    # (one axis). response: box plot, time series, response function.
    assert len(page.images) >= 5
    assert html.count("No heatmap: it needs two axes with several values") == 2
    assert 'alt="response: response function"' in html
    # The response test plots its measure, the window after start-up.
    assert "Each flow's average window over the measurement window (whole run)" in " ".join(
        page.text
    )
    assert "measured over: whole run" in " ".join(page.text)
    assert 'alt="fair: time series of chosen runs"' in html
    assert 'alt="response: window_pkts over repeats"' not in html  # labelled, not the column
    for src in page.images:
        assert base64.b64decode(src.removeprefix(PNG_PREFIX))[:8] == b"\x89PNG\r\n\x1a\n"


FORK_COUNT = """
import os, sys, threading
from matplotlib.figure import Figure
from tcpeval.report.html import png_data_uri, png_data_uris

forks = []
os.register_at_fork(before=lambda: forks.append(1))
figures = []
for slope in range(5):  # each figure its own, so that order shows
    figures.append(Figure())
    figures[-1].add_subplot().plot([0, 1], [0, slope])
alone = png_data_uris(figures)
forked_alone = len(forks)
stop = threading.Event()
waiter = threading.Thread(target=stop.wait)
waiter.start()
with_thread = png_data_uris(figures)
stop.set()
waiter.join()
here = [png_data_uri(figure) for figure in figures]
print(forked_alone, len(forks) - forked_alone, alone == here, with_thread == here)
"""


def test_figures_are_drawn_by_forked_processes_in_order_unless_a_thread_runs() -> None:
    """A fresh interpreter (this one may hold other tests' threads): alone, it forks one
    drawer per CPU; with another thread running it forks none; either way each PNG is the one
    its figure gives when drawn here, in order."""
    cpus = len(os.sched_getaffinity(0))
    assert cpus > 1, "one CPU: the forked drawing is not exercised"
    done = subprocess.run(
        [sys.executable, "-c", FORK_COUNT], capture_output=True, text=True, check=True
    )
    assert done.stdout.split() == [str(min(cpus, 5)), "0", "True", "True"]


def test_a_sweep_without_rules_gets_tables_and_a_heatmap_but_no_verdicts(tmp_path: Path) -> None:
    scenario = small_scenario() | {"duration": "2s"}
    axes = {"bottleneck.rate": ["5Mbps", "10Mbps"], "flow.*.rtt": ["10ms", "30ms"]}
    html, page = parsed(write_report(sweep(tmp_path / "sweep", scenario, axes)).path)
    assert "No <code>suite.toml</code> with rules" in html
    assert 'class="badge' not in html
    assert 'alt="sweep: Jain index over the grid"' in html
    assert len(page.images) >= 4  # two heatmaps, two box plots, time series


def test_report_command_prints_the_verdicts_and_the_path_and_a_bad_directory_is_one_line(
    suite_dir: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    done = runner.invoke(app, ["report", str(suite_dir)], env={"COLUMNS": "200"})
    assert done.exit_code == 0, done.output
    lines = done.output.strip().splitlines()
    assert lines[-1] == str(suite_dir / "report.html")
    # Two rules, each judging scalable only: the baseline is what it is judged against.
    assert lines[0].strip() in ("verdicts: 1 of 2 failed", "verdicts: 2 of 2 failed")
    rows = [line for line in lines if "PASS" in line or "FAIL" in line]
    cells = [[cell.strip() for cell in row.split("│")] for row in rows]
    assert [row[2:4] for row in cells] == [["fair", "scalable"], ["response", "scalable"]]
    assert "baseline" in lines[2]
    for bad in (tmp_path / "absent", tmp_path):
        failed = runner.invoke(app, ["report", str(bad)])
        assert failed.exit_code == 2
        assert failed.output.startswith(f"error: {bad}: is not")
        assert failed.output.count("\n") == 1


def test_a_directory_without_runs_or_a_baseline_that_did_not_run_is_a_report_error(
    suite_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ReportError, match="not a sweep directory"):
        write_report(tmp_path)
    with pytest.raises(ReportError, match=r"'cubic' did not run here \(stacks: reno, scalable\)"):
        write_report(suite_dir, baseline="cubic")


def test_a_mixed_cubic_reno_grid_keeps_run_level_figures_whole_and_gives_each_algorithm(
    tmp_path: Path,
) -> None:
    # Every run mixes a CUBIC and a Reno flow: Jain's index and the utilisation belong to the
    # run (one row, "cubic+reno"), each algorithm's share and goodput to its flows.
    scenario = small_scenario() | {
        "duration": "2s",
        "flow": [{"cc": "cubic", "rtt": "20ms"}, {"cc": "reno", "rtt": "20ms"}],
    }
    axes = {"bottleneck.rate": ["5Mbps", "10Mbps"], "flow.*.rtt": ["10ms", "30ms"]}
    directory = sweep(tmp_path / "mixed", scenario, axes)
    data = load_report_data(directory)
    (section,) = data.sections
    assert section.stacks == ["cubic+reno"]
    view = section_view(section, data, [])
    (row,) = view.rows
    assert row.runs == 8
    assert {"jain_index", "algorithms_jain", "bottleneck_utilization"} <= set(row.cells)
    shares = {group.algorithm: group.share for group in view.algorithms}
    assert sorted(shares) == ["cubic", "reno"]
    assert shares["cubic"].mean + shares["reno"].mean == pytest.approx(1.0)
    runs = section.frame.groupby("run_id")
    assert runs["algorithm_share"].sum().to_list() == pytest.approx([1.0] * 8)
    html, _ = parsed(write_report(directory).path)
    assert "Per algorithm" in html
    assert "mixed: algorithm&#39;s share of the goodput over the grid" in html


def test_the_time_series_are_charts_and_every_figure_can_be_written_for_a_paper(
    suite_dir: Path, tmp_path: Path
) -> None:
    html, page = parsed(write_report(suite_dir, formats=("svg",)).path)
    # Each of the two sweeps: cwnd and goodput of each stack's chosen run, two stacks each.
    assert html.count('<div class="chart"><script type="application/json">') == 2 * 2 * 2
    figures = sorted((suite_dir / "figures").iterdir())
    assert len(figures) == len(page.images)  # every figure of the page, once
    assert all(path.suffix == ".svg" for path in figures)
    assert (suite_dir / "figures" / "fair-time-series-of-chosen-runs.svg").is_file()
    failed = CliRunner().invoke(app, ["report", str(suite_dir), "--format", "tiff"])
    assert failed.exit_code == 2
    assert failed.output.startswith("error: --format: 'tiff' has unknown format 'tiff'")
