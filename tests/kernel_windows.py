"""How a kernel flow's window moves, read from a lab run's TCP_INFO samples (every 10 ms):
the congestion events, each as the window the stack's `ssthresh` op was given and what it
returned, and the spans of congestion avoidance between them with the packets they
delivered. For the specification checks of the BPF stacks (tests/test_kernel_*.py)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import pandas as pd

from lab_runs import scenario, valid_run

# TCP_INFO's ca_state: the kernel's TCP_CA_Open, no loss or ECN echo being handled.
CA_OPEN = 0


@dataclass(frozen=True)
class Reduction:
    """One call of the stack's `ssthresh` op: the first sample showing its result, and the
    window of the sample before, the last one the kernel had not yet reduced, `gap_s`
    earlier (10 ms, or more on a busy host)."""

    t_s: float
    gap_s: float
    cwnd_before: float
    ssthresh: float


@dataclass(frozen=True)
class Span:
    """Consecutive samples in congestion avoidance, the window what limits the flow: the
    window at either end and the packets delivered between them."""

    t0_s: float
    t1_s: float
    cwnd0: float
    cwnd1: float
    delivered_pkts: float


def reductions(flow: pd.DataFrame) -> list[Reduction]:
    """Every change of ssthresh: the kernel sets it only when it enters recovery or CWR (or
    undoes one, which a single dropped packet, retransmitted, does not provoke)."""
    found = []
    rows = flow.reset_index(drop=True)
    for i in range(1, len(rows)):
        before, after = rows.iloc[i - 1], rows.iloc[i]
        if after.ssthresh_pkts != before.ssthresh_pkts and math.isfinite(after.ssthresh_pkts):
            found.append(
                Reduction(after.t_s, after.t_s - before.t_s, before.cwnd_pkts, after.ssthresh_pkts)
            )
    return found


def avoidance_spans(flow: pd.DataFrame, min_samples: int) -> list[Span]:
    """The runs of at least `min_samples` consecutive samples in which the flow is in
    congestion avoidance (state Open, cwnd at or above a finite ssthresh) and the window is
    what limits it (every packet the window allows is out), so every ACK may grow it."""
    rows = flow.reset_index(drop=True)
    growing = (
        (rows.ca_state == CA_OPEN)
        & rows.ssthresh_pkts.map(math.isfinite)
        & (rows.cwnd_pkts >= rows.ssthresh_pkts)
        & (rows.inflight_pkts >= rows.cwnd_pkts)
    )
    spans = []
    start = None
    for i, ok in enumerate([*growing, False]):
        if ok and start is None:
            start = i
        elif not ok and start is not None:
            if i - start >= min_samples:
                first, last = rows.iloc[start], rows.iloc[i - 1]
                spans.append(
                    Span(
                        first.t_s,
                        last.t_s,
                        first.cwnd_pkts,
                        last.cwnd_pkts,
                        last.delivered_pkts - first.delivered_pkts,
                    )
                )
            start = None
    return spans


def growth_agrees(grew: float, expected: float) -> bool:
    """Whether a span grew as expected: within 2 packets, as each end of it is read up to
    10 ms off the ACK that moved the window (less than one packet of growth at the rates of
    these tests), and 2% more, for ACKs the kernel does not let grow the window because it
    found the flow not cwnd-limited over their window (Linux decides that once per window)."""
    return abs(grew - expected) <= 2 + 0.02 * expected


def one_flow_with_drops(
    cc: str, rate: str, rtt: str, window: str, drop_at: list[str], duration: str
) -> pd.DataFrame:
    """Flow 0's samples of a lab run: one `cc` flow limited by its socket buffers to `window`,
    through a 300% BDP queue that takes that without a loss, losing a packet at each time
    of `drop_at`."""
    flow = {"cc": cc, "rtt": rtt, "window": window, "drop_at": drop_at}
    bottleneck = {"rate": rate, "queue": "300%bdp"}
    result = valid_run(scenario(flow=[flow], bottleneck=bottleneck, duration=duration))
    return result.flows[result.flows.flow == 0]
