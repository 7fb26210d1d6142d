"""What the report picks to show, on hand-made frames shaped as tcpeval.load returns them."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
from matplotlib.figure import Figure

from tcpeval.report.charts import line_styles
from tcpeval.report.content import (
    axis_order,
    box_panel,
    chosen_runs,
    heatmap_panel,
    response_panel,
    rtt_unfairness_panels,
    section_view,
)
from tcpeval.report.dataset import ReportData, Section
from tcpeval.report.figures import log_ticks, power_text

RATES = {"100Mbps": 100e6, "10Mbps": 10e6, "250Mbps": 250e6}


def frame() -> pd.DataFrame:
    """Two stacks × three rates × two RTTs × two repeats, one row per run (one flow)."""
    rows = []
    for stack in ("reno", "cubic"):
        for rate, bps in RATES.items():
            for rtt in (16.0, 162.0):
                for repeat in (1, 0):
                    rows.append(
                        {
                            "run_id": f"{stack}-{rate}-{rtt}-{repeat}",
                            "repeat": repeat,
                            "bottleneck.rate": rate,
                            "bottleneck_rate_mbps": bps / 1e6,
                            "flow.*.rtt": f"{rtt:g}ms",
                            "flow_all_rtt_ms": rtt,
                            "stack": stack,
                            "id": 0,
                            "cc": stack,
                            "rtt_ms": rtt,
                            "jain_index": 0.5 + repeat / 10,
                        }
                    )
    return pd.DataFrame(rows)


def section(data: pd.DataFrame, axes: list[str]) -> Section:
    return Section("t", Path("/nonexistent"), data, axes)


def test_axis_values_are_ordered_by_their_numbers() -> None:
    assert axis_order(frame(), "bottleneck.rate") == ["10Mbps", "100Mbps", "250Mbps"]
    mixed = pd.DataFrame({"a": ["b", "a", "b"]})
    assert axis_order(mixed, "a") == ["b", "a"]  # no numbers: as they come


def test_the_chosen_run_of_each_stack_is_the_first_repeat_at_the_largest_bdp() -> None:
    chosen = chosen_runs(section(frame(), ["bottleneck.rate", "flow.*.rtt"]))
    assert [(stack, run["run_id"]) for stack, run in chosen] == [
        ("reno", "reno-250Mbps-162.0-0"),
        ("cubic", "cubic-250Mbps-162.0-0"),
    ]


def test_a_heatmap_needs_two_axes_with_several_values() -> None:
    data = frame()
    assert heatmap_panel(section(data, ["bottleneck.rate", "flow.*.rtt"]), "jain_index").figure
    one = data[data["flow.*.rtt"] == "16ms"]
    panel = heatmap_panel(section(one, ["bottleneck.rate", "flow.*.rtt"]), "jain_index")
    assert panel.figure is None
    assert panel.note.startswith("No heatmap")


def test_box_plots_say_how_many_repeats_each_box_spans() -> None:
    panel = box_panel(section(frame(), ["bottleneck.rate", "flow.*.rtt"]), "jain_index")
    assert panel.figure is not None
    assert "(2 per point)" in panel.caption
    no_axes = box_panel(section(frame()[frame()["repeat"] == 0], []), "jain_index")
    assert "one repeat per point" not in no_axes.caption  # 6 runs per stack at the one point


def rtt_frame(exponents: dict[str, float]) -> pd.DataFrame:
    """Runs measured as the RTT-unfairness test does, each stack exactly following
    x1/x0 = (RTT0/RTT1)^k, two rows (flows) per run; one starved run."""
    rows = []
    for stack, k in exponents.items():
        for rtt_ratio in (0.5, 2.0, 4.0, 8.0):
            for flow in (0, 1):
                rows.append(
                    {
                        "run_id": f"{stack}-{rtt_ratio}",
                        "stack": stack,
                        "id": flow,
                        "rtt_ratio": rtt_ratio,
                        "goodput_ratio": rtt_ratio**-k,
                    }
                )
    starved = {"run_id": "reno-starved", "stack": "reno", "rtt_ratio": 8.0, "goodput_ratio": 0.0}
    return pd.DataFrame([*rows, starved | {"id": 0}, starved | {"id": 1}])


def test_rtt_unfairness_shows_each_stacks_fitted_exponent() -> None:
    [panel] = rtt_unfairness_panels(section(rtt_frame({"reno": 2.0, "cubic": 0.5}), []))
    assert panel.figure is not None
    legend = [t.get_text() for t in panel.figure.axes[0].get_legend().get_texts()]
    assert legend[:2] == ["reno: k = 2.00", "cubic: k = 0.50"]
    assert "left out (1 run)" in panel.caption
    assert rtt_unfairness_panels(section(frame(), [])) == []  # other measures: no panel


def drawn_tick_labels(figure: Figure) -> tuple[list[str], list[str]]:
    """The x and y tick labels a figure's ticks get once it is drawn: major and minor, blanks
    left out, and those of the ticks just outside the view kept in."""
    figure.draw_without_rendering()
    [axes] = figure.axes
    shown = []
    for axis in (axes.xaxis, axes.yaxis):
        ticks = axis.get_ticklabels() + axis.get_ticklabels(minor=True)
        shown.append([t.get_text() for t in ticks if t.get_text() and t.get_visible()])
    return shown[0], shown[1]


def test_log_axes_label_their_ticks_as_numbers_or_powers_never_as_mathtext() -> None:
    [panel] = rtt_unfairness_panels(section(rtt_frame({"reno": 2.0, "cubic": 0.5}), []))
    assert panel.figure is not None
    x_labels, y_labels = drawn_tick_labels(panel.figure)
    assert {"1", "10"} <= set(x_labels)  # RTT ratios 0.5–8: numbers
    assert {"10⁻²", "10⁰"} <= set(y_labels)  # throughput ratios down to 8⁻²: powers
    assert not any("$" in t for t in x_labels + y_labels)
    # An axis reaching past 0.01: powers of ten throughout, never mixed with numbers.
    wide = Figure()
    axes = wide.add_subplot()
    axes.loglog([1e-5, 0.1], [1, 2e4])
    log_ticks(axes)
    x_labels, y_labels = drawn_tick_labels(wide)
    assert {"10⁻⁵", "10⁻³", "10⁻¹"} <= set(x_labels)
    assert {"10⁰", "10²", "10⁴"} <= set(y_labels)
    assert all(t.startswith("10") or "×10" in t for t in x_labels + y_labels)


def test_a_power_of_ten_keeps_its_leading_digit() -> None:
    assert [power_text(x) for x in (1e-5, 3e-5, 2e4, 1.0)] == ["10⁻⁵", "3×10⁻⁵", "2×10⁴", "10⁰"]


def mixed_frame() -> pd.DataFrame:
    """One stack, "cubic+bbr+reno": every run has one flow of each algorithm, over four loss
    rates; each flow's goodput its own, so that the algorithms' points differ."""
    rows = []
    for loss in (1e-5, 1e-4, 1e-3, 1e-2):
        for flow, (cc, goodput) in enumerate((("cubic", 30.0), ("bbr", 60.0), ("reno", 10.0))):
            rows.append(
                {
                    "run_id": f"mixed-{loss}",
                    "repeat": 0,
                    "bottleneck.loss": loss,
                    "stack": "cubic+bbr+reno",
                    "id": flow,
                    "cc": cc,
                    "rtt_ms": 50.0,
                    "goodput_mbps": goodput,
                    "algorithm_share": goodput / 100,
                    "jain_index": 0.8,
                    "algorithms_jain": 0.8,  # one flow per algorithm: the same number
                    "bottleneck_utilization": 0.9,
                }
            )
    return pd.DataFrame(rows)


def test_a_mixed_runs_response_function_has_a_colour_per_algorithm() -> None:
    panel = response_panel(section(mixed_frame(), ["bottleneck.loss"]))
    assert panel.figure is not None, panel.note
    axes = panel.figure.axes[0]
    points = [line for line in axes.get_lines() if line.get_marker() == "o"]
    assert [line.get_label() for line in points] == ["cubic", "bbr", "reno"]
    assert len({line.get_color() for line in points}) == 3


def test_a_figure_that_would_repeat_another_is_drawn_once() -> None:
    data = section(mixed_frame(), ["bottleneck.loss"])
    titles = [
        p.title for p in section_view(data, ReportData(Path("/nonexistent"), [data]), []).panels
    ]
    repeats = [t for t in titles if "over repeats" in t]
    assert len(repeats) == len(set(repeats)) == 2  # Jain's index and the utilisation, once each


def test_a_mixed_run_has_a_colour_per_algorithm_and_a_dash_per_flow_of_one() -> None:
    flows = pd.DataFrame({"flow": [2, 0, 1, 0], "cc": ["cubic", "cubic", "reno", "cubic"]})
    styles = line_styles(flows)
    assert styles[0][0] == styles[2][0] != styles[1][0]
    assert styles[0][1] != styles[2][1]  # two CUBIC flows, told apart by their dashes
    alone = line_styles(flows.assign(cc="cubic"))
    assert len({colour for colour, _ in alone.values()}) == 3
