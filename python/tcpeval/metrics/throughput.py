"""What a flow delivers and sends: goodput over time, over a window and in fixed bins, and
throughput."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tcpeval.metrics._series import (
    cumulative_at,
    flow_rows,
    increments,
    interpolated_from_zero,
)


def goodput_mbps(
    flows: pd.DataFrame, path_rates_bps: Mapping[int, float] | None = None
) -> pd.DataFrame:
    """Each flow's goodput over each sample interval: Δdelivered_bytes·8 / Δt, in Mb/s.

    With the rate of each flow's path (its slowest link), a sample never exceeds it: the
    receiver delivers in order, so a retransmission that fills a hole releases at once data
    that arrived over the round trips before (2 Gb/s in 100 ms on a 1 Gb/s link). Such a burst
    is counted when it must have arrived at the latest, through a link of that rate: the
    smallest cumulative curve at or above delivered_bytes whose slope is at most the rate
    (docs/methodology.md §3.1). Totals over the run are unchanged. Returns columns t_s (end of
    the interval), flow, goodput_mbps, rows sorted by flow and time and indexed as in `flows`.
    """
    rows = flows.sort_values(["flow", "t_s"], kind="stable")
    if path_rates_bps:
        rows = rows.assign(delivered_bytes=_at_most_the_path_rate(rows, path_rates_bps))
    keys = rows["flow"].to_numpy()
    delivered = increments(rows["delivered_bytes"].to_numpy(float), keys)
    elapsed = increments(rows["t_s"].to_numpy(float), keys)
    return pd.DataFrame(
        {"t_s": rows["t_s"], "flow": rows["flow"], "goodput_mbps": 8 * delivered / elapsed / 1e6}
    )


def _at_most_the_path_rate(rows: pd.DataFrame, path_rates_bps: Mapping[int, float]) -> np.ndarray:
    """delivered_bytes of each flow (rows sorted by flow, time) as the least curve ≥ it whose
    slope is ≤ the flow's path rate: D̃(t) = max over s ≥ t of D(s) − rate·(s − t). Computed for
    all flows at once: thousands of flows one by one took seconds."""
    flows, row_flow = np.unique(rows["flow"].to_numpy(), return_inverse=True)
    rates = np.array([path_rates_bps.get(int(flow), np.nan) for flow in flows], dtype=float)
    per_s = rates[row_flow] / 8  # bytes per second; NaN where the path's rate is unknown
    t_s = rows["t_s"].to_numpy(float)
    delivered = rows["delivered_bytes"].to_numpy(float)
    ahead = pd.Series((delivered - per_s * t_s)[::-1])
    # The running maximum from each flow's last sample back; a missing sample (NaN) spreads to
    # the ones before it, as np.maximum.accumulate does.
    latest_max = ahead.groupby(row_flow[::-1], sort=False).cummax(skipna=False).to_numpy()[::-1]
    return np.where(np.isnan(per_s), delivered, latest_max + per_s * t_s)


def mean_goodput_mbps(
    flows: pd.DataFrame, flow: int, *, start_s: float = 0.0, end_s: float | None = None
) -> float:
    """A flow's goodput averaged over [start_s, end_s] (default end: its last sample), in Mb/s.

    Bytes delivered in order to the receiver in the window · 8 / window length: "goodput"
    in RFC 5166 §2.1 and the Hamilton per-flow measure (docs/methodology.md §3.2).
    delivered_bytes is interpolated linearly between samples.
    """
    rows = flow_rows(flows, flow)
    t_s = rows["t_s"].to_numpy(float)
    end_s = float(t_s[-1]) if end_s is None else end_s
    return goodput_between_mbps(t_s, rows["delivered_bytes"].to_numpy(float), start_s, end_s)


def goodput_between_mbps(
    t_s: np.ndarray, delivered_bytes: np.ndarray, start_s: float, end_s: float
) -> float:
    """mean_goodput_mbps from one flow's samples in time order (`_series.by_flow`)."""
    if end_s <= start_s:
        raise ValueError(f"empty window: start_s={start_s}, end_s={end_s}")
    delivered = interpolated_from_zero(t_s, delivered_bytes, np.array([start_s, end_s]))
    return float(8 * (delivered[1] - delivered[0]) / (end_s - start_s) / 1e6)


def goodput_series_mbps(
    flows: pd.DataFrame,
    flow: int,
    interval_s: float,
    *,
    start_s: float = 0.0,
    end_s: float | None = None,
) -> np.ndarray:
    """A flow's goodput in consecutive whole intervals of interval_s from start_s, in Mb/s.

    Bin i covers [start_s + i·interval_s, start_s + (i+1)·interval_s], ending at or before
    end_s (default: the flow's last sample); a trailing partial bin is left out. The fixed
    bins of the stability metric (docs/methodology.md §3.6); interval_s should be a multiple
    of the sampling interval, as delivered_bytes is interpolated linearly between samples.
    """
    rows = flow_rows(flows, flow)
    end_s = float(rows["t_s"].iloc[-1]) if end_s is None else end_s
    bins = math.floor((end_s - start_s) / interval_s + 1e-9)
    if bins < 1:
        raise ValueError(f"no whole {interval_s} s interval between {start_s} s and {end_s} s")
    edges = start_s + interval_s * np.arange(bins + 1)
    delivered = cumulative_at(rows, "delivered_bytes", edges)
    return 8 * np.diff(delivered) / interval_s / 1e6


def throughput_mbps(flow_summary: Mapping[str, Any], mss_bytes: float) -> float:
    """A flow's sending rate over its lifetime, retransmissions included, in Mb/s.

    packets_sent · mss_bytes · 8 / (end_s − start_s): "throughput" as opposed to goodput in
    RFC 5166 §2.1 (docs/methodology.md §3.2), counting payload bytes of full-sized segments.
    """
    duration_s = flow_summary["end_s"] - flow_summary["start_s"]
    if duration_s <= 0:
        raise ValueError(f"flow {flow_summary['id']} has no duration")
    return flow_summary["packets_sent"] * mss_bytes * 8 / duration_s / 1e6
