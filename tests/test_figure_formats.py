"""`--format png,svg,pdf`: parsed and refused in one line, and the vector files keep their text
as text (SVG `<text>`, PDF fonts embedded as TrueType rather than Type 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from helpers import small_scenario
from tcpeval import simulate
from tcpeval.cli import app
from tcpeval.figure_formats import parse_formats
from tcpeval.report.plots import write_plots
from tcpeval.scenario import ScenarioError

runner = CliRunner()


def test_formats_are_read_in_order_each_once_whatever_their_case() -> None:
    assert parse_formats("svg, PDF,png,svg") == ("svg", "pdf", "png")


@pytest.mark.parametrize("text", ["gif", "png,jpeg", ",", ""])
def test_a_bad_format_list_names_the_option_and_the_value(text: str) -> None:
    with pytest.raises(ScenarioError, match=f"--format: '{text}'" if text else "--format"):
        parse_formats(text)


def test_the_command_refuses_a_bad_format_before_running(tmp_path: Path) -> None:
    done = runner.invoke(
        app, ["sim", "no-such-scenario.toml", "--out", str(tmp_path / "r"), "--format", "png,gif"]
    )
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        "error: --format: 'png,gif' has unknown format 'gif' (choose from png, svg, pdf)"
    ]
    assert not (tmp_path / "r").exists()


def test_vector_figures_keep_their_text_as_text(tmp_path: Path) -> None:
    paths = write_plots(simulate(small_scenario()), tmp_path, ("svg", "pdf"))
    assert [p.name for p in paths] == [
        f"{stem}.{kind}" for stem in ("cwnd", "goodput", "queue") for kind in ("svg", "pdf")
    ]
    svg = (tmp_path / "cwnd.svg").read_text()
    assert "<text" in svg
    assert "cwnd (packets)" in svg  # the axis label, searchable
    pdf = (tmp_path / "cwnd.pdf").read_bytes()
    assert b"/FontFile2" in pdf  # a TrueType font program embedded (Type 42)
    assert b"/Type3" not in pdf
