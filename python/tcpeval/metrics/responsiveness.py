"""How fast a flow reacts: recovery after a loss, convergence of a new flow to its share."""

from __future__ import annotations

import numpy as np
import pandas as pd

from tcpeval.metrics._series import cumulative_at, flow_rows


def recovery_time(
    flows: pd.DataFrame, flow: int, t_loss_s: float, target_cwnd_pkts: float
) -> float | None:
    """Seconds from a loss at t_loss_s until the flow's cwnd is back to target_cwnd_pkts.

    Defined as the first sample time ≥ t_loss_s at which cwnd ≥ target after having dropped
    below it, minus t_loss_s; None if cwnd never drops below the target or never regains it.
    A measure of "responsiveness" in Leith's evaluation method; for Reno the model is
    (W/2)·RTT (models.reno_recovery_time_s, docs/methodology.md §4).
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


def convergence_time_s(
    flows: pd.DataFrame,
    new_flow: int,
    fair_share_mbps: float,
    start_s: float,
    *,
    hold_s: float,
    threshold: float = 0.8,
    smoothing_s: float = 1.0,
) -> float | None:
    """Seconds from a new flow's start until it holds threshold (80 %) of its fair share.

    The goodput is smoothed over a trailing window: at a sample time t it is the mean over
    (t − smoothing_s, t]. The convergence time is t − start_s for the first sample time
    t ≥ start_s + smoothing_s at which the smoothed goodput is ≥ threshold · fair share and
    stays so at every sample up to t + hold_s (which must be within the data); None if never.
    Li's thesis measures the time to an 80 % throughput ratio (docs/methodology.md §3.7); the
    smoothing window (suggested: the larger of 1 s and 10 RTTs) and holding the level for at
    least one congestion epoch, so that transient crossings are not counted, are the
    methodology's proposals [P].
    """
    rows = flow_rows(flows, new_flow)
    t_s = rows["t_s"].to_numpy(float)
    t_s = t_s[t_s >= start_s + smoothing_s - 1e-9]
    ends = cumulative_at(rows, "delivered_bytes", t_s)
    starts = cumulative_at(rows, "delivered_bytes", t_s - smoothing_s)
    reached = 8 * (ends - starts) / smoothing_s / 1e6 >= threshold * fair_share_mbps
    # Time of the first sample at or after each one that is below the level.
    next_miss_s = np.minimum.accumulate(np.where(reached, np.inf, t_s)[::-1])[::-1]
    held = reached & (next_miss_s > t_s + hold_s) & (t_s + hold_s <= t_s.max(initial=-np.inf))
    if not held.any():
        return None
    return float(t_s[held.argmax()] - start_s)
