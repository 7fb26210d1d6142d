"""`compare.html`: a comparison of backends as one self-contained page, its table and the
overlay plots (goodput and cwnd against time, one line per backend and flow)."""

from __future__ import annotations

from datetime import UTC, datetime

from matplotlib.figure import Figure

from tcpeval.compare import Comparison
from tcpeval.report.html import png_data_uri, templates
from tcpeval.report.plots import LEGEND_MAX_LINES, fixed_margins, line_collection, plain_text

TEMPLATE = "compare.html.j2"
LINE_STYLES = ("-", "--", ":", "-.")


def render_comparison(comparison: Comparison) -> str:
    figures = {
        "goodput per sample interval (Mb/s)": png_data_uri(overlay(comparison, "goodput_mbps")),
        "cwnd (packets)": png_data_uri(overlay(comparison, "cwnd_pkts")),
    }
    template = templates().get_template(TEMPLATE)
    return template.render(
        comparison=comparison,
        figures=figures,
        generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    )


def overlay(comparison: Comparison, column: str) -> Figure:
    """One line per backend and flow: a colour per flow, a line style per backend. Beyond what
    a legend can name, a backend's flows are one collection and the legend names its style."""
    figure = Figure(figsize=(9, 4.5))
    fixed_margins(figure)
    axes = figure.add_subplot()
    for style, (backend, result) in zip(LINE_STYLES * 4, comparison.results.items(), strict=False):
        series = result.flows.sort_values(["flow", "t_s"], kind="stable")
        groups = series.groupby("flow", sort=True)
        if groups.ngroups > LEGEND_MAX_LINES:
            axes.add_collection(line_collection(series, "flow", column, linestyle=style))
            axes.plot([], [], linestyle=style, color="grey", linewidth=1, label=f"{backend} flows")
            axes.autoscale_view()
            continue
        for colour, (flow, rows) in enumerate(groups):
            axes.plot(
                rows["t_s"],
                rows[column],
                linestyle=style,
                color=f"C{colour % 10}",
                linewidth=1,
                label=f"{backend} flow {flow}",
            )
    axes.set(xlabel="time (s)", ylabel=column, title=plain_text(comparison.scenario))
    axes.set_xlim(left=0)
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(loc="best", fontsize="small", ncols=len(comparison.results))
    return figure
