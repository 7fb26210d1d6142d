"""What a new stack costs the flows beside it, in rate, delay and loss, and whether it starves
them (docs/methodology.md §3.13).

Harm after Ware, Mukerjee, Seshan & Sherry ("Beyond Jain's fairness index", HotNets 2019): the
victim's performance beside the new stack against its performance beside its own kind, as a
share of the latter — (x − y)/x where more is better (goodput), (y − x)/y where less is
better (delay, loss). 0 is no harm, 1 the most there is; below 0 the victim does better.
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import pandas as pd

from tcpeval.metrics._series import cumulative_at, flow_rows
from tcpeval.metrics.throughput import goodput_series_mbps

# Starvation: a flow under this share of an equal split of the link, in bins this long.
STARVED_SHARE = 0.1
STARVATION_BIN_S = 1.0


def harm(beside_own_kind: float, beside_new: float, better: Literal["higher", "lower"]) -> float:
    """Ware et al.'s harm of one metric, from the victim's value beside its own kind (the
    demand it would have met) and beside the new stack."""
    if better == "higher":
        if beside_own_kind <= 0:
            raise ValueError("beside its own kind the victim must get a positive value")
        return (beside_own_kind - beside_new) / beside_own_kind
    if beside_new <= 0:
        return 0.0 if beside_own_kind <= 0 else -math.inf
    return (beside_new - beside_own_kind) / beside_new


def mean_rtt_ms(flows: pd.DataFrame, flow: int, start_s: float, end_s: float) -> float:
    """A flow's mean smoothed RTT over the samples in [start_s, end_s] that carry one: the
    delay it met, queueing included."""
    rows = flow_rows(flows, flow)
    in_window = rows["t_s"].between(start_s, end_s) & (rows["srtt_ms"] > 0)
    values = rows.loc[in_window, "srtt_ms"]
    return float(values.mean()) if len(values) else math.nan


def retransmitted_per_delivered(
    flows: pd.DataFrame, flow: int, mss_bytes: float, start_s: float, end_s: float
) -> float:
    """A flow's retransmitted packets per delivered packet over [start_s, end_s]: the loss it
    met, as its sender saw it; NaN when it delivered nothing."""
    rows = flow_rows(flows, flow)
    edges = np.array([start_s, end_s])
    retransmitted = float(np.diff(cumulative_at(rows, "retransmits", edges))[0])
    delivered_pkts = float(np.diff(cumulative_at(rows, "delivered_bytes", edges))[0]) / mss_bytes
    return retransmitted / delivered_pkts if delivered_pkts > 0 else math.nan


def starved_s(
    flows: pd.DataFrame, flow: int, equal_share_mbps: float, start_s: float, end_s: float
) -> float:
    """The longest run of whole bins of STARVATION_BIN_S in which the flow got less than
    STARVED_SHARE of an equal split of the link: how long it was starved."""
    series = goodput_series_mbps(flows, flow, STARVATION_BIN_S, start_s=start_s, end_s=end_s)
    longest = current = 0
    for starved in series < STARVED_SHARE * equal_share_mbps:
        current = current + 1 if starved else 0
        longest = max(longest, current)
    return longest * STARVATION_BIN_S
