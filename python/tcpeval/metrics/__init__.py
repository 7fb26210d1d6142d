"""Metrics computed from a result's time series and summary, the same for every backend.

Inputs are the result's DataFrames (columns as in docs/contract.md) or entries of its summary;
cumulative counters (delivered_bytes, tx_bytes) are zero at t = 0, which is never sampled.
Each metric's definition, window and source: docs/methodology.md §3.
One module per concept; `declarations` names, labels and orients the metrics the suites and
the report use.
"""

from __future__ import annotations

from tcpeval.metrics._series import samples_by_flow
from tcpeval.metrics.declarations import METRICS, Metric, declared, label
from tcpeval.metrics.efficiency import mean_queue_pkts, utilization
from tcpeval.metrics.fairness import (
    algorithm_shares,
    between_algorithms_jain,
    jain_index,
    rtt_unfairness_exponent,
    throughput_ratio,
)
from tcpeval.metrics.friendliness import bw_impact, bw_impact_aggregate, friendliness
from tcpeval.metrics.harm import harm, mean_rtt_ms, retransmitted_per_delivered, starved_s
from tcpeval.metrics.loss import congestion_event_rate, loss_rate, retransmission_rate
from tcpeval.metrics.responsiveness import convergence_time_s, recovery_time
from tcpeval.metrics.short_flows import ideal_completion_s, slowdowns
from tcpeval.metrics.stability import coefficient_of_variation, rtt_cov, throughput_cov
from tcpeval.metrics.throughput import (
    goodput_between_mbps,
    goodput_mbps,
    goodput_series_mbps,
    mean_goodput_mbps,
    throughput_mbps,
)

__all__ = [
    "METRICS",
    "Metric",
    "algorithm_shares",
    "between_algorithms_jain",
    "bw_impact",
    "bw_impact_aggregate",
    "coefficient_of_variation",
    "congestion_event_rate",
    "convergence_time_s",
    "declared",
    "friendliness",
    "goodput_between_mbps",
    "goodput_mbps",
    "goodput_series_mbps",
    "harm",
    "ideal_completion_s",
    "jain_index",
    "label",
    "loss_rate",
    "mean_goodput_mbps",
    "mean_queue_pkts",
    "mean_rtt_ms",
    "recovery_time",
    "retransmission_rate",
    "retransmitted_per_delivered",
    "rtt_cov",
    "rtt_unfairness_exponent",
    "samples_by_flow",
    "slowdowns",
    "starved_s",
    "throughput_cov",
    "throughput_mbps",
    "throughput_ratio",
    "utilization",
]
