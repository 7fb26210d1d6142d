"""A lab run's steady state: its samples from a while after the flows start until a little
before the first one stops, for the tests that judge where a stack settles."""

from __future__ import annotations

import pandas as pd

from tcpeval.result import Result

# The queue drains in the last moments of a run, as the flows stop one by one.
TAIL_S = 0.5


def window(result: Result, settle_s: float) -> tuple[float, float]:
    """From `settle_s` after the first flow starts to `TAIL_S` before the first one stops."""
    flows = result.flows
    start = float(flows["t_s"].min()) + settle_s
    stop = float(flows.groupby("flow")["t_s"].max().min()) - TAIL_S
    assert stop - start > 1, f"no steady state to judge: {start:.1f}-{stop:.1f} s"
    return start, stop


def bottleneck(result: Result, settle_s: float) -> pd.DataFrame:
    """The bottleneck's samples (`queue_pkts`, `tx_bytes`, ...) in the steady state."""
    start, stop = window(result, settle_s)
    links = result.links
    links = links[links["link"] == "bottleneck"]
    return links[(links["t_s"] >= start) & (links["t_s"] <= stop)]


def median_queue(result: Result, settle_s: float) -> float:
    """The bottleneck's median queue in the steady state, packets."""
    return float(bottleneck(result, settle_s)["queue_pkts"].median())


def utilization(result: Result, settle_s: float, rate_bps: float) -> float:
    """The bottleneck's busy share in the steady state, from the bytes it sent."""
    link = bottleneck(result, settle_s)
    sent_bits = 8 * float(link["tx_bytes"].iloc[-1] - link["tx_bytes"].iloc[0])
    return sent_bits / (float(link["t_s"].iloc[-1] - link["t_s"].iloc[0]) * rate_bps)


def delivered_bytes(result: Result, settle_s: float) -> list[float]:
    """Each flow's bytes delivered in the steady state, in flow order."""
    start, stop = window(result, settle_s)
    flows = result.flows
    steady = flows[(flows["t_s"] >= start) & (flows["t_s"] <= stop)]
    return [
        float(group["delivered_bytes"].iloc[-1] - group["delivered_bytes"].iloc[0])
        for _, group in steady.groupby("flow")
    ]
