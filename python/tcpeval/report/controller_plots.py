"""A plot of what a model-based controller believes, for the flows whose stack reports it
(`cc_*` columns of the simulator's flows, docs/bbr3.md): its state, bandwidth estimate, min_rtt
and in-flight bounds against time."""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from tcpeval.report.plots import draw_lines, fixed_margins

# (column, axis label, scale to the unit shown); drawn when the column is present.
PANELS = (
    ("cc_state", "state", 1.0),
    ("cc_bw_bps", "bw estimate (Mb/s)", 1e-6),
    ("cc_min_rtt_ms", "min_rtt (ms)", 1.0),
    ("cc_inflight_hi_pkts", "inflight_hi (packets)", 1.0),
)
# bbr3's states by number; BBR v1 reports PROBE_BW as 2 (its phase shows in the pacing gain).
STATE_NAMES = ("STARTUP", "DRAIN", "DOWN | v1 PROBE_BW", "CRUISE", "REFILL", "UP", "PROBE_RTT")


def controller_state_figures(
    flows: pd.DataFrame, *, labels: dict[object, str], name: str, until_s: float | None
) -> dict[str, Figure]:
    """`{"cc_state": figure}` (the file's stem) if any flow's controller reports its state,
    else empty."""
    if "cc_state" not in flows or flows["cc_state"].isna().all():
        return {}
    rows = flows[flows["cc_state"].notna()]
    panels = [panel for panel in PANELS if panel[0] in rows and rows[panel[0]].notna().any()]
    figure = Figure(figsize=(9, 2.2 * len(panels)))
    fixed_margins(figure, left=1.4)  # room for the state names
    axes = figure.subplots(len(panels), 1, sharex=True, squeeze=False)[:, 0]
    for ax, (column, ylabel, scale) in zip(axes, panels, strict=True):
        scaled = rows.assign(**{column: rows[column] * scale})
        draw_lines(ax, scaled, key="flow", column=column, labels=labels, until_s=until_s)
        ax.set_ylabel(ylabel)
    axes[0].set_yticks(range(len(STATE_NAMES)), STATE_NAMES, fontsize="small")
    axes[0].set_title(f"{name}: controller state")
    axes[-1].set_xlabel("time (s)")
    return {"cc_state": figure}
