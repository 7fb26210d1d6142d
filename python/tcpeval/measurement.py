"""A result's summary over the scenario's measurement window, the same for every backend.

A backend reports its figures over the whole run; here they are taken again, from the time
series every backend returns, over `scenario.measure` (scenario/window.py): each flow's goodput
(over the part of the window the flow was active), Jain's index of those goodputs, and each
link's utilisation and mean queue. The whole run's figures stay beside them, as
`whole_run_goodput_mbps`, `whole_run_jain_index`, `whole_run_utilization` and
`whole_run_mean_queue_pkts`. Counters (retransmits, timeouts, drops, packets sent) stay whole-run:
packets sent are not sampled, so a windowed rate would divide two different spans
(docs/methodology.md §3.1). The summary also records the window (the tool's version and the
scenario's hash are stamped beside it: provenance.py, backends/run.py).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from tcpeval import metrics
from tcpeval.scenario import Scenario

REVERSE_SUFFIX = ":reverse"


def measured(
    summary: dict[str, Any], flows: pd.DataFrame, links: pd.DataFrame, scenario: Scenario
) -> dict[str, Any]:
    """A result's summary over the scenario's window, from the result's time series."""
    start_s, end_s = scenario.measure_span_s()
    summary = dict(summary)
    summary["measure"] = {"window": scenario.measure.given, "start_s": start_s, "end_s": end_s}
    summary["whole_run_jain_index"] = summary["jain_index"]
    windowed = not scenario.measure.is_whole_run
    delivered = metrics.samples_by_flow(flows, "delivered_bytes") if windowed else {}
    summary["flows"] = [
        _flow(flow, delivered.get(flow["id"]), start_s, end_s, windowed)
        for flow in summary["flows"]
    ]
    summary["links"] = [
        _link(link, links, scenario, start_s, end_s, windowed) for link in summary["links"]
    ]
    if summary["bottleneck"] is not None:
        link = summary["bottleneck"]
        summary["bottleneck"] = _link(link, links, scenario, start_s, end_s, windowed)
    if windowed:
        goodputs = [f["goodput_mbps"] for f in summary["flows"] if f["goodput_mbps"] is not None]
        summary["jain_index"] = metrics.jain_index(goodputs) if goodputs else None
    return summary


def _flow(
    flow: dict[str, Any],
    delivered: tuple[np.ndarray, np.ndarray] | None,
    start_s: float,
    end_s: float,
    windowed: bool,
) -> dict[str, Any]:
    """A flow's goodput over the window ∩ its life, from its samples of delivered_bytes (times
    and values): None where it was not active in the window or the backend has no goodput for
    it."""
    entry = flow | {"whole_run_goodput_mbps": flow["goodput_mbps"]}
    if not windowed or flow["goodput_mbps"] is None:
        return entry
    low = max(start_s, flow.get("start_s") or start_s)
    high = min(end_s, flow.get("end_s") or end_s)
    if high <= low or delivered is None or np.isnan(delivered[1]).any():
        return entry | {"goodput_mbps": None}
    return entry | {"goodput_mbps": metrics.goodput_between_mbps(*delivered, low, high)}


def _link(
    link: dict[str, Any],
    series: pd.DataFrame,
    scenario: Scenario,
    start_s: float,
    end_s: float,
    windowed: bool,
) -> dict[str, Any]:
    """A link direction's utilisation and mean queue over the window, where it has samples and
    the scenario declares it."""
    entry = link | {
        "whole_run_utilization": link["utilization"],
        "whole_run_mean_queue_pkts": link.get("mean_queue_pkts"),
    }
    name = link["name"]
    declared = name.removesuffix(REVERSE_SUFFIX)
    rows = series[series["link"] == name]
    if not windowed or rows.empty or declared not in {n for _, n, _ in scenario.links()}:
        return entry  # a backend's own link, not the scenario's: its whole-run figures
    rate_bps = scenario.link_named(declared).rate.bps
    window = {"link": name, "start_s": start_s, "end_s": end_s}
    if link["utilization"] is not None and rows["tx_bytes"].notna().all():
        entry["utilization"] = metrics.utilization(series, rate_bps, **window)
    if link.get("mean_queue_pkts") is not None:
        queue = metrics.mean_queue_pkts(series, **window)
        entry["mean_queue_pkts"] = None if math.isnan(queue) else queue
    return entry
