"""The model's time series, in the columns every backend's results carry: each flow's rate,
window and RTT are flat within an epoch (the steady state of `shares`), except after an
induced loss, where the window regrows as its algorithm's model says. Cumulative counters
are integrated on a grid eight times finer than the samples."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from tcpeval.backends.model.flows import Answer, LinkState, ModelFlow
from tcpeval.result import FLOW_COLUMNS, LINK_COLUMNS

SUBSTEPS = 8


@dataclass
class FlowPlan:
    """A flow, its resolved entry, and its answer in each epoch it is active in."""

    flow: ModelFlow
    spec: dict[str, Any]
    epochs: list[tuple[float, float, Answer]] = field(default_factory=list)
    drops_s: list[float] = field(init=False)
    """The induced losses, in seconds, in order: read at every point of the fine grid."""

    def __post_init__(self) -> None:
        self.drops_s = sorted(d / 1e9 for d in self.spec["drop_at_ns"])

    def windows_and_rates(self, times_s: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(window in packets, goodput in bit/s, RTT in s) at each time; NaN where the models
        have no answer, zero rate where the flow is not active. Flat within an epoch, so set an
        epoch at a time; only the times after an induced loss are worked out one by one."""
        window = np.full(len(times_s), math.nan)
        rate_bps = np.zeros(len(times_s))
        rtt_s = np.full(len(times_s), math.nan)
        unanswered = np.ones(len(times_s), dtype=bool)
        last_drop = np.searchsorted(self.drops_s, times_s, side="right")
        for start_s, stop_s, answer in self.epochs:
            at = unanswered & (start_s <= times_s) & (times_s < stop_s)
            unanswered &= ~at
            rtt_s[at] = answer.rtt_s
            if answer.goodput_bps is None:
                rate_bps[at] = math.nan
                continue
            full = answer.goodput_bps * answer.rtt_s / (8 * self.flow.mss_bytes)
            window[at] = full
            rate_bps[at] = answer.goodput_bps
            if answer.on_link or full == 0:
                continue
            for i in np.flatnonzero(at & (last_drop > 0)):
                since_s = times_s[i] - self.drops_s[last_drop[i] - 1]
                window[i] = self.flow.stack.window_after_loss_pkts(full, since_s, answer.rtt_s)
                rate_bps[i] = answer.goodput_bps * window[i] / full
        return window, rate_bps, rtt_s

    def signal_shares(self, times_s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(share marked, share dropped by the queue discipline) of the flow's packets at each
        time: NaN where no model says, 0 where the flow is not active."""
        marked, dropped = np.zeros(len(times_s)), np.zeros(len(times_s))
        for start_s, stop_s, answer in self.epochs:
            at = (start_s <= times_s) & (times_s < stop_s)
            marked[at] = math.nan if answer.marked is None else answer.marked
            dropped[at] = math.nan if answer.dropped is None else answer.dropped
        return marked, dropped


@dataclass(frozen=True)
class QueueSignals:
    """The queue discipline's marks and drops over the run, and the flows' packets; None
    where no model counts them (a drop-tail queue's overflows, a queue that marks nothing)."""

    marks: float | None
    drops: float | None
    packets: float


@dataclass(frozen=True)
class Grid:
    """Sample times k·interval up to the duration, and the finer integration grid."""

    samples_s: np.ndarray
    fine_s: np.ndarray
    step_s: float

    @classmethod
    def of(cls, duration_ns: int, interval_ns: int) -> Grid:
        count = duration_ns // interval_ns
        step_s = interval_ns / 1e9 / SUBSTEPS
        fine = (np.arange(count * SUBSTEPS) + 0.5) * step_s  # midpoints
        return cls(np.arange(1, count + 1) * interval_ns / 1e9, fine, step_s)

    def cumulative(self, rate_per_s: np.ndarray) -> np.ndarray:
        """The integral of a rate (per second) at each sample time, midpoint rule."""
        return (rate_per_s * self.step_s).cumsum()[SUBSTEPS - 1 :: SUBSTEPS]

    def at_samples(self, values: np.ndarray) -> np.ndarray:
        return values[SUBSTEPS - 1 :: SUBSTEPS]


def flow_series(
    plans: list[FlowPlan], grid: Grid, duration_s: float
) -> tuple[pd.DataFrame, list[dict[str, Any]], np.ndarray, QueueSignals]:
    """The flow columns, the flows' summaries, the wire rate of all flows on the fine grid
    (the link's load), and the queue discipline's signals to them."""
    columns: dict[str, list[np.ndarray]] = {name: [] for name in FLOW_COLUMNS}
    summaries = []
    wire_bps = np.zeros_like(grid.fine_s)
    totals: list[tuple[float | None, float | None, float]] = []
    for plan in plans:
        window, rate_bps, rtt_s = plan.windows_and_rates(grid.fine_s)
        wire_bps += np.nan_to_num(plan.flow.wire(1.0) * rate_bps)
        delivered = grid.cumulative(rate_bps / 8)
        for name, values in _flow_columns(plan, grid, window, rtt_s, delivered).items():
            columns[name].append(values)
        signals = _signals(plan, grid, rate_bps)
        totals.append((*signals, float(delivered[-1]) / plan.flow.mss_bytes))
        summaries.append(_flow_summary(plan, duration_s, float(delivered[-1]), *signals))
    # One frame from every flow's arrays: a frame per flow, concatenated, took most of the time
    # for thousands of flows.
    flows = pd.DataFrame({name: np.concatenate(parts) for name, parts in columns.items()})
    return flows, summaries, wire_bps, _queue_signals(totals)


def _signals(plan: FlowPlan, grid: Grid, rate_bps: np.ndarray) -> tuple[float | None, float | None]:
    """The flow's marks and queue drops over its life: its packets (delivered, a hair fewer
    than sent at these rates) times the shares its queue's model gives; None where its rate
    or a share is unknown."""
    if np.isnan(rate_bps).any():
        return None, None
    packets_per_s = rate_bps / (8 * plan.flow.mss_bytes)
    active = packets_per_s > 0
    counts: list[float | None] = []
    for share in plan.signal_shares(grid.fine_s):
        known = not np.isnan(share[active]).any()
        total = float((packets_per_s[active] * share[active]).sum() * grid.step_s)
        counts.append(total if known else None)
    return counts[0], counts[1]


def _queue_signals(totals: list[tuple[float | None, float | None, float]]) -> QueueSignals:
    marks = [m for m, _, _ in totals]
    drops = [d for _, d, _ in totals]
    return QueueSignals(
        marks=None if None in marks else sum(m or 0.0 for m in marks),
        drops=None if None in drops else sum(d or 0.0 for d in drops),
        packets=sum(p for _, _, p in totals),
    )


def _flow_columns(
    plan: FlowPlan, grid: Grid, window: np.ndarray, rtt_s: np.ndarray, delivered: np.ndarray
) -> dict[str, np.ndarray]:
    window_now = grid.at_samples(window)
    sent_pkts = delivered / plan.flow.mss_bytes
    samples = len(grid.samples_s)
    return {
        "t_s": grid.samples_s,
        "flow": np.full(samples, plan.flow.id),
        "cwnd_pkts": window_now,
        "ssthresh_pkts": np.full(samples, math.nan),  # no model tracks it
        "srtt_ms": 1e3 * grid.at_samples(rtt_s),
        "inflight_pkts": window_now,
        "delivered_bytes": delivered,
        "retransmits": sent_pkts * plan.flow.loss,  # expected, at the random loss rate
        "pacing_rate_bps": np.full(samples, plan.flow.limits_bps.get("pacing", 0.0)),
    }


def _flow_summary(
    plan: FlowPlan,
    duration_s: float,
    delivered_bytes: float,
    marks: float | None,
    queue_drops: float | None,
) -> dict[str, Any]:
    spec, flow = plan.spec, plan.flow
    start_s = spec["start_ns"] / 1e9
    end_s = duration_s if spec["stop_ns"] is None else spec["stop_ns"] / 1e9
    main = max(plan.epochs, key=lambda epoch: epoch[1] - epoch[0])[2]
    known = all(answer.goodput_bps is not None for _, _, answer in plan.epochs)
    delivered = delivered_bytes if known else None
    on_link = any(answer.on_link for _, _, answer in plan.epochs)
    drops = sum(1 for d in plan.drops_s if start_s <= d < end_s)
    retransmits = None if delivered is None else delivered / flow.mss_bytes * flow.loss + drops
    # Only a model of the queue's drops (RED's, DCTCP's none) knows those of a flow on the link.
    if on_link and (queue_drops is None or retransmits is None):
        retransmits = None
    elif retransmits is not None:
        retransmits += queue_drops or 0.0
    extra = {} if marks is None else {"ce_marks": round(marks)}
    return {
        "id": flow.id,
        "group": spec["group"],
        "cc": flow.stack.name,
        "rtt_ms": 1e3 * flow.rtt_s,
        "goodput_mbps": None if delivered is None else 8 * delivered / (end_s - start_s) / 1e6,
        "bytes_delivered": None if delivered is None else round(delivered),
        "retransmits": None if retransmits is None else round(retransmits),
        "packets_sent": None
        if delivered is None or retransmits is None
        else round(delivered / flow.mss_bytes + retransmits),
        "timeouts": None,
        "completion_s": None,
        "start_s": start_s,
        "end_s": end_s,
        "limited_by": main.limited_by,
        **extra,
    }


def link_series(
    link: dict[str, Any],
    epochs: list[tuple[float, float, LinkState, float]],
    grid: Grid,
    wire_bps: np.ndarray,
    duration_s: float,
    queue_pkts: float,
    signals: QueueSignals,
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The link's columns and summary: the flows' load plus the background, and each
    epoch's mean queue. `epochs` holds (start s, stop s, state, background bit/s).
    Where a model of the queue counts its marks and drops (a step marker, RED) the summary
    has them as the simulator names them: `aqm_marks`, `aqm_drops`, and `drops` with the
    link's random losses added."""
    background = np.zeros_like(grid.fine_s)
    queue = np.zeros_like(grid.fine_s)
    known = True
    for start_s, stop_s, state, background_bps in epochs:
        inside = (grid.fine_s >= start_s) & (grid.fine_s < stop_s)
        background[inside] = background_bps
        queue[inside] = np.nan if state.mean_queue_pkts is None else state.mean_queue_pkts
        known = known and state.utilization is not None
    load_bps = wire_bps + background
    frame = pd.DataFrame(
        {
            "t_s": grid.samples_s,
            "link": link["name"],
            "queue_pkts": grid.at_samples(queue),
            "drops": math.nan,  # no model counts them
            "tx_bytes": grid.cumulative(load_bps / 8),
        }
    )[list(LINK_COLUMNS)]
    span = [(stop - start) for start, stop, _, _ in epochs]
    mean_queue = (
        sum(s * (e[2].mean_queue_pkts or 0.0) for s, e in zip(span, epochs, strict=True))
        / duration_s
    )
    summary = {
        "name": link["name"],
        "utilization": float(load_bps.mean() / link["rate_bps"]) if known else None,
        "drops": None,
        "mean_queue_pkts": mean_queue if known else None,
        "capacity_pkts": queue_pkts,
    }
    if signals.marks is not None and signals.drops is not None:
        random_drops = signals.packets * link["loss"].get("p", 0.0)
        summary |= {
            "drops": round(signals.drops + random_drops),
            "aqm_drops": round(signals.drops),
            "aqm_marks": round(signals.marks),
        }
    return frame, summary
