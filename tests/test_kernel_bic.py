"""BIC run by the real kernel (crates/bpf/bpf/bic.bpf.c) against its specification.

Xu, Harfoush & Rhee, "Binary Increase Congestion Control for Fast, Long Distance Networks"
(INFOCOM 2004): on a loss the window keeps β of itself and the window it had becomes W_max.
The window then searches back towards W_max (binary search increase): no more than S_max a
round trip while far away, a share of the distance left as it nears W_max, and no less than
S_min next to it. Past W_max it probes for more (max probing), mirror-wise: slowly at first,
then faster, then S_max.

The simulator's reading (crates/sim/src/cc/bic.rs), which the BPF stack shares: β = 0.8 kept
(`beta`), S_max = 16 packets (`max_increment`), a round closes a quarter of the distance left
(B = 4, in whole packets; the paper jumps to the midpoint), S_min = B/`smooth_part` = 0.2
packets within 2B below W_max and B above it, then a third of the excess a round, then S_max
from 3·S_max above W_max on.

What the kernel shows and how it is read: TCP_INFO every 10 ms (`result.flows`). The flow
starts with `initial_ssthresh` = 100 so that slow start ends without a loss, and BIC climbs
at S_max until the drop (`drop_at`), which sets W_max at a window the path holds without a
queue. The kernel cuts the window by PRR over the recovery round, so the backoff is read from
ssthresh, and W_max too (ssthresh = ⌊β·W_max⌋: the last sample before the loss may be a few
packets short of it); the search is read round by round from the end of recovery, each round
one smoothed RTT long. Delayed ACKs do not bend the increase: the stack counts packets
acknowledged, not ACKs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

from lab_runs import scenario, valid_run

OPEN = 0
BETA = 0.8
S_MAX = 16.0
S_MIN = 0.2
B = 4
DROP_S = 5.0
# A round's increase is the difference of two windows interpolated between whole-packet
# samples (up to a packet off at each end) a smoothed RTT apart; once the window passes the
# BDP the queue grows by S_max a round (0.8 ms of 60) and the smoothed RTT trails it by about
# a round, a round read 1–2% short. A round: within 2 packets and 3% of 16 (2.5). Over n
# rounds the ends' errors do not add up: the mean is within 2/n packets and 3%.
ROUND_SLACK = 2.5
RTT_LAG = 0.03
# ssthresh = ⌊β·W_max⌋ is the same for one or two windows 1/β = 1.25 packets apart: W_max is
# known to a packet, and so is each round's distance to it.
W_MAX_SLACK = 1.0


def mean_within(increases: list[float], expected: float) -> bool:
    return abs(float(np.mean(increases)) - expected) <= 2 / len(increases) + RTT_LAG * expected


@dataclass(frozen=True)
class Search:
    window: float  # the window sampled last before the drop was found
    ssthresh: float  # what the drop set
    w_max: float  # the window the drop was found at, as ssthresh tells it
    # Each round from the end of recovery on: (packets below W_max at its start, increase).
    rounds: list[tuple[float, float]]

    def increases(self, below_from: float, below_to: float) -> list[float]:
        """The increase of each round that starts between these distances below W_max
        (negative: above it), `below_from` included."""
        return [grown for below, grown in self.rounds if below_to < below <= below_from]


def rounds(flow: pd.DataFrame, since_s: float) -> list[tuple[float, float]]:
    """(window, window a round later) for each round trip from `since_s` on, a round being
    the smoothed RTT at its start."""
    t = flow["t_s"].to_numpy()
    cwnd = flow["cwnd_pkts"].to_numpy()
    srtt_s = flow["srtt_ms"].to_numpy() / 1e3
    steps = []
    at = since_s
    while (end := at + float(np.interp(at, t, srtt_s))) <= t[-1]:
        steps.append((float(np.interp(at, t, cwnd)), float(np.interp(end, t, cwnd))))
        at = end
    return steps


@pytest.fixture(scope="module")
def search() -> Search:
    """One flow (60 ms, 250 Mb/s: 1,295 packets hold it without a queue) whose slow start
    ends at 100 packets, a drop at 5 s, and the 8 s after it."""
    cc = {"name": "bic", "initial_ssthresh": 100}
    result = valid_run(
        scenario(
            flow=[{"cc": cc, "rtt": "60ms", "drop_at": [f"{DROP_S}s"]}],
            bottleneck={"rate": "250Mbps", "queue": "100%bdp"},
            duration="13s",
        )
    )
    # Samples with an unknown ssthresh fall between the kernel's skipped ssthresh call and
    # the stack's answer (docs/lab.md "BPF stacks").
    flow = result.flows.dropna(subset=["ssthresh_pkts"])
    flow = flow[flow["flow"] == 0].reset_index(drop=True)
    cut = flow.index[flow["ssthresh_pkts"].ne(flow["ssthresh_pkts"].shift())][1:]
    assert len(cut) == 1, flow.loc[cut]
    window = float(flow.at[cut[0] - 1, "cwnd_pkts"])
    ssthresh = float(flow.at[cut[0], "ssthresh_pkts"])
    # The window grows by up to 3 packets between the last sample and the loss's detection;
    # ssthresh = ⌊β·W_max⌋ tells W_max itself, the least window that cuts to it.
    w_max = float(np.ceil(ssthresh / BETA))
    reopened = flow[(flow.index > cut[0]) & (flow["ca_state"] == OPEN)]["t_s"].iloc[0]
    steps = [(w_max - before, after - before) for before, after in rounds(flow, reopened)]
    print(f"W_max {w_max:.0f}; (below W_max, increase) per round:")
    print(", ".join(f"({below:.1f}, {grown:.2f})" for below, grown in steps))
    return Search(window, ssthresh, w_max, steps)


def test_a_loss_keeps_beta_of_the_window(search: Search):
    # Slack: ssthresh is a whole number (1 packet), and the window is read up to 10 ms before
    # the loss was found, while it grew by S_max a 60 ms round (3 packets).
    low, high = BETA * search.window - 1, BETA * (search.window + 3)
    assert low <= search.ssthresh <= high, search
    assert search.w_max - search.ssthresh > B * S_MAX + S_MAX, "too early a drop to see S_max"


def test_far_below_w_max_the_search_climbs_at_s_max(search: Search):
    far = search.increases(np.inf, B * S_MAX + S_MAX)
    assert len(far) >= 3, search.rounds
    assert all(abs(grown - S_MAX) <= ROUND_SLACK for grown in far), far
    assert mean_within(far, S_MAX), far


def test_nearer_each_round_closes_a_quarter_of_the_distance(search: Search):
    """A quarter of the distance left in whole packets, recomputed as the window grows within
    the round: from a quarter of 3/4 of it to a quarter of it. So the last 64 packets take
    about 9 rounds (3/4 a round from 64 to 8 is 7.2; whole packets add some), where a straight
    line at S_max would take 4 and the paper's bisection (half the distance) 3."""
    near = [(below, grown) for below, grown in search.rounds if 2 * B <= below <= B * S_MAX]
    assert 6 <= len(near) <= 11, near
    for below, grown in near:
        least = (0.75 * below) // B - ROUND_SLACK
        most = (below + W_MAX_SLACK) // B + ROUND_SLACK
        assert least <= grown <= most, near


def test_next_to_w_max_it_holds_at_s_min(search: Search):
    """From under 2B below W_max to under B above it the search adds S_min a round: 12 packets
    over 60 rounds, the plateau of the search (its ends known to a packet)."""
    plateau = search.increases(2 * B - W_MAX_SLACK, -B + W_MAX_SLACK)
    assert len(plateau) >= 40, search.rounds
    assert mean_within(plateau, S_MIN), plateau


def test_past_w_max_it_probes_slowly_then_faster(search: Search):
    """A third of the excess a round, recomputed as the window grows within the round (so up
    to 4/9 of the excess at its start), until 3·S_max above W_max; then S_max a round."""
    top = (B - 1) * S_MAX
    slow = [
        (-below, grown)
        for below, grown in search.rounds
        if -top + W_MAX_SLACK <= below <= -B - W_MAX_SLACK
    ]
    fast = search.increases(-top - W_MAX_SLACK, -np.inf)
    assert len(slow) >= 3, search.rounds
    assert len(fast) >= 3, search.rounds
    for above, grown in slow:
        least = (above - W_MAX_SLACK) / (B - 1) - ROUND_SLACK
        most = min((above + W_MAX_SLACK) * 4 / 9, S_MAX) + ROUND_SLACK
        assert least <= grown <= most, slow
    assert all(abs(grown - S_MAX) <= ROUND_SLACK for grown in fast), fast
    assert mean_within(fast, S_MAX), fast
