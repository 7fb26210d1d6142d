"""Plots of a result's time series, as PNG, SVG or PDF (figure_files.py).

Figures are built with matplotlib's object API (no pyplot), so no display or GUI backend is
ever involved and plotting is safe in scripts, tests and worker processes. Their margins are
fixed, in inches (`fixed_margins`): a layout engine measures every label in a pass of its own
before the figure is drawn, which took half of each plot's time. A long line is drawn through
each pixel bucket's minimum and maximum only (decimate.py), which looks the same and spares
the renderer most of the samples of a 10 ms history.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib import rcParams
from matplotlib.axes import Axes
from matplotlib.collections import LineCollection
from matplotlib.figure import Figure, SubFigure

from tcpeval.report.decimate import OVERVIEW_BUCKETS, line_indexes
from tcpeval.report.figure_files import save_figure
from tcpeval.result import Result
from tcpeval.summary import last_completion_s

LEGEND_MAX_LINES = 12  # beyond this a legend hides the plot it explains
X_MARGIN = 0.05  # past the last transfer's end, so that its last samples show


def plain_text(text: str) -> str:
    """User text (a scenario's name) as matplotlib should show it: as written, never parsed as
    mathtext (`$\\frac{1$` would fail the figure)."""
    return text.replace("$", r"\$")


def write_plots(
    result: Result, directory: str | Path, formats: Sequence[str] = ("png",)
) -> list[Path]:
    """Write cwnd, goodput and queue figures into `directory`, and cc_state for flows whose
    controller reports its state, each in every one of `formats`; returns their paths."""
    directory = Path(directory)
    name = plain_text(result.summary["scenario"]["name"])
    from tcpeval.report.controller_plots import controller_state_figures  # imports this module

    until_s = last_completion_s(result.summary)
    labels = {
        flow["id"]: f"flow {flow['id']} ({flow['cc']}, {flow['rtt_ms']:g} ms)"
        for flow in result.summary["flows"]
    }
    figures = {
        "cwnd": line_figure(
            result.flows,
            key="flow",
            column="cwnd_pkts",
            labels=labels,
            ylabel="cwnd (packets)",
            title=f"{name}: cwnd",
            until_s=until_s,
        ),
        "goodput": line_figure(
            result.flows,
            key="flow",
            column="goodput_mbps",
            labels=labels,
            ylabel="goodput (Mb/s)",
            title=f"{name}: goodput per sample interval",
            until_s=until_s,
        ),
        "queue": line_figure(
            result.links,
            key="link",
            column="queue_pkts",
            labels={},
            ylabel="queue (packets)",
            title=f"{name}: queue length",
            until_s=until_s,
        ),
    }
    figures.update(
        controller_state_figures(result.flows, labels=labels, name=name, until_s=until_s)
    )
    return [
        path
        for stem, figure in figures.items()
        for path in save_figure(figure, directory, stem, formats)
    ]


def line_figure(
    series: pd.DataFrame,
    *,
    key: str,
    column: str,
    labels: dict[object, str],
    ylabel: str,
    title: str,
    until_s: float | None,
) -> Figure:
    """A figure of one line per value of `key` (a flow or a link), `column` against time."""
    figure = Figure(figsize=(9, 4.5))
    fixed_margins(figure)
    axes = figure.add_subplot()
    draw_lines(axes, series, key=key, column=column, labels=labels, until_s=until_s)
    axes.set(xlabel="time (s)", ylabel=ylabel, title=title)
    return figure


def draw_lines(
    axes: Axes,
    series: pd.DataFrame,
    *,
    key: str,
    column: str,
    labels: dict[object, str],
    until_s: float | None = None,
    styles: Mapping[object, tuple[str, tuple[int, ...]]] | None = None,
) -> None:
    """One line per value of `key`, `column` against time, from zero, with a legend if short;
    up to `until_s` (when every transfer has finished) rather than the end of the run. `styles`
    gives a value's colour and dash pattern (charts.line_styles); else colours come in turn."""
    groups = series.groupby(key, sort=True)
    if groups.ngroups > LEGEND_MAX_LINES:
        axes.add_collection(line_collection(series, key, column))
        axes.autoscale_view()
    else:
        for value, rows in groups:
            style: dict[str, Any] = {}
            if styles is not None:
                colour, dash = styles[value]
                style = {"color": colour, "linestyle": (0, dash) if dash else "-"}
            label = labels.get(value, str(value))
            t_s, values = rows["t_s"].to_numpy(float), rows[column].to_numpy(float, na_value=np.nan)
            drawn = line_indexes(t_s, values, OVERVIEW_BUCKETS)
            axes.plot(t_s[drawn], values[drawn], linewidth=1, label=label, **style)
    axes.set_xlim(left=0)
    if until_s is not None:
        axes.set_xlim(right=until_s * (1 + X_MARGIN))
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    # A probe of a real path has no link series: nothing to label.
    if 0 < groups.ngroups <= LEGEND_MAX_LINES:
        axes.legend(loc="best", fontsize="small")


def line_collection(
    series: pd.DataFrame, key: str, column: str, linestyle: str = "-", colour: str | None = None
) -> LineCollection:
    """The lines of every value of `key`, in its order, coloured in turn as `plot` would colour
    them (or all in `colour`), as one artist: matplotlib's work per line made 10,000 flows'
    plots take 20 s."""
    rows = series.sort_values(key, kind="stable")  # each line keeps its rows' order, as groupby
    keys = rows[key].to_numpy()
    points = np.column_stack(
        [rows["t_s"].to_numpy(float), rows[column].to_numpy(float, na_value=np.nan)]
    )
    lines = np.split(points, np.flatnonzero(keys[1:] != keys[:-1]) + 1)
    cycle = [colour] if colour else rcParams["axes.prop_cycle"].by_key()["color"]
    colors = [cycle[i % len(cycle)] for i in range(len(lines))]
    return LineCollection(lines, colors=colors, linewidths=1, linestyles=linestyle)


def fixed_margins(
    figure: Figure | SubFigure,
    *,
    left: float = 0.9,
    bottom: float = 0.6,
    right: float = 0.15,
    top: float = 0.35,
    wspace: float = 0.2,
) -> None:
    """Leave these margins, in inches, around the axes of `figure` (or of a subfigure): room
    for tick labels, axis labels and titles."""
    width, height = figure.get_size_inches() if isinstance(figure, Figure) else _size_inches(figure)
    figure.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=bottom / height,
        top=1 - top / height,
        wspace=wspace,
    )


def _size_inches(subfigure: SubFigure) -> tuple[float, float]:
    """A subfigure's size in inches: its share of its figure's."""
    box = subfigure.bbox_relative
    width, height = subfigure.get_figure(root=True).get_size_inches()
    return width * box.width, height * box.height
