"""`compare.html`: a comparison of backends as one self-contained page: its table, each
backend's validity (the lab's self-checks) and the time series of every backend overlaid, as
interactive charts (charts.py) and as static figures (PNG in the page, any format as files).

One colour per backend and a line style per flow, so that the backends, the question the page
asks, are told apart first. Each backend's time runs from its own first delivered byte: the
lab starts its clock seconds before its first packet (namespaces, the emulator, the handshake)
and the simulator at its first packet, so on their own clocks the same dynamics would stand
apart on the page.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, cast

import pandas as pd
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from tcpeval.compare import Comparison
from tcpeval.report.charts import DASHES, Chart, Line, chart_assets, chart_json
from tcpeval.report.figure_files import save_figure
from tcpeval.report.html import png_data_uri, templates
from tcpeval.report.plots import LEGEND_MAX_LINES, fixed_margins, line_collection, plain_text
from tcpeval.result import GOODPUT_COLUMN, Result

TEMPLATE = "compare.html.j2"
LineStyle = Literal["-", "--", ":", "-."]
LINE_STYLES: tuple[LineStyle, ...] = ("-", "--", ":", "-.")
TIME_LABEL = "time since the backend's first byte (s)"
SERIES = {GOODPUT_COLUMN: "goodput per sample interval (Mb/s)", "cwnd_pkts": "cwnd (packets)"}
"""The columns overlaid, with their axis labels."""


@dataclass(frozen=True)
class Validity:
    """A backend's verdict on its own run: valid, invalid with the checks it failed, or not
    judged (a backend without self-checks)."""

    backend: str
    valid: bool | None
    failed_checks: list[dict[str, Any]]


def render_comparison(comparison: Comparison) -> str:
    """The page's HTML."""
    figures = {label: png_data_uri(overlay(comparison, column)) for column, label in SERIES.items()}
    charts = [chart_json(overlay_chart(comparison, column)) for column in SERIES]
    template = templates().get_template(TEMPLATE)
    return template.render(
        comparison=comparison,
        validity=[validity(name, result) for name, result in comparison.results.items()],
        charts=charts,
        chart_assets=chart_assets(),
        figures=figures,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def write_overlays(comparison: Comparison, directory: Path, formats: Sequence[str]) -> list[Path]:
    """The overlays as files, `goodput.<format>` and `cwnd.<format>`, for papers."""
    stems = {GOODPUT_COLUMN: "goodput", "cwnd_pkts": "cwnd"}
    return [
        path
        for column, stem in stems.items()
        for path in save_figure(overlay(comparison, column), directory, stem, formats)
    ]


def validity(backend: str, result: Result) -> Validity:
    details = result.summary["backend"].get("details") or {}
    failed = [check for check in details.get("checks", []) if not check.get("ok", True)]
    return Validity(backend, result.summary["backend"].get("valid"), failed)


def aligned_flows(result: Result) -> pd.DataFrame:
    """The result's flow samples, sorted, with `t_s` counted from its first delivered byte
    (kept as it is when no byte was delivered)."""
    flows = result.flows.sort_values(["flow", "t_s"], kind="stable")
    delivered = flows["t_s"][flows["delivered_bytes"] > 0]
    start_s = float(delivered.min()) if len(delivered) else 0.0
    return flows.assign(t_s=flows["t_s"] - start_s)


def backend_colour(index: int) -> str:
    return to_hex(f"C{index % 10}")


def overlay_chart(comparison: Comparison, column: str) -> Chart:
    """The interactive overlay: a colour per backend, a dash pattern per flow; of a backend's
    many flows, the first `LEGEND_MAX_LINES` (a line each is a legend entry and a column of
    the page's data)."""
    lines = []
    title = plain_text(comparison.scenario)
    for index, (backend, result) in enumerate(comparison.results.items()):
        flows = aligned_flows(result)
        shown = sorted(pd.unique(flows["flow"]))[:LEGEND_MAX_LINES]
        if len(shown) < flows["flow"].nunique():
            title += f"; {backend}: the first {len(shown)} of {flows['flow'].nunique()} flows"
        for flow, rows in flows[flows["flow"].isin(shown)].groupby("flow", sort=True):
            lines.append(
                Line(
                    f"{backend} flow {flow}",
                    backend_colour(index),
                    rows["t_s"].to_numpy(float),
                    rows[column].to_numpy(float, na_value=float("nan")),
                    DASHES[cast(int, flow) % len(DASHES)],
                )
            )
    return Chart(title, TIME_LABEL, SERIES[column], lines)


def overlay(comparison: Comparison, column: str) -> Figure:
    """The static overlay: a colour per backend, a line style per flow; the legend names the
    backends, and the flows' styles when there are few enough to name. A backend's many flows
    are one collection, solid."""
    figure = Figure(figsize=(9, 4.5))
    fixed_margins(figure)
    axes = figure.add_subplot()
    flow_ids: set[int] = set()
    for index, result in enumerate(comparison.results.values()):
        flows = aligned_flows(result)
        if flows["flow"].nunique() > LEGEND_MAX_LINES:
            colour = backend_colour(index)
            axes.add_collection(line_collection(flows, "flow", column, colour=colour))
            axes.autoscale_view()
            continue
        for flow, rows in flows.groupby("flow", sort=True):
            flow_ids.add(cast(int, flow))
            axes.plot(
                rows["t_s"],
                rows[column],
                linestyle=_style(cast(int, flow)),
                color=backend_colour(index),
                linewidth=1,
            )
    handles = [
        Line2D([], [], color=backend_colour(i), label=name)
        for i, name in enumerate(comparison.results)
    ]
    if 1 < len(flow_ids) <= LEGEND_MAX_LINES:
        handles += [
            Line2D([], [], color="grey", linestyle=_style(f), label=f"flow {f}")
            for f in sorted(flow_ids)
        ]
    axes.set(xlabel=TIME_LABEL, ylabel=SERIES[column], title=plain_text(comparison.scenario))
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(handles=handles, loc="best", fontsize="small")
    return figure


def _style(flow: int) -> LineStyle:
    return LINE_STYLES[flow % len(LINE_STYLES)]
