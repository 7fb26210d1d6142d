"""Interactive time-series charts for the HTML pages: zoom, pan, values under the cursor and
series shown or hidden from the legend, drawn in the browser by uPlot.

uPlot (MIT, one 50 KB file, no dependencies) is made for long time series: it draws 100,000
points to a canvas in milliseconds, where SVG-based libraries (Plotly, Chart.js' DOM-heavy
legends, Vega) are ten times larger or slow past a few thousand points. package.json pins it;
its build is in vendor/ and inlined into each page, so a page is one file that works offline.

Each chart carries two copies of its lines: an overview, min/max-decimated to about a pixel per
bucket over the whole run (decimate.py: no spike or dip is lost), drawn first; and the samples
as measured, which charts.js draws instead once a zoom leaves few enough of them in view. A
chart over RAW_POINTS_MAX samples keeps the overview only, so that a page stays a few MB.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Any

import numpy as np
import pandas as pd
from markupsafe import Markup
from matplotlib.colors import to_hex

from tcpeval.report.decimate import OVERVIEW_BUCKETS, min_max_indexes

RAW_POINTS_MAX = 500_000
TIME_DECIMALS = 6  # microseconds: finer than any sample interval
VALUE_SIGNIFICANT = 6
DASHES = ((), (6, 4), (2, 3), (8, 3, 2, 3))
"""Dash patterns, in pixels, that tell apart lines of one colour."""


@dataclass(frozen=True)
class Line:
    """One line of a chart: its legend label, CSS colour, samples and dash pattern (lengths
    in pixels of dash and gap; none: solid)."""

    label: str
    colour: str
    t_s: np.ndarray
    values: np.ndarray
    dash: tuple[int, ...] = ()


@dataclass(frozen=True)
class Chart:
    """A chart's title, axis labels (with their units) and lines."""

    title: str
    x_label: str
    y_label: str
    lines: Sequence[Line]


def chart_json(chart: Chart) -> Markup:
    """The chart as the JSON charts.js reads, safe inside a `<script>` element."""
    measured = [_as_sorted(line.t_s, line.values) for line in chart.lines]
    overview = []
    for t, y in measured:
        kept = min_max_indexes(t, y, OVERVIEW_BUCKETS)
        overview.append((t[kept], y[kept]))
    raw_points = sum(len(t) for t, _ in measured)
    body: dict[str, Any] = {
        "title": chart.title,
        "x_label": chart.x_label,
        "y_label": chart.y_label,
        "lines": [
            {"label": line.label, "colour": line.colour, "dash": list(line.dash)}
            for line in chart.lines
        ],
        "overview": _aligned(overview),
        "detail": (
            None if raw_points > RAW_POINTS_MAX else [[_times(t), _numbers(y)] for t, y in measured]
        ),
    }
    text = json.dumps(body, separators=(",", ":"), allow_nan=False)
    return Markup(text.replace("</", "<\\/"))  # JSON, its `</` escaped


def line_styles(flows: pd.DataFrame) -> dict[object, tuple[str, tuple[int, ...]]]:
    """Each flow's colour and dash pattern: a colour per flow, or, when the flows mix
    algorithms (their `cc`), a colour per algorithm and a dash pattern per flow of it."""
    firsts = flows.drop_duplicates("flow").sort_values("flow")
    mixed = "cc" in firsts and firsts["cc"].nunique() > 1
    keys = firsts["cc"] if mixed else firsts["flow"]
    colour_index = {key: i for i, key in enumerate(pd.unique(keys))}
    within = firsts.groupby("cc").cumcount() if mixed else pd.Series(0, index=firsts.index)
    return {
        flow: (to_hex(f"C{colour_index[key] % 10}"), DASHES[rank % len(DASHES)])
        for flow, key, rank in zip(firsts["flow"], keys, within, strict=True)
    }


def _as_sorted(t_s: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = np.asarray(t_s, dtype=float)
    y = np.asarray(values, dtype=float)
    order = np.argsort(t, kind="stable")
    return t[order], y[order]


def _aligned(lines: list[tuple[np.ndarray, np.ndarray]]) -> list[list[float | None]]:
    """uPlot's data: the union of the lines' times, then each line's values on it, null
    where the line has no sample (drawn across: `spanGaps`)."""
    times = np.unique(np.concatenate([t for t, _ in lines])) if lines else np.array([])
    columns: list[list[float | None]] = [_times(times)]
    for t, y in lines:
        column = np.full(len(times), np.nan)
        column[np.searchsorted(times, t)] = y
        columns.append(_numbers(column))
    return columns


def _times(t: np.ndarray) -> list[float | None]:
    return _numbers(np.round(t, TIME_DECIMALS))


def _numbers(values: np.ndarray) -> list[float | None]:
    """Floats to `VALUE_SIGNIFICANT` digits (the JSON's size), NaN and infinities as null."""
    finite = np.isfinite(values)
    nonzero = finite & (values != 0)
    magnitude = np.floor(np.log10(np.abs(values, where=nonzero, out=np.ones_like(values))))
    scale = 10.0 ** (VALUE_SIGNIFICANT - 1 - magnitude)
    rounded = np.where(finite, np.round(values * scale) / scale, np.nan)
    return [None if x != x else x for x in rounded.tolist()]  # NaN is the one x != x


@cache
def chart_assets() -> Markup:
    """uPlot's CSS and script and charts.js, to inline once into a page's `<head>`."""
    here = files("tcpeval.report")
    css = (here / "vendor" / "uPlot.min.css").read_text(encoding="utf-8")
    library = (here / "vendor" / "uPlot.iife.min.js").read_text(encoding="utf-8")
    ours = (here / "templates" / "charts.js").read_text(encoding="utf-8")
    return Markup(  # the package's own files
        f"<style>{css}</style>\n<script>{library}</script>\n<script>{ours}</script>"
    )
