"""What a flow delivers and sends: goodput over time, over a window and in fixed bins, and
throughput."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from tcpeval.metrics._series import cumulative_at, flow_rows, increments


def goodput_mbps(flows: pd.DataFrame) -> pd.DataFrame:
    """Each flow's goodput over each sample interval: Δdelivered_bytes·8 / Δt, in Mb/s.

    Returns columns t_s (end of the interval), flow, goodput_mbps.
    """
    rows = flows.sort_values(["flow", "t_s"])
    by_flow = rows.groupby("flow")
    delivered = by_flow["delivered_bytes"].transform(increments)
    elapsed = by_flow["t_s"].transform(increments)
    return pd.DataFrame(
        {"t_s": rows["t_s"], "flow": rows["flow"], "goodput_mbps": 8 * delivered / elapsed / 1e6}
    ).reset_index(drop=True)


def mean_goodput_mbps(
    flows: pd.DataFrame, flow: int, *, start_s: float = 0.0, end_s: float | None = None
) -> float:
    """A flow's goodput averaged over [start_s, end_s] (default end: its last sample), in Mb/s.

    Bytes delivered in order to the receiver in the window · 8 / window length: "goodput"
    in RFC 5166 §2.1 and the Hamilton per-flow measure (methodology.md §1.5, §7).
    delivered_bytes is interpolated linearly between samples.
    """
    rows = flow_rows(flows, flow)
    end_s = float(rows["t_s"].iloc[-1]) if end_s is None else end_s
    if end_s <= start_s:
        raise ValueError(f"empty window: start_s={start_s}, end_s={end_s}")
    delivered = cumulative_at(rows, "delivered_bytes", np.array([start_s, end_s]))
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
    bins of the stability metric (methodology.md §1.5, §7); interval_s should be a multiple
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
    RFC 5166 §2.1 (methodology.md §7), counting payload bytes of full-sized segments.
    """
    duration_s = flow_summary["end_s"] - flow_summary["start_s"]
    if duration_s <= 0:
        raise ValueError(f"flow {flow_summary['id']} has no duration")
    return flow_summary["packets_sent"] * mss_bytes * 8 / duration_s / 1e6
