"""Sweep-level figures: heatmaps over the grid, box plots over repeats, time series of chosen
runs, the response function beside the models and RTT unfairness with its fitted exponent.

Each function takes the numbers it draws and returns a matplotlib Figure built with the object
API (no pyplot, no display). Choosing what to draw, and saying why a figure is missing, is the
report's business (html.py).

Margins are fixed, in inches (`plots.fixed_margins`), rather than found by a layout engine:
constrained layout measures every label in a pass of its own before the figure is drawn, which
took half of a report's rendering. Log axes label their ticks in plain text (`LogTicks`)
rather than in matplotlib's mathtext, whose parser took a tenth of a report's rendering.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.axes import Axes
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from matplotlib.ticker import LogFormatter

from tcpeval import models
from tcpeval.metrics import goodput_mbps, label
from tcpeval.report.charts import line_styles
from tcpeval.report.plots import draw_lines, fixed_margins
from tcpeval.report.tables import number
from tcpeval.report.verdicts import format_axis_value, format_where

BOX_POINTS_MAX = 40  # beyond this the boxes are too thin to read
PLAIN_DECADES = range(-2, 4)  # 0.01 to 9000 read better as numbers than as powers of ten
SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def heatmap(
    points: pd.DataFrame, metric: str, x: str, y: str, order: dict[str, list[object]]
) -> Figure:
    """One panel per stack: `metric` over the x and y axes, cells labelled with their values.

    `points` has columns stack, x, y, value (one row per cell); `order` lists each axis's values.
    """
    stacks = list(pd.unique(points["stack"]))
    figure = Figure(figsize=(4.2 * len(stacks) + 1.2, 0.5 * len(order[y]) + 2.4))
    fixed_margins(figure, left=1.0, bottom=0.7, wspace=0.45)
    panels = figure.subplots(1, len(stacks), squeeze=False)[0]
    finite = points["value"][np.isfinite(points["value"].astype(float))]
    low, high = float(finite.min()), float(finite.max())
    image = None
    for axes, stack in zip(panels, stacks, strict=True):
        cells = points[points["stack"] == stack].pivot_table("value", index=y, columns=x)
        cells = cells.reindex(index=order[y], columns=order[x])
        image = axes.imshow(
            cells.to_numpy(float), origin="lower", aspect="auto", vmin=low, vmax=high
        )
        _label_cells(axes, cells.to_numpy(float), low, high)
        axes.set_xticks(range(len(order[x])), [format_axis_value(x, v) for v in order[x]])
        axes.set_yticks(range(len(order[y])), [format_axis_value(y, v) for v in order[y]])
        axes.set(xlabel=x, ylabel=y, title=stack)
    assert image is not None  # a figure has a panel per stack, and there is a stack
    figure.colorbar(image, ax=list(panels), label=label(metric), shrink=0.9)
    return figure


def box_plot(runs: pd.DataFrame, metric: str, axes_names: Sequence[str]) -> Figure:
    """Boxes over the repeats of each grid point, one colour per stack, every run a dot.

    `runs` has columns stack, the axes, value (one row per run).
    """
    points = runs.drop_duplicates(list(axes_names))[list(axes_names)].head(BOX_POINTS_MAX)
    stacks = list(pd.unique(runs["stack"]))
    width = 0.8 / len(stacks)
    colours = _colours(len(stacks))
    figure = Figure(figsize=(max(7.0, 0.6 * len(points) * len(stacks) + 2), 4.6))
    fixed_margins(figure, bottom=1.5 if len(points) > 4 else 0.7)
    axes = figure.add_subplot()
    for offset, (stack, colour) in enumerate(zip(stacks, colours, strict=True)):
        mine = runs[runs["stack"] == stack]
        data = [_finite(_matching(mine, point, axes_names)["value"]) for point in _rows(points)]
        positions = np.arange(len(data)) + (offset - (len(stacks) - 1) / 2) * width
        kept = [i for i, values in enumerate(data) if values.size]
        boxes = axes.boxplot(
            [data[i] for i in kept],
            positions=positions[kept],
            widths=0.85 * width,
            patch_artist=True,
            showfliers=False,
            manage_ticks=False,
            medianprops={"color": colour, "linewidth": 2},
        )
        for box in boxes["boxes"]:
            box.set(facecolor=colour, alpha=0.35)
        for i in kept:
            axes.plot(
                np.full(data[i].size, positions[i]),
                data[i],
                "o",
                color=colour,
                markeredgecolor="black",
                markeredgewidth=0.5,
                markersize=5,
                zorder=3,
            )
    where = [format_where(point, axes_names) for point in _rows(points)]
    axes.set_xticks(
        range(len(where)),
        where,
        rotation=30 if len(where) > 4 else 0,
        ha="right" if len(where) > 4 else "center",
    )
    axes.set(ylabel=label(metric), title=f"{label(metric)} over repeats")
    axes.grid(alpha=0.3, axis="y")
    axes.legend([Patch(color=c, alpha=0.6) for c in colours], stacks, fontsize="small")
    return figure


@dataclass(frozen=True)
class RunSeries:
    """A run's time series as drawn: its title, flows, flow labels and path rates."""

    title: str
    flows: pd.DataFrame
    labels: dict[object, str]
    path_rates_bps: dict[int, float]
    until_s: float | None
    """When its last transfer finished; None when a flow runs to the end."""


def time_series(runs: Sequence[RunSeries]) -> Figure:
    """One row per run: cwnd and goodput (at most the path's rate, metrics.goodput_mbps); a
    colour per flow, or per algorithm when a run mixes them (charts.line_styles)."""
    figure = Figure(figsize=(12, 3.1 * len(runs)))
    for run, row in zip(runs, figure.subfigures(len(runs), 1, squeeze=False)[:, 0], strict=True):
        fixed_margins(row, top=0.4, wspace=0.2)
        cwnd_axes, goodput_axes = row.subplots(1, 2)
        styles = line_styles(run.flows)
        lines: dict[str, Any] = {
            "key": "flow",
            "labels": run.labels,
            "until_s": run.until_s,
            "styles": styles,
        }
        draw_lines(cwnd_axes, run.flows, column="cwnd_pkts", **lines)
        goodput = goodput_mbps(run.flows, run.path_rates_bps)
        draw_lines(goodput_axes, goodput, column="goodput_mbps", **lines)
        cwnd_axes.set(xlabel="time (s)", ylabel="cwnd (packets)")
        goodput_axes.set(xlabel="time (s)", ylabel="goodput per sample (Mb/s)")
        row.suptitle(run.title, fontsize="medium")
    return figure


@dataclass(frozen=True)
class PathModel:
    """What the models need to know about the runs' flows (models.py)."""

    rtt_s: float
    mss_bytes: float
    rto_s: float
    b: int
    """Packets acknowledged per ACK that grows the window (models.acked_per_increase)."""

    def window_pkts(self, goodput_bps: np.ndarray | float) -> np.ndarray | float:
        """An average window in packets from a goodput: goodput · RTT / (8 · MSS)."""
        return goodput_bps * self.rtt_s / (8 * self.mss_bytes)


def response_function(points: pd.DataFrame, x_label: str, path: PathModel) -> Figure:
    """Log-log average window against the loss rate, per stack, with the models drawn.

    `points` has columns stack, p, window_pkts. Models: Mathis and PFTK for the runs' RTT,
    MSS, RTO and ACK policy; the HighSpeed (RFC 3649) and Scalable response functions.
    """
    p = np.geomspace(points["p"].min() / 2, points["p"].max() * 2, 200)
    figure = Figure(figsize=(8, 5.5))
    fixed_margins(figure)
    axes = figure.add_subplot()
    for stack, rows in points.groupby("stack", sort=False):
        axes.loglog(rows["p"], rows["window_pkts"], "o", label=str(stack), alpha=0.8)
    curves = {
        f"Mathis (b = {path.b})": [
            models.mathis_goodput_bps(path.mss_bytes, path.rtt_s, q, path.b) for q in p
        ],
        f"PFTK (RTO {path.rto_s:.2f} s)": [
            models.pftk_goodput_bps(path.mss_bytes, path.rtt_s, q, path.rto_s, path.b) for q in p
        ],
    }
    for (name, goodputs), style in zip(curves.items(), ("-", "-."), strict=True):
        axes.loglog(p, path.window_pkts(np.array(goodputs)), style, linewidth=1.2, label=name)
    axes.loglog(
        p, [models.hstcp_response_window_pkts(q) for q in p], "--", label="HighSpeed (RFC 3649)"
    )
    axes.loglog(
        p, [models.scalable_response_window_pkts(q) for q in p], ":", label="Scalable (0.08/p)"
    )
    log_ticks(axes)
    axes.set(xlabel=x_label, ylabel=label("window_pkts"), title="response function")
    axes.grid(alpha=0.3, which="both")
    axes.legend(fontsize="small")
    return figure


def rtt_unfairness(points: pd.DataFrame, exponents: dict[str, float]) -> Figure:
    """Log-log throughput ratio x1/x0 against RTT ratio RTT1/RTT0, one colour per stack, with
    each stack's fitted (RTT0/RTT1)^k and the k = 1 and k = 2 references.

    `points` has columns stack, rtt_ratio, goodput_ratio; `exponents` maps stack to k.
    """
    figure = Figure(figsize=(8, 5.5))
    fixed_margins(figure)
    axes = figure.add_subplot()
    span = np.geomspace(points["rtt_ratio"].min() / 1.2, points["rtt_ratio"].max() * 1.2, 50)
    for (stack, rows), colour in zip(
        points.groupby("stack", sort=False), _colours(len(exponents)), strict=True
    ):
        k = exponents[str(stack)]
        axes.loglog(rows["rtt_ratio"], rows["goodput_ratio"], "o", color=colour, alpha=0.8)
        axes.loglog(span, span**-k, "-", color=colour, label=f"{stack}: k = {k:.2f}")
    for k, style in ((1, ":"), (2, "--")):
        axes.loglog(span, span**-k, style, color="grey", linewidth=1, label=f"1/RTT^{k}")
    log_ticks(axes)
    axes.set(
        xlabel=label("rtt_ratio"),
        ylabel=label("goodput_ratio"),
        title="RTT unfairness: x1/x0 = (RTT0/RTT1)^k",
    )
    axes.grid(alpha=0.3, which="both")
    axes.legend(fontsize="small")
    return figure


class LogTicks(LogFormatter):
    """Log-axis tick labels as plain text: matplotlib's choice of which ticks to label, written
    as numbers (`0.3`, `20`) on an axis within `PLAIN_DECADES`, else as powers of ten (`10⁻⁵`,
    `2×10⁻⁵`) throughout, so that one axis never mixes the two."""

    def __call__(self, x: float, pos: int | None = None) -> str:
        if not super().__call__(x, pos):
            return ""
        if self.axis is None:  # not on an axis yet: nothing to keep consistent with
            return power_text(x)
        low, high = self.axis.get_view_interval()
        plain = _decade(low) in PLAIN_DECADES and _decade(high) in PLAIN_DECADES
        return f"{x:.{max(0, -_decade(x))}f}" if plain else power_text(x)


def power_text(x: float) -> str:
    """A positive value as a power of ten with its leading digit, in Unicode superscripts:
    `10⁻⁵`, `3×10⁻⁵`."""
    exponent = _decade(x)
    mantissa = round(x / 10.0**exponent)
    power = f"10{str(exponent).translate(SUPERSCRIPT)}"
    return power if mantissa == 1 else f"{mantissa}×{power}"


def _decade(x: float) -> int:
    """The power of ten at or below `x` (> 0), robust to 1e-3 computed as 0.000999…"""
    return math.floor(math.log10(x) + 1e-9)


def log_ticks(axes: Axes) -> None:
    """Both axes of a log-log plot labelled by `LogTicks`."""
    for axis in (axes.xaxis, axes.yaxis):
        axis.set_major_formatter(LogTicks())
        axis.set_minor_formatter(LogTicks())


def _label_cells(axes: Axes, values: np.ndarray, low: float, high: float) -> None:
    """Write each cell's value on it, dark on light cells and light on dark ones."""
    middle = (low + high) / 2
    for (row, column), value in np.ndenumerate(values):
        if np.isnan(value):
            continue
        colour = "black" if value > middle else "white"
        axes.text(column, row, number(value), ha="center", va="center", color=colour, fontsize=9)


def _finite(values: pd.Series) -> np.ndarray:
    numbers = values.to_numpy(float)
    return numbers[np.isfinite(numbers)]


def _rows(points: pd.DataFrame) -> list[pd.Series]:
    return [row for _, row in points.iterrows()]


def _matching(frame: pd.DataFrame, point: pd.Series, axes_names: Sequence[str]) -> pd.DataFrame:
    """The rows of `frame` at a grid point."""
    mask = np.ones(len(frame), dtype=bool)
    for axis in axes_names:
        mask &= (frame[axis] == point[axis]).to_numpy()
    return frame[mask]


def _colours(count: int) -> list[str]:
    return [f"C{i % 10}" for i in range(count)]
