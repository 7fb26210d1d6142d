"""What a new stack does to standard TCP: Hamilton friendliness and the UCL BW impact."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def friendliness(std_vs_new_mbps: float, std_vs_std_mbps: float) -> float:
    """Hamilton friendliness: a standard-TCP flow's throughput against the new stack / against
    standard TCP.

    The baseline is the standard flow's throughput against another standard flow under the
    same conditions (Std/Std). 1 = the new stack takes no more than standard TCP would; below
    1 it takes from the standard flow. Hamilton friendliness test (docs/methodology.md §3.5).
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
    the standard flows. The defining text was not found; the mean form is our reading, chosen
    because Li's thesis Fig. 9.11 plots impact against a "unity" line (docs/methodology.md
    §3.9). bw_impact_aggregate is the other reading.
    """
    std_only, mixed = _impact_runs(std_only_mbps, mixed_std_mbps)
    return _ratio_or_inf(float(np.mean(std_only)), float(np.mean(mixed)))


def bw_impact_aggregate(std_only_mbps: Sequence[float], mixed_std_mbps: Sequence[float]) -> float:
    """BW impact, the other reading (docs/methodology.md §3.9): Σ_{n std} x / Σ_{n−1 std} x.

    The total throughput of the n standard flows of the standard-only run over that of the
    n−1 standard flows of the mixed run; n/(n−1) (not 1) for a neutral new flow.
    """
    std_only, mixed = _impact_runs(std_only_mbps, mixed_std_mbps)
    return _ratio_or_inf(float(np.sum(std_only)), float(np.sum(mixed)))


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
