"""Reading samples: the rows of one flow, or every flow's in one pass, and cumulative counters
between samples.

Cumulative counters (delivered_bytes, tx_bytes) are zero at t = 0, which is never sampled.
"""

from __future__ import annotations

from itertools import pairwise

import numpy as np
import pandas as pd


def flow_rows(flows: pd.DataFrame, flow: int) -> pd.DataFrame:
    rows = flows[flows["flow"] == flow].sort_values("t_s")
    if rows.empty:
        raise ValueError(f"no samples of flow {flow}")
    return rows


def samples_by_flow(flows: pd.DataFrame, column: str) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Each flow's sample times and `column` (NaN where missing), in time order, from one sort
    of the whole frame: selecting each flow's rows in turn reads the whole frame once per flow,
    which for 10,000 flows takes longer than simulating them."""
    ids = flows["flow"].to_numpy()
    t_s = flows["t_s"].to_numpy(float)
    order = np.lexsort((t_s, ids))
    ids, t_s = ids[order], t_s[order]
    values = flows[column].to_numpy(float, na_value=np.nan)[order]
    edges = [0, *(np.flatnonzero(ids[1:] != ids[:-1]) + 1), len(ids)]
    return {
        int(ids[start]): (t_s[start:end], values[start:end])
        for start, end in pairwise(edges)
        if end > start
    }


def cumulative_at(rows: pd.DataFrame, column: str, times: np.ndarray) -> np.ndarray:
    """A cumulative counter interpolated linearly at the given times, from zero at t = 0."""
    return interpolated_from_zero(rows["t_s"].to_numpy(float), rows[column].to_numpy(float), times)


def interpolated_from_zero(t_s: np.ndarray, values: np.ndarray, times: np.ndarray) -> np.ndarray:
    """A cumulative counter sampled at t_s, interpolated linearly at the given times, from zero
    at t = 0."""
    return np.interp(times, np.concatenate([[0.0], t_s]), np.concatenate([[0.0], values]))


def increments(cumulative: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Differences between consecutive samples of each key (rows sorted by key, then time),
    the first of each taken from zero at t = 0."""
    steps = np.diff(cumulative, prepend=0.0)
    firsts = np.ones(len(keys), dtype=bool)
    firsts[1:] = keys[1:] != keys[:-1]
    steps[firsts] = cumulative[firsts]
    return steps
