"""Every metric the suites and the report use, declared once: its name (the column of the tidy
DataFrame, a key a suite measure returns or a summary field), what a reader calls it, its unit,
which way is better, and where it is computed.

The report's tables and figures take labels and units from here, and the verdict rule
`worse_than_baseline_by` takes the direction: a worse value is a lower one where higher is
better, a higher one where lower is better.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Literal

from tcpeval.metrics.efficiency import mean_queue_pkts, utilization
from tcpeval.metrics.fairness import (
    algorithm_shares,
    between_algorithms_jain,
    jain_index,
    throughput_ratio,
)
from tcpeval.metrics.harm import mean_rtt_ms, retransmitted_per_delivered, starved_s
from tcpeval.metrics.loss import congestion_event_rate, loss_rate, retransmission_rate
from tcpeval.metrics.responsiveness import convergence_time_s
from tcpeval.metrics.short_flows import slowdowns
from tcpeval.metrics.stability import rtt_cov, throughput_cov
from tcpeval.metrics.throughput import mean_goodput_mbps

Better = Literal["higher", "lower"]
STABILITY = ("fairness", "efficiency")
"""The measures that report the flows' stability."""
L4S_QUEUE = ("l4s_queue", "coupling")
"""The measures that report the L4S queue's sojourn."""


@dataclass(frozen=True)
class Metric:
    """One metric: name, label and unit for a reader, direction for the verdicts."""

    name: str
    label: str
    unit: str
    """Empty for a ratio, an index or a count per packet."""
    better: Better | None
    """None for a figure that describes a run rather than judges it (an RTT ratio)."""
    function: Callable[..., Any] | None
    """The function of tcpeval.metrics it is computed with; None when the measure (or the
    backend, for a summary field) computes it by itself in a line."""
    measures: tuple[str, ...] = ()
    """The suite measures that return it (suites/measures.py); none for a summary field."""

    @property
    def title(self) -> str:
        """The label with the unit, for an axis or a table heading: "convergence time (s)"."""
        return f"{self.label} ({self.unit})" if self.unit else self.label


def _declare(metrics: Iterable[Metric]) -> dict[str, Metric]:
    return {metric.name: metric for metric in metrics}


METRICS: dict[str, Metric] = _declare(
    [
        # Summary fields of every run (tcpeval.load), and the rates the report derives.
        Metric(
            "goodput_mbps", "goodput per flow", "Mb/s", "higher", mean_goodput_mbps, ("goodput",)
        ),
        Metric("jain_index", "Jain index", "", "higher", jain_index, ("fairness",)),
        # Runs that mix algorithms (report/dataset.py): per group, and between the groups.
        Metric("algorithm_share", "algorithm's share of the goodput", "", None, algorithm_shares),
        Metric(
            "algorithms_jain",
            "Jain index between algorithms",
            "",
            "higher",
            between_algorithms_jain,
        ),
        Metric("bottleneck_utilization", "bottleneck utilisation", "", "higher", utilization),
        Metric("bottleneck_mean_queue_pkts", "mean queue", "packets", "lower", mean_queue_pkts),
        Metric(
            "retransmission_rate",
            "retransmissions per packet sent",
            "",
            "lower",
            retransmission_rate,
        ),
        Metric(
            "congestion_event_rate",
            "congestion events per packet sent",
            "",
            "lower",
            congestion_event_rate,
        ),
        # What the suite measures return.
        Metric(
            "throughput_ratio",
            "throughput ratio (min/max)",
            "",
            "higher",
            throughput_ratio,
            ("fairness", "rtt_unfairness", "coupling"),
        ),
        Metric(
            "throughput_cov", "throughput CoV (1 s bins)", "", "lower", throughput_cov, STABILITY
        ),
        Metric("rtt_cov", "RTT CoV", "", "lower", rtt_cov, STABILITY),
        Metric("goodput_ratio", "throughput ratio x1/x0", "", None, None, ("rtt_unfairness",)),
        Metric("rtt_ratio", "RTT ratio RTT1/RTT0", "", None, None, ("rtt_unfairness",)),
        Metric("standard_share", "standard flow's share", "", "higher", None, ("friendliness",)),
        Metric(
            "standard_mbps",
            "standard flow's goodput",
            "Mb/s",
            "higher",
            mean_goodput_mbps,
            ("friendliness",),
        ),
        Metric(
            "convergence_s", "convergence time", "s", "lower", convergence_time_s, ("convergence",)
        ),
        Metric("utilization", "bottleneck utilisation", "", "higher", utilization, ("efficiency",)),
        Metric(
            "window_pkts", "average window", "packets", "higher", mean_goodput_mbps, ("response",)
        ),
        Metric("loss_rate", "loss rate", "", "lower", loss_rate, ("response",)),
        Metric(
            "standard_mean_mbps",
            "standard flows' mean goodput",
            "Mb/s",
            "higher",
            mean_goodput_mbps,
            ("impact",),
        ),
        Metric("completion_s", "completion time", "s", "lower", None, ("completion",)),
        # The l4s suite (docs/methodology.md §3.13): queue sojourns and datagram delays are
        # the backend's own figures, read in a line.
        Metric("l4s_p99_ms", "L4S queue sojourn p99", "ms", "lower", None, L4S_QUEUE),
        Metric("l4s_mean_ms", "L4S queue sojourn, mean", "ms", "lower", None, L4S_QUEUE),
        Metric("stack_classic_ratio", "rate ratio stack:classic", "", None, None, ("coupling",)),
        Metric(
            "classic_mbps",
            "classic flows' mean goodput",
            "Mb/s",
            "higher",
            mean_goodput_mbps,
            ("harm",),
        ),
        Metric("classic_rtt_ms", "classic flows' mean RTT", "ms", "lower", mean_rtt_ms, ("harm",)),
        Metric(
            "classic_retransmitted",
            "classic flows' retransmissions per delivered packet",
            "",
            "lower",
            retransmitted_per_delivered,
            ("harm",),
        ),
        Metric(
            "classic_starved_s",
            "longest time a classic flow was starved",
            "s",
            "lower",
            starved_s,
            ("harm",),
        ),
        Metric(
            "short_slowdown_mean",
            "short flows' slowdown, mean",
            "",
            "lower",
            slowdowns,
            ("short_flows",),
        ),
        Metric(
            "short_slowdown_p99",
            "short flows' slowdown, p99",
            "",
            "lower",
            slowdowns,
            ("short_flows",),
        ),
        Metric(
            "short_unfinished",
            "short flows unfinished",
            "",
            "lower",
            None,
            ("short_flows",),
        ),
        Metric(
            "sparse_delay_ms",
            "sparse flow's queueing delay, mean",
            "ms",
            "lower",
            None,
            ("sparse_delay",),
        ),
        Metric(
            "sparse_max_delay_ms",
            "sparse flow's queueing delay, max",
            "ms",
            "lower",
            None,
            ("sparse_delay",),
        ),
        Metric("transfer_mbps", "transfer rate", "Mb/s", "higher", None, ("completion",)),
    ]
)


def declared(name: str) -> Metric | None:
    """The declaration of a metric, None for a column nobody declared (an axis, a counter)."""
    return METRICS.get(name)


def label(name: str) -> str:
    """A metric's title for axes and tables; an undeclared column's name, spaced out."""
    metric = declared(name)
    return name.replace("_", " ") if metric is None else metric.title
