"""Metrics computed from a result's time series, the same for every backend.

Inputs are the result's DataFrames (columns as in docs/contract.md); cumulative counters
(delivered_bytes, tx_bytes) are zero at t = 0, which is never sampled.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd


def jain_index(values: Sequence[float]) -> float:
    """Jain's fairness index (Σx)² / (n·Σx²): 1 for equal shares, 1/n when one takes all.

    Jain, Chiu, Hawe, "A quantitative measure of fairness and discrimination for resource
    allocation in shared computer systems", DEC TR-301, 1984. All-zero shares are equal: 1.
    """
    shares = np.asarray(values, dtype=float)
    if shares.size == 0:
        raise ValueError("jain_index needs at least one value")
    sum_of_squares = float(np.sum(shares**2))
    if sum_of_squares == 0:
        return 1.0
    return float(np.sum(shares) ** 2 / (shares.size * sum_of_squares))


def utilization(
    links: pd.DataFrame,
    rate_bps: float,
    *,
    link: str = "bottleneck",
    start_s: float = 0.0,
    end_s: float | None = None,
) -> float:
    """Share of a link's capacity used from start_s to end_s (default: the last sample).

    Bits sent in the window / (rate · window length): the "efficiency" of Leith, "Evaluating
    the performance of TCP stacks for high-speed networks". The cumulative tx_bytes is
    interpolated linearly between samples.
    """
    rows = links[links["link"] == link].sort_values("t_s")
    t_s = np.concatenate([[0.0], rows["t_s"].to_numpy(float)])
    tx_bytes = np.concatenate([[0.0], rows["tx_bytes"].to_numpy(float)])
    end_s = t_s[-1] if end_s is None else end_s
    sent_bits = 8 * (np.interp(end_s, t_s, tx_bytes) - np.interp(start_s, t_s, tx_bytes))
    return float(sent_bits / (rate_bps * (end_s - start_s)))


def goodput_mbps(flows: pd.DataFrame) -> pd.DataFrame:
    """Each flow's goodput over each sample interval: Δdelivered_bytes·8 / Δt, in Mb/s.

    Returns columns t_s (end of the interval), flow, goodput_mbps.
    """
    rows = flows.sort_values(["flow", "t_s"])
    by_flow = rows.groupby("flow")
    delivered = by_flow["delivered_bytes"].transform(_increments)
    elapsed = by_flow["t_s"].transform(_increments)
    return pd.DataFrame(
        {"t_s": rows["t_s"], "flow": rows["flow"], "goodput_mbps": 8 * delivered / elapsed / 1e6}
    ).reset_index(drop=True)


def recovery_time(
    flows: pd.DataFrame, flow: int, t_loss_s: float, target_cwnd_pkts: float
) -> float | None:
    """Seconds from a loss at t_loss_s until the flow's cwnd is back to target_cwnd_pkts.

    Defined as the first sample time ≥ t_loss_s at which cwnd ≥ target after having dropped
    below it, minus t_loss_s; None if cwnd never drops below the target or never regains it.
    A measure of "responsiveness" in Leith's evaluation method; for Reno the model is
    (W/2)·RTT (models.reno_recovery_time_s, algorithms.md §10.4).
    """
    rows = flows[(flows["flow"] == flow) & (flows["t_s"] >= t_loss_s)].sort_values("t_s")
    below = rows["cwnd_pkts"].to_numpy() < target_cwnd_pkts
    if not below.any():
        return None
    after_drop = below[below.argmax() :]
    if after_drop.all():
        return None
    recovered_at = below.argmax() + (~after_drop).argmax()
    return float(rows["t_s"].iloc[recovered_at] - t_loss_s)


def _increments(cumulative: pd.Series) -> np.ndarray:
    """Differences between consecutive samples, the first taken from zero at t = 0."""
    return np.diff(cumulative.to_numpy(float), prepend=0.0)
