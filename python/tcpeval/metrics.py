"""Metrics computed from a result's time series and summary, the same for every backend.

Inputs are the result's DataFrames (columns as in docs/contract.md) or entries of its summary;
cumulative counters (delivered_bytes, tx_bytes) are zero at t = 0, which is never sampled.
Sources are cited by section of the project's reference (methodology.md, algorithms.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

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
    end_s = float(rows["t_s"].iloc[-1]) if end_s is None else end_s
    sent = _cumulative_at(rows, "tx_bytes", np.array([start_s, end_s]))
    return float(8 * (sent[1] - sent[0]) / (rate_bps * (end_s - start_s)))


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


def mean_goodput_mbps(
    flows: pd.DataFrame, flow: int, *, start_s: float = 0.0, end_s: float | None = None
) -> float:
    """A flow's goodput averaged over [start_s, end_s] (default end: its last sample), in Mb/s.

    Bytes delivered in order to the receiver in the window · 8 / window length: "goodput"
    in RFC 5166 §2.1 and the Hamilton per-flow measure (methodology.md §1.5, §7).
    delivered_bytes is interpolated linearly between samples.
    """
    rows = _flow_rows(flows, flow)
    end_s = float(rows["t_s"].iloc[-1]) if end_s is None else end_s
    if end_s <= start_s:
        raise ValueError(f"empty window: start_s={start_s}, end_s={end_s}")
    delivered = _cumulative_at(rows, "delivered_bytes", np.array([start_s, end_s]))
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
    rows = _flow_rows(flows, flow)
    end_s = float(rows["t_s"].iloc[-1]) if end_s is None else end_s
    bins = math.floor((end_s - start_s) / interval_s + 1e-9)
    if bins < 1:
        raise ValueError(f"no whole {interval_s} s interval between {start_s} s and {end_s} s")
    edges = start_s + interval_s * np.arange(bins + 1)
    delivered = _cumulative_at(rows, "delivered_bytes", edges)
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


def throughput_ratio(a: float, b: float) -> float:
    """Hamilton fairness ratio of two like flows: min(a, b) / max(a, b), 1 = fair.

    Li, Leith, Shorten, symmetric-fairness test (methodology.md §1.4, §1.5); two flows that
    both got nothing are treated as equal (1). For two flows Jain's index is
    (1+r)²/(2(1+r²)).
    """
    if a < 0 or b < 0:
        raise ValueError(f"throughputs must be non-negative, got {a} and {b}")
    if max(a, b) == 0:
        return 1.0
    return min(a, b) / max(a, b)


def friendliness(std_vs_new_mbps: float, std_vs_std_mbps: float) -> float:
    """Hamilton friendliness: a standard-TCP flow's throughput against the new stack / against
    standard TCP.

    The baseline is the standard flow's throughput against another standard flow under the
    same conditions (Std/Std). 1 = the new stack takes no more than standard TCP would; below
    1 it takes from the standard flow. Hamilton friendliness test (methodology.md §1.4, §1.5, §7).
    """
    if std_vs_std_mbps <= 0:
        raise ValueError("the Std/Std baseline throughput must be positive")
    return std_vs_new_mbps / std_vs_std_mbps


def bw_impact(std_only_mbps: Sequence[float], mixed_std_mbps: Sequence[float]) -> float:
    """UCL "BW impact": mean standard-flow throughput with n standard flows / with n−1 + 1 new.

    The first list holds the n standard flows of a run with standard TCP only, the second the
    n−1 standard flows of the same run with one flow replaced by the new stack;
    impact(n) = mean_{n std}(x) / mean_{n−1 std}(x): 1 for a new flow exactly as aggressive
    as standard TCP, > 1 when it takes more than a standard flow's share, ∞ when it starves
    the standard flows. The defining text was not found; this is "reading 2" of
    methodology.md §2.1, chosen because Li's thesis Fig. 9.11 plots impact against a "unity"
    line (§7). bw_impact_aggregate is reading 1.
    """
    std_only, mixed = _impact_runs(std_only_mbps, mixed_std_mbps)
    return _ratio_or_inf(float(np.mean(std_only)), float(np.mean(mixed)))


def bw_impact_aggregate(std_only_mbps: Sequence[float], mixed_std_mbps: Sequence[float]) -> float:
    """BW impact, "reading 1" of methodology.md §2.1: Σ_{n std} x / Σ_{n−1 std} x.

    The total throughput of the n standard flows of the standard-only run over that of the
    n−1 standard flows of the mixed run; n/(n−1) (not 1) for a neutral new flow.
    """
    std_only, mixed = _impact_runs(std_only_mbps, mixed_std_mbps)
    return _ratio_or_inf(float(np.sum(std_only)), float(np.sum(mixed)))


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
    Li's thesis measures the time to an 80 % throughput ratio (methodology.md §1.5, §7); the
    smoothing window (suggested: the larger of 1 s and 10 RTTs) and holding the level for at
    least one congestion epoch, so that transient crossings are not counted, are the
    methodology's proposals [P].
    """
    rows = _flow_rows(flows, new_flow)
    t_s = rows["t_s"].to_numpy(float)
    t_s = t_s[t_s >= start_s + smoothing_s - 1e-9]
    ends = _cumulative_at(rows, "delivered_bytes", t_s)
    starts = _cumulative_at(rows, "delivered_bytes", t_s - smoothing_s)
    reached = 8 * (ends - starts) / smoothing_s / 1e6 >= threshold * fair_share_mbps
    # Time of the first sample at or after each one that is below the level.
    next_miss_s = np.minimum.accumulate(np.where(reached, np.inf, t_s)[::-1])[::-1]
    held = reached & (next_miss_s > t_s + hold_s) & (t_s + hold_s <= t_s.max(initial=-np.inf))
    if not held.any():
        return None
    return float(t_s[held.argmax()] - start_s)


def rtt_unfairness_exponent(
    rtt_ratios: Sequence[float], throughput_ratios: Sequence[float]
) -> float:
    """Exponent k of x1/x2 = (RTT2/RTT1)^k, fitted by least squares through the origin.

    With u = log(RTT2/RTT1) and y = log(x1/x2) for each pair of flows, k = Σuy / Σu².
    Reference values: k = 2 for Reno with synchronised losses (throughput ∝ 1/RTT²),
    k = 1 with unsynchronised losses; larger k is more RTT-unfair (algorithms.md §10.5,
    methodology.md §1.5, §7). Pairs with equal RTTs carry no information about k.
    """
    rtt = np.asarray(rtt_ratios, dtype=float)
    ratio = np.asarray(throughput_ratios, dtype=float)
    if rtt.shape != ratio.shape or rtt.ndim != 1:
        raise ValueError("rtt_ratios and throughput_ratios must be two lists of equal length")
    if (rtt <= 0).any() or (ratio <= 0).any():
        raise ValueError("ratios must be positive (a starved flow has no finite exponent)")
    u, y = np.log(rtt), np.log(ratio)
    if not (u != 0).any():
        raise ValueError("the exponent needs at least one pair of flows with different RTTs")
    return float(np.sum(u * y) / np.sum(u * u))


def coefficient_of_variation(series: Sequence[float] | np.ndarray) -> float:
    """σ/μ of a series, with the population standard deviation (ddof = 0).

    The oscillation/stability measure of RFC 5166 §2.5 and methodology.md §1.5, §7.
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
    "stability" and RFC 5166 oscillations (methodology.md §1.5, §7).
    """
    series = goodput_series_mbps(flows, flow, interval_s, start_s=start_s, end_s=end_s)
    return coefficient_of_variation(series)


def rtt_cov(
    flows: pd.DataFrame, flow: int, *, start_s: float = 0.0, end_s: float = math.inf
) -> float:
    """Stability of a flow's RTT: the coefficient of variation of its sampled srtt_ms.

    Over the samples in [start_s, end_s] that carry an RTT estimate (srtt_ms > 0; it is 0
    before the first measurement). RFC 5166 §2.2/§2.5, methodology.md §7.
    """
    rows = _flow_rows(flows, flow)
    in_window = rows["t_s"].between(start_s, end_s) & (rows["srtt_ms"] > 0)
    return coefficient_of_variation(rows.loc[in_window, "srtt_ms"].to_numpy(float))


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


def loss_rate(summary: Mapping[str, Any]) -> float:
    """Packets dropped at the bottleneck per data packet sent by all flows.

    bottleneck.drops (queue, random and induced) / Σ flows' packets_sent (retransmissions
    included): the packet loss rate of RFC 5166 §2.3.
    """
    sent = sum(flow["packets_sent"] for flow in summary["flows"])
    if sent == 0:
        raise ValueError("no packets were sent")
    return summary["bottleneck"]["drops"] / sent


def retransmission_rate(flow_summary: Mapping[str, Any]) -> float:
    """A flow's retransmitted packets per data packet sent: retransmits / packets_sent.

    The "overhead" of Li's thesis in its simplest form (methodology.md §1.5, §7).
    """
    return flow_summary["retransmits"] / _packets_sent(flow_summary)


def congestion_event_rate(flow_summary: Mapping[str, Any]) -> float:
    """A flow's congestion events (window reductions) per data packet sent.

    The p of the response functions and of the Mathis and PFTK models, which count loss
    indications, not lost packets (algorithms.md §10.1–10.3; RFC 5166 §2.3 "congestion
    event"): plot (congestion_event_rate, goodput) against models.py.
    """
    return flow_summary["congestion_events"] / _packets_sent(flow_summary)


def _packets_sent(flow_summary: Mapping[str, Any]) -> int:
    sent = flow_summary["packets_sent"]
    if sent == 0:
        raise ValueError(f"flow {flow_summary['id']} sent no packets")
    return sent


def _impact_runs(
    std_only_mbps: Sequence[float], mixed_std_mbps: Sequence[float]
) -> tuple[np.ndarray, np.ndarray]:
    """The standard flows' throughputs of the two BW-impact runs: n and n − 1 ≥ 1 of them."""
    std_only = np.asarray(std_only_mbps, dtype=float)
    mixed = np.asarray(mixed_std_mbps, dtype=float)
    if mixed.size < 1 or std_only.size != mixed.size + 1:
        raise ValueError(
            f"BW impact needs n ≥ 2 standard flows alone and n − 1 beside the new flow, "
            f"got {std_only.size} and {mixed.size}"
        )
    return std_only, mixed


def _ratio_or_inf(baseline: float, mixed: float) -> float:
    """baseline / mixed, ∞ when the mixed run's standard flows got nothing."""
    if baseline <= 0:
        raise ValueError("the standard-only run's throughput must be positive")
    return baseline / mixed if mixed > 0 else math.inf


def _flow_rows(flows: pd.DataFrame, flow: int) -> pd.DataFrame:
    rows = flows[flows["flow"] == flow].sort_values("t_s")
    if rows.empty:
        raise ValueError(f"no samples of flow {flow}")
    return rows


def _cumulative_at(rows: pd.DataFrame, column: str, times: np.ndarray) -> np.ndarray:
    """A cumulative counter interpolated linearly at the given times, from zero at t = 0."""
    t_s = np.concatenate([[0.0], rows["t_s"].to_numpy(float)])
    values = np.concatenate([[0.0], rows[column].to_numpy(float)])
    return np.interp(times, t_s, values)


def _increments(cumulative: pd.Series) -> np.ndarray:
    """Differences between consecutive samples, the first taken from zero at t = 0."""
    return np.diff(cumulative.to_numpy(float), prepend=0.0)
