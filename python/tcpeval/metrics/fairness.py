"""Fairness between flows: Jain's index, the Hamilton throughput ratio, RTT unfairness, and
the shares of the algorithms of a run that mixes several."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np


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


def throughput_ratio(a: float, b: float) -> float:
    """Hamilton fairness ratio of two like flows: min(a, b) / max(a, b), 1 = fair.

    Li, Leith, Shorten, symmetric-fairness test (docs/methodology.md §3.3); two flows that
    both got nothing are treated as equal (1). For two flows Jain's index is
    (1+r)²/(2(1+r²)).
    """
    if a < 0 or b < 0:
        raise ValueError(f"throughputs must be non-negative, got {a} and {b}")
    if max(a, b) == 0:
        return 1.0
    return min(a, b) / max(a, b)


def rtt_unfairness_exponent(
    rtt_ratios: Sequence[float], throughput_ratios: Sequence[float]
) -> float:
    """Exponent k of x1/x2 = (RTT2/RTT1)^k, fitted by least squares through the origin.

    With u = log(RTT2/RTT1) and y = log(x1/x2) for each pair of flows, k = Σuy / Σu².
    Reference values: k = 2 for Reno with synchronised losses (throughput ∝ 1/RTT²),
    k = 1 with unsynchronised losses; larger k is more RTT-unfair (docs/methodology.md
    §3.8). Pairs with equal RTTs carry no information about k.
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


def algorithm_shares(goodputs: Mapping[str, Sequence[float]]) -> dict[str, float]:
    """Each algorithm's share of a run's goodput: Σ its flows' / Σ every flow's (0 each when
    nothing was delivered). `goodputs` maps an algorithm to its flows' goodputs.
    docs/methodology.md §3.4."""
    total = sum(sum(values) for values in goodputs.values())
    return {cc: sum(values) / total if total > 0 else 0.0 for cc, values in goodputs.items()}


def between_algorithms_jain(goodputs: Mapping[str, Sequence[float]]) -> float:
    """Jain's index of the algorithms' mean goodput per flow: 1 when a flow of each algorithm
    gets as much as a flow of any other, however many flows each has. docs/methodology.md §3.4.
    """
    return jain_index([float(np.mean(values)) for values in goodputs.values()])
