"""How well a link is used: its utilisation and the queue it keeps."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from tcpeval.metrics._series import cumulative_at


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
    end_s = float(rows["t_s"].iloc[-1]) if end_s is None else end_s
    sent = cumulative_at(rows, "tx_bytes", np.array([start_s, end_s]))
    return float(8 * (sent[1] - sent[0]) / (rate_bps * (end_s - start_s)))


def mean_queue_pkts(
    links: pd.DataFrame,
    *,
    link: str = "bottleneck",
    start_s: float = 0.0,
    end_s: float = math.inf,
) -> float:
    """Mean of a link's sampled queue length in packets over the samples in [start_s, end_s].

    The queue measure of RFC 5166 §2.2 (queueing delay) and §2.5 (oscillations in queue size).
    """
    rows = links[(links["link"] == link) & links["t_s"].between(start_s, end_s)]
    if rows.empty:
        raise ValueError(f"no samples of link {link!r} between {start_s} s and {end_s} s")
    return float(rows["queue_pkts"].mean())
