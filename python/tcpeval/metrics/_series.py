"""Reading samples: the rows of one flow, and cumulative counters between samples.

Cumulative counters (delivered_bytes, tx_bytes) are zero at t = 0, which is never sampled.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def flow_rows(flows: pd.DataFrame, flow: int) -> pd.DataFrame:
    rows = flows[flows["flow"] == flow].sort_values("t_s")
    if rows.empty:
        raise ValueError(f"no samples of flow {flow}")
    return rows


def cumulative_at(rows: pd.DataFrame, column: str, times: np.ndarray) -> np.ndarray:
    """A cumulative counter interpolated linearly at the given times, from zero at t = 0."""
    t_s = np.concatenate([[0.0], rows["t_s"].to_numpy(float)])
    values = np.concatenate([[0.0], rows[column].to_numpy(float)])
    return np.interp(times, t_s, values)


def increments(cumulative: pd.Series) -> np.ndarray:
    """Differences between consecutive samples, the first taken from zero at t = 0."""
    return np.diff(cumulative.to_numpy(float), prepend=0.0)
