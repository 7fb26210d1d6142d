"""compare.html's content: a colour per backend, units on the axes, each backend's time from
its first delivered byte, and the lab's validity with its failed checks."""

from __future__ import annotations

import copy
import json
import re

import pandas as pd
import pytest
from matplotlib.colors import to_hex

from helpers import small_scenario
from tcpeval import simulate
from tcpeval.compare import Comparison
from tcpeval.report.compare_page import aligned_flows, overlay, overlay_chart, render_comparison
from tcpeval.result import GOODPUT_COLUMN, Result

LAB_START_S = 4.5  # the lab's clock runs this long before its first packet, as seen in runs
FAILED_CHECK = {
    "name": "bottleneck rate",
    "ok": False,
    "measured": 9_400_000,
    "asked": 10_000_000,
    "tolerance": "±2% while backlogged",
    "note": "",
}


def late_and_invalid(result: Result) -> Result:
    """The result as the lab would give it: its samples 4.5 s late, behind samples of nothing
    delivered, and invalid by one failed check."""
    flows = result.flows.assign(t_s=result.flows["t_s"] + LAB_START_S)
    idle = flows.groupby("flow", as_index=False).first().assign(t_s=0.0, delivered_bytes=0)
    summary = copy.deepcopy(result.summary)
    summary["backend"] |= {"name": "lab", "valid": False, "invalid_reason": "bottleneck rate"}
    summary["backend"]["details"] = {"checks": [FAILED_CHECK]}
    return Result(summary, pd.concat([idle, flows], ignore_index=True), result.links)


@pytest.fixture(scope="module")
def comparison() -> Comparison:
    sim = simulate(small_scenario() | {"duration": "3s"})
    results = {"sim": sim, "lab": late_and_invalid(sim)}
    return Comparison("two", list(results), 0.2, [], results)


def test_each_backend_counts_time_from_its_first_delivered_byte(comparison: Comparison) -> None:
    sim, lab = (aligned_flows(r) for r in comparison.results.values())
    first_sim = sim[sim["delivered_bytes"] > 0].groupby("flow")["t_s"].min()
    first_lab = lab[lab["delivered_bytes"] > 0].groupby("flow")["t_s"].min()
    pd.testing.assert_series_equal(first_sim, first_lab, rtol=1e-12)  # up to float rounding


def test_a_colour_per_backend_and_units_on_the_axes(comparison: Comparison) -> None:
    chart = overlay_chart(comparison, GOODPUT_COLUMN)
    colours = {line.label.split()[0]: set() for line in chart.lines}
    for line in chart.lines:
        colours[line.label.split()[0]].add(line.colour)
    assert colours == {"sim": {to_hex("C0")}, "lab": {to_hex("C1")}}
    assert chart.y_label == "goodput per sample interval (Mb/s)"
    assert "(s)" in chart.x_label
    figure = overlay(comparison, "cwnd_pkts")
    axes = figure.axes[0]
    assert axes.get_ylabel() == "cwnd (packets)"
    drawn = {to_hex(line.get_color()) for line in axes.get_lines() if len(line.get_xdata())}
    assert drawn == {to_hex("C0"), to_hex("C1")}


def test_the_page_shows_the_labs_failed_checks_and_the_charts(comparison: Comparison) -> None:
    html = render_comparison(comparison)
    row = re.search(r"<tr><td>lab</td><td class=\"invalid\">invalid</td>(.*?)</tr>", html, re.S)
    assert row is not None
    assert "bottleneck rate" in row.group(1)
    assert "9400000" in row.group(1)
    assert "not judged" in html  # the simulator has no self-checks
    charts = re.findall(r'<script type="application/json">(.*?)</script>', html, re.S)
    assert len(charts) == 2
    assert [line["label"] for line in json.loads(charts[0])["lines"]][:2] == [
        "sim flow 0",
        "sim flow 1",
    ]
