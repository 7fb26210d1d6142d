"""Terminal tables of a result's summary."""

from __future__ import annotations

from typing import Any

from rich.table import Table


def flows_table(summary: dict[str, Any], title: str | None = None) -> Table:
    table = Table(title=title, title_justify="left")
    for header in ("flow", "cc", "rtt ms", "goodput Mb/s", "retransmits", "timeouts", "done at s"):
        table.add_column(header, justify="left" if header == "cc" else "right")
    for flow in summary["flows"]:
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
    return table


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
