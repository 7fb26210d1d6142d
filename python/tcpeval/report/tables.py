"""Terminal tables of a result's summary and of a report's verdicts."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table

from tcpeval.metrics import declared
from tcpeval.report.verdicts import Verdict

FLOW_ROWS_MAX = 40  # web traffic can start thousands of flows; the table shows the first ones


def flows_table(summary: dict[str, Any], title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left")
    for header in ("flow", "cc", "rtt ms", "goodput Mb/s", "retransmits", "timeouts", "done at s"):
        table.add_column(header, justify="left" if header == "cc" else "right")
    flows = summary["flows"]
    for flow in flows[:FLOW_ROWS_MAX]:
        completion = flow["completion_s"]
        table.add_row(
            str(flow["id"]),
            flow["cc"],
            f"{flow['rtt_ms']:g}",
            f"{flow['goodput_mbps']:.2f}",
            str(flow["retransmits"]),
            str(flow["timeouts"]),
            "-" if completion is None else f"{completion:.3f}",
        )
    if len(flows) > FLOW_ROWS_MAX:
        table.add_row("…", f"{len(flows) - FLOW_ROWS_MAX} more", "", "", "", "", "")
    return table


def links_table(summary: dict[str, Any]) -> Table:
    """Every link direction the core reports (a reverse one is named like `wan:reverse`):
    utilization, drops and mean queue."""
    table = Table(title="links", title_justify="left")
    for header in ("link", "utilization", "drops", "mean queue pkts"):
        table.add_column(header, justify="left" if header == "link" else "right")
    for link in summary["links"]:
        table.add_row(
            link["name"],
            f"{link['utilization']:.3f}",
            f"{link['drops']:,}",
            f"{link['mean_queue_pkts']:.1f}",
        )
    return table


def transfers_table(summary: dict[str, Any]) -> Table:
    """Striped transfers: bytes, streams and completion time."""
    table = Table(title="transfers", title_justify="left")
    for header in ("transfer", "group", "streams", "bytes", "done at s"):
        table.add_column(header, justify="right")
    for transfer in summary["transfers"]:
        completion = transfer["completion_s"]
        table.add_row(
            str(transfer["id"]),
            str(transfer["group"]),
            str(len(transfer["flows"])),
            f"{transfer['bytes']:,}",
            "-" if completion is None else f"{completion:.3f}",
        )
    return table


def exchanges_table(summary: dict[str, Any]) -> Table:
    """Request-response exchanges: how many finished and their latency in base RTTs."""
    table = Table(title="request-response exchanges", title_justify="left")
    for header in ("exchange", "done", "mean latency ms", "mean latency RTTs", "max RTTs"):
        table.add_column(header, justify="right")
    for index, exchange in enumerate(summary["exchanges"]):
        latencies, rtts = exchange["latencies_s"], exchange["latency_rtts"]
        done = len(latencies)
        table.add_row(
            str(index),
            str(done),
            f"{1e3 * sum(latencies) / done:.2f}" if done else "-",
            f"{sum(rtts) / done:.2f}" if done else "-",
            f"{max(rtts):.2f}" if done else "-",
        )
    return table


def summary_tables(summary: dict[str, Any], title: str | None = None) -> list[Table]:
    """The flows, then links, transfers and exchanges when there are some, then the run."""
    tables = [flows_table(summary, title)]
    if len(summary["links"]) > 1:
        tables.append(links_table(summary))
    if summary["transfers"]:
        tables.append(transfers_table(summary))
    if summary["exchanges"]:
        tables.append(exchanges_table(summary))
    return [*tables, run_table(summary)]


def run_table(summary: dict[str, Any]) -> Table:
    """The bottleneck and the simulator's own figures, one per line."""
    bottleneck, sim = summary["bottleneck"], summary["sim"]
    wall_s = sim["wall_seconds"]
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(justify="left")
    table.add_column(justify="right")
    table.add_row("bottleneck utilization", f"{bottleneck['utilization']:.3f}")
    table.add_row("bottleneck drops", f"{bottleneck['drops']:,}")
    table.add_row("mean queue, packets", f"{bottleneck['mean_queue_pkts']:.1f}")
    table.add_row("Jain index of goodputs", f"{summary['jain_index']:.3f}")
    table.add_row("simulator events", f"{sim['events']:,}")
    delivered_rate = f"{sim['packets_delivered'] / wall_s:,.0f}" if wall_s > 0 else "-"
    table.add_row("packets delivered per wall-second", delivered_rate)
    return table


VERDICT_MARKS = {True: "[green]PASS[/]", False: "[red]FAIL[/]", None: "–"}


def verdicts_table(verdicts: Sequence[Verdict]) -> Table:
    """One row per verdict, as the report's table: pass or fail, the rule, the worst point."""
    failed = sum(1 for v in verdicts if v.passed is False)
    table = Table(title=f"verdicts: {failed} of {len(verdicts)} failed", title_justify="left")
    for header in ("verdict", "stack", "rule", "worst point", "value", "failing"):
        table.add_column(header, justify="right" if header in ("value", "failing") else "left")
    for v in verdicts:
        table.add_row(
            VERDICT_MARKS[v.passed],
            v.stack,
            v.rule.text,
            v.where,
            _with_unit(v.value, v.rule.metric),
            f"{len(v.failing)} of {v.points}",
        )
    return table


def _with_unit(value: float | None, metric: str) -> str:
    """A verdict's value with its metric's unit, as declared: "142 s"."""
    if value is None:
        return "–"
    declaration = declared(metric)
    unit = declaration.unit if declaration is not None else ""
    return f"{value:.3g} {unit}".rstrip()
