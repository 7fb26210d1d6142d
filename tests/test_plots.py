from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from matplotlib.colors import to_hex
from matplotlib.figure import Figure

from helpers import small_scenario
from tcpeval import simulate
from tcpeval.metrics import goodput_mbps
from tcpeval.report.plots import draw_lines, line_figure, write_plots
from tcpeval.summary import last_completion_s, path_rates_bps

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def test_write_plots_draws_cwnd_goodput_and_queue(tmp_path: Path) -> None:
    paths = write_plots(simulate(small_scenario()), tmp_path)
    assert [path.name for path in paths] == ["cwnd.png", "goodput.png", "queue.png"]
    for path in paths:
        data = path.read_bytes()
        assert data.startswith(PNG_SIGNATURE)
        assert len(data) > 10_000  # axes, lines and labels, not an empty canvas


def test_plotted_goodput_never_exceeds_the_link_rate_and_keeps_the_totals() -> None:
    # CUBIC and Reno on 1 Gb/s, 100 ms, 20% BDP: the retransmission that fills a hole releases
    # a window's worth of held data at once, 1.5 Gb/s in one 100 ms sample of one flow.
    result = simulate(
        {
            "duration": "5s",
            "bottleneck": {"rate": "1Gbps", "queue": "20%bdp"},
            "flow": [{"cc": "cubic", "rtt": "100ms"}, {"cc": "reno", "rtt": "100ms"}],
        }
    )
    raw = goodput_mbps(result.flows)
    plotted = goodput_mbps(result.flows, path_rates_bps(result.summary))
    assert path_rates_bps(result.summary) == {0: 1e9, 1: 1e9}
    assert raw["goodput_mbps"].max() > 1000  # what the plot used to show
    assert plotted["goodput_mbps"].max() <= 1000 + 1e-6
    sums = [frame.groupby("flow")["goodput_mbps"].sum() for frame in (raw, plotted)]
    assert sums[0].to_list() == pytest.approx(sums[1].to_list())


def test_the_time_axis_ends_with_the_last_transfer() -> None:
    # 16 streams of a 500 MB transfer finish at about 4 s of a 30 s run.
    result = simulate(
        {
            "duration": "30s",
            "bottleneck": {"rate": "1Gbps", "queue": "100%bdp"},
            "flow": [{"cc": "reno", "rtt": "100ms", "size": "500MB", "streams": 16}],
        }
    )
    until_s = last_completion_s(result.summary)
    assert until_s is not None
    assert until_s < 10
    figure = Figure()
    axes = figure.add_subplot()
    draw_lines(axes, result.flows, key="flow", column="cwnd_pkts", labels={}, until_s=until_s)
    assert axes.get_xlim()[1] == pytest.approx(until_s * 1.05)


def test_a_plot_keeps_every_label_inside_its_fixed_margins() -> None:
    """Margins are fixed, not computed: a six-digit window (250,000 packets: 100 Gb/s ×
    30 ms) and a long title must still fit."""
    times = [0.0, 1.0, 2.0]
    flows = pd.DataFrame({"t_s": times, "flow": 0, "cwnd_pkts": [0.0, 125_000.0, 250_000.0]})
    title = "a-scenario-name-of-some-length-as-users-write-them: cwnd"
    labels = {0: "flow 0 (cubic, 20 ms)"}
    kwargs = {"key": "flow", "column": "cwnd_pkts", "labels": labels, "until_s": None}
    figure = line_figure(flows, ylabel="cwnd (packets)", title=title, **kwargs)
    drawn = figure.get_tightbbox()  # inches, around every artist drawn
    width, height = figure.get_size_inches()
    assert drawn.x0 >= 0
    assert drawn.y0 >= 0
    assert drawn.x1 <= width
    assert drawn.y1 <= height


def test_more_lines_than_a_legend_can_name_are_drawn_as_one_collection_in_plots_colours() -> None:
    # As separate lines, 10,000 flows' plots took 20 s of matplotlib's work per line; drawn as
    # one collection each flow must still be its own line, in its rows' order and in the colour
    # plot() would have given it.
    rows = [(t, flow, 10 * flow + t) for t in (3.0, 1.0, 2.0) for flow in range(30)]
    series = pd.DataFrame(rows, columns=["t_s", "flow", "cwnd_pkts"])
    axes = {count: Figure().add_subplot() for count in (12, 30)}
    for count, ax in axes.items():
        draw_lines(ax, series[series["flow"] < count], key="flow", column="cwnd_pkts", labels={})
    few, many = axes[12], axes[30]
    assert len(few.lines) == 12
    assert few.get_legend() is not None
    assert not many.lines
    assert many.get_legend() is None
    (collection,) = many.collections
    paths = [path.vertices.tolist() for path in collection.get_paths()]
    assert paths == [[[t, 10 * flow + t] for t in (3.0, 1.0, 2.0)] for flow in range(30)]
    colours = [to_hex(colour) for colour in collection.get_colors()]
    assert colours[:12] == [to_hex(line.get_color()) for line in few.lines]
    assert colours[10:20] == colours[:10]  # the cycle repeats, as plot()'s does
    assert many.get_ylim()[1] >= 10 * 29 + 3.0  # the view holds every line


def test_a_bbr_run_also_plots_its_controller_state(tmp_path: Path) -> None:
    data = small_scenario()
    data["flow"] = [{"cc": "bbr3", "rtt": "20ms"}, {"cc": "reno", "rtt": "20ms"}]
    paths = write_plots(simulate(data), tmp_path)
    assert tmp_path / "cc_state.png" in paths
    assert (tmp_path / "cc_state.png").stat().st_size > 10_000
