"""How steady a flow is: the coefficient of variation of its goodput and of its RTT."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from tcpeval.metrics._series import flow_rows
from tcpeval.metrics.throughput import goodput_series_mbps


def coefficient_of_variation(series: Sequence[float] | np.ndarray) -> float:
    """σ/μ of a series, with the population standard deviation (ddof = 0).

    The oscillation/stability measure of RFC 5166 §2.5 (docs/methodology.md §3.6).
    """
    values = np.asarray(series, dtype=float)
    if values.size == 0:
        raise ValueError("coefficient_of_variation needs at least one value")
    mean = float(np.mean(values))
    if mean == 0:
        raise ValueError("coefficient_of_variation is undefined for a zero mean")
    return float(np.std(values)) / mean


def throughput_cov(
    flows: pd.DataFrame,
    flow: int,
    interval_s: float,
    *,
    start_s: float = 0.0,
    end_s: float | None = None,
) -> float:
    """Stability of a flow's goodput: the coefficient of variation of goodput_series_mbps.

    σ/μ of the per-interval goodput (e.g. 1 s bins) over [start_s, end_s]; Li thesis
    "stability" and RFC 5166 oscillations (docs/methodology.md §3.6).
    """
    series = goodput_series_mbps(flows, flow, interval_s, start_s=start_s, end_s=end_s)
    return coefficient_of_variation(series)


def rtt_cov(
    flows: pd.DataFrame, flow: int, *, start_s: float = 0.0, end_s: float = math.inf
) -> float:
    """Stability of a flow's RTT: the coefficient of variation of its sampled srtt_ms.

    Over the samples in [start_s, end_s] that carry an RTT estimate (srtt_ms > 0; it is 0
    before the first measurement). RFC 5166 §2.2/§2.5, docs/methodology.md §3.6.
    """
    rows = flow_rows(flows, flow)
    in_window = rows["t_s"].between(start_s, end_s) & (rows["srtt_ms"] > 0)
    return coefficient_of_variation(rows.loc[in_window, "srtt_ms"].to_numpy(float))
