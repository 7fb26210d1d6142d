"""Terminal tables of a result's summary and of a report's verdicts."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from rich.table import Table

from tcpeval.compare import Comparison, flow_of
from tcpeval.layout import COMPARE_FILE
from tcpeval.metrics import declared
from tcpeval.report.verdicts import Verdict
from tcpeval.scenario.window import WHOLE_RUN
from tcpeval.summary import measure_span_s

THOUSAND = 1000
FLOW_ROWS_MAX = 40  # web traffic can start thousands of flows; the table shows the first ones


def flows_table(summary: dict[str, Any], title: str | None = None) -> Table:
    """One row per flow; '-' where the backend has no figure, and what limits each flow when
    the backend says (the model does). Goodput covers the measurement window (the caption)."""
    flows = summary["flows"]
    limits = any("limited_by" in flow for flow in flows)
    headers = ["flow", "cc", "rtt ms", "goodput Mb/s*", "retransmits", "timeouts", "done at s"]
    caption = f"* over the measurement window, {measure_window_text(summary, counters=False)}"
    table = Table(title=title, title_justify="left", caption=caption, caption_justify="left")
    for header in headers + ["limited by"] * limits:
        table.add_column(header, justify="left" if header in ("cc", "limited by") else "right")
    for flow in flows[:FLOW_ROWS_MAX]:
        row = [
            str(flow["id"]),
            flow["cc"] or "-",
            _number(flow["rtt_ms"], "g"),
            _number(flow["goodput_mbps"], ".2f"),
            _number(flow["retransmits"], "d"),
            _number(flow["timeouts"], "d"),
            _number(flow["completion_s"], ".3f"),
        ]
        table.add_row(*row, *[flow.get("limited_by") or "-"] * limits)
    if len(flows) > FLOW_ROWS_MAX:
        table.add_row("…", f"{len(flows) - FLOW_ROWS_MAX} more", *[""] * (len(headers) - 2))
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
            _number(link["utilization"], ".3f"),
            _number(link["drops"], ","),
            _number(link["mean_queue_pkts"], ".1f"),
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
    """The bottleneck and the backend's own figures, one per line; '-' where it has none."""
    bottleneck, backend = summary["bottleneck"] or {}, summary["backend"]
    table = Table(show_header=False, box=None, padding=(0, 2))
    table.add_column(justify="left")
    table.add_column(justify="right")
    table.add_row("measured over", measure_window_text(summary))
    table.add_row("bottleneck utilization", _number(bottleneck.get("utilization"), ".3f"))
    table.add_row("bottleneck drops", _number(bottleneck.get("drops"), ","))
    table.add_row("mean queue, packets", _number(bottleneck.get("mean_queue_pkts"), ".1f"))
    table.add_row("Jain index of goodputs", _number(summary["jain_index"], ".3f"))
    if summary.get("measure", {}).get("window", WHOLE_RUN) != WHOLE_RUN:
        whole_run = _number(summary["whole_run_jain_index"], ".3f")
        table.add_row("  over the whole run", whole_run)
    table.add_row("backend", backend["name"])
    if not backend.get("valid", True):
        table.add_row("[red]invalid run[/]", backend["invalid_reason"])
    details, wall_s = backend["details"], backend["wall_seconds"]
    if "events" in details:
        table.add_row("simulator events", f"{details['events']:,}")
    if "packets_delivered" in details and wall_s > 0:
        rate = details["packets_delivered"] / wall_s
        table.add_row("packets delivered per wall-second", f"{rate:,.0f}")
    table.add_row("wall time, s", f"{wall_s:.2f}")
    return table


def measure_window_text(summary: dict[str, Any], *, counters: bool = True) -> str:
    """The window the figures cover, as the summary records it: "second half (60–120 s);
    counters: whole run"."""
    start_s, end_s = measure_span_s(summary)
    window = (summary.get("measure") or {}).get("window", WHOLE_RUN)
    text = f"{window} ({start_s:g}–{end_s:g} s)"
    return text + "; counters: whole run" if counters else text


def number(value: float | None) -> str:
    """A value for a table: three significant digits, whole numbers from 1,000 up ("2,400
    packets", never "2.4e+03"), a dash for none."""
    if value is None:
        return "–"
    if abs(value) >= THOUSAND and math.isfinite(value):
        return f"{value:,.0f}"
    return f"{value:.3g}"


def _number(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


VERDICT_MARKS = {True: "[green]PASS[/]", False: "[red]FAIL[/]", None: "–"}


def verdicts_table(verdicts: Sequence[Verdict]) -> Table:
    """One row per verdict, as the report's table: pass or fail, the test, the stack, the rule
    in words, the worst point and the stack's and the baseline's values there."""
    failed = sum(1 for v in verdicts if v.passed is False)
    table = Table(title=f"verdicts: {failed} of {len(verdicts)} failed", title_justify="left")
    numbers = ("value", "baseline", "failing")
    for header in ("verdict", "test", "stack", "rule", "worst point", *numbers):
        table.add_column(header, justify="right" if header in numbers else "left")
    for v in verdicts:
        table.add_row(
            VERDICT_MARKS[v.passed],
            v.test or "-",
            v.stack,
            v.rule.text,
            v.where,
            _with_unit(v.value, v.rule.metric),
            _with_unit(v.baseline, v.rule.metric),
            f"{len(v.failing)} of {v.points}",
        )
    return table


def comparison_table(comparison: Comparison) -> Table:
    """A comparison of backends: a row per figure, a column per backend, then the ratios to
    the first backend, in red beyond the tolerance."""
    first = comparison.backends[0]
    table = Table(
        title=f"{comparison.scenario}: ratios to {first}, flagged beyond ±{comparison.tolerance:g}",
        title_justify="left",
    )
    table.add_column("figure")
    for name in comparison.backends:
        table.add_column(name, justify="right")
    for name in comparison.backends[1:]:
        table.add_column(f"{name}/{first}", justify="right")
    # Like flows_table, the first flows' rows; the others are in the file.
    hidden = [(flow_of(row.figure) or 0) >= FLOW_ROWS_MAX for row in comparison.rows]
    first_hidden = hidden.index(True) if any(hidden) else None
    for index, row in enumerate(comparison.rows):
        if index == first_hidden:
            table.add_row(f"… {sum(hidden)} more rows of flows, in {COMPARE_FILE}")
        if hidden[index]:
            continue
        values = [_number(row.values[name], ".4g") for name in comparison.backends]
        ratios = [
            f"[red]{_number(ratio, '.3f')}[/]" if name in row.flagged else _number(ratio, ".3f")
            for name, ratio in row.ratios.items()
        ]
        table.add_row(f"{row.figure} {row.unit}".strip(), *values, *ratios)
    return table


def _with_unit(value: float | None, metric: str) -> str:
    """A verdict's value with its metric's unit, as declared: "142 s"."""
    if value is None:
        return "–"
    declaration = declared(metric)
    unit = declaration.unit if declaration is not None else ""
    return f"{number(value)} {unit}".rstrip()
