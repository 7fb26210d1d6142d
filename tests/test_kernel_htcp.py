"""H-TCP run by the real kernel (crates/bpf/bpf/htcp.bpf.c) against its specification.

Leith & Shorten, "H-TCP: TCP for high-speed and long-distance networks" (PFLDnet 2004), and
draft-leith-tcp-htcp-06:
- the increase per RTT is α(Δ), Δ the time since the last congestion event: 1 for Δ ≤ Δ_L =
  1 s, then 1 + 10(Δ − Δ_L) + c(Δ − Δ_L)² (c = 0.25 in the paper, `alpha_quadratic`), times
  2(1 − β) so that the pair stays as friendly to Reno as (1, 0.5);
- a congestion event multiplies the window by β = RTTmin/RTTmax clamped to [0.5, 0.8]
  (adaptive backoff), or by 0.5 without it.

What the kernel shows and how it is read: TCP_INFO every 10 ms (`result.flows`). The kernel
cuts the window by PRR over the recovery round, so the backoff is read from ssthresh, set
once when the loss is detected, against the window just before. Δ restarts when recovery
ends (the simulator's reading of "the last congestion event", which the BPF stack shares), so
it is counted from the first sample back in the Open state. Delayed ACKs do not bend the
increase: the stack counts packets acknowledged, not ACKs. The first event is slow start's,
whose window doubles within a round and cannot be read from a sample before it (its β is 0.5
anyway: the simulator's rule adapts β only from the second event, once RTTmax was measured
over a whole cycle), so the backoff is judged on the events after it.

RTT scaling (the draft's) multiplies α by RTTmin/100 ms, clamped to [0.1, 2], and never
lets it fall below Reno's 1 (the simulator's reading).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from lab_runs import scenario, valid_run
from tcpeval.result import Result

OPEN = 0
LOW_SPEED_S = 1.0
QUADRATIC = 0.25
RTT_REF_S = 0.1


def htcp(**params: Any) -> dict[str, Any]:
    return {"name": "htcp", **params}


def alpha(delta_s: float) -> float:
    """α(Δ) of PFLDnet 2004, in packets per RTT."""
    d = max(delta_s - LOW_SPEED_S, 0.0)
    return 1.0 + 10.0 * d + QUADRATIC * d * d


def reductions(flow: pd.DataFrame) -> list[tuple[float, float, float]]:
    """Each congestion event: (time, window just before, ssthresh it set)."""
    changed = flow["ssthresh_pkts"].ne(flow["ssthresh_pkts"].shift())
    events = []
    for index in flow.index[changed][1:]:
        before = flow.loc[index - 1]
        events.append((flow.at[index, "t_s"], before["cwnd_pkts"], flow.at[index, "ssthresh_pkts"]))
    return events


def flow_of(result: Result) -> pd.DataFrame:
    """The first flow's samples whose ssthresh is known (docs/lab.md "BPF stacks": a sample can
    fall between the kernel's skipped ssthresh call and the stack's answer)."""
    flows = result.flows
    known = (flows["flow"] == 0) & flows["ssthresh_pkts"].notna()
    return flows[known].reset_index(drop=True)


@pytest.mark.parametrize(
    ("rtt_ms", "rate", "rtt_scaling"), [(100, "200Mbps", False), (40, "500Mbps", True)]
)
def test_the_increase_per_rtt_follows_alpha_of_the_time_since_the_loss(
    rtt_ms: int, rate: str, rtt_scaling: bool
):
    """At β = 0.5 (no adaptive backoff) α is α(Δ), times the RTT's scale if asked: one packet
    per RTT for the first second after the drop at 6 s, then 11.25, 22 and 33.25 at Δ = 2, 3
    and 4 s (×0.4 at 40 ms with RTT scaling). Either path holds 1,667 packets, more than the
    window reaches in the 4.5 s after the drop, so the RTT stays the propagation delay and no
    other loss comes within them."""
    cc = htcp(rtt_scaling=rtt_scaling, beta_adaptive=False, bandwidth_switch=False)
    drop_s = 6.0
    result = valid_run(
        scenario(
            flow=[{"cc": cc, "rtt": f"{rtt_ms}ms", "drop_at": [f"{drop_s}s"]}],
            bottleneck={"rate": rate, "queue": "50%bdp"},
            duration="12s",
        )
    )
    flow = flow_of(result)
    event = next(e for e in reductions(flow) if e[0] >= drop_s)
    reopened = flow[(flow["t_s"] > event[0]) & (flow["ca_state"] == OPEN)]["t_s"].iloc[0]
    after = flow[flow["t_s"] >= reopened]
    window = after[after["t_s"] <= reopened + 4.5]
    assert window["ssthresh_pkts"].nunique() == 1, "another loss came within 4.5 s of the drop"
    delta = (after["t_s"] - reopened).to_numpy()
    cwnd = after["cwnd_pkts"].to_numpy()
    scale = min(max(rtt_ms / 1e3 / RTT_REF_S, 0.1), 2.0) if rtt_scaling else 1.0
    # The increase over [lo, hi] is the mean of α over it, per RTT of that stretch.
    cases = [(0.1, 0.9, 0.30), (1.75, 2.25, 0.12), (2.75, 3.25, 0.12), (3.75, 4.25, 0.12)]
    measured = []
    for lo, hi, tolerance in cases:
        rtt_s = after[(delta >= lo) & (delta <= hi)]["srtt_ms"].mean() / 1e3
        rounds = (hi - lo) / rtt_s
        grown = float(np.interp(hi, delta, cwnd) - np.interp(lo, delta, cwnd))
        expected = float(np.mean([max(alpha(d) * scale, 1.0) for d in np.linspace(lo, hi, 51)]))
        measured.append((lo, hi, grown / rounds, expected))
        print(f"Δ {lo}–{hi} s: {grown / rounds:.2f} packets per RTT, α {expected:.2f}")
        # Tolerances: cwnd is whole packets and Δ's origin is known to one 10 ms sample; over
        # the first second that is ±2 of 8–20 packets (30%); later windows add 20–170
        # packets, where ±2 packets and the smoothed RTT's few per cent stay within 12%.
        assert abs(grown / rounds - expected) <= tolerance * expected, measured


def backoffs(cc: dict[str, Any], queue: str) -> list[tuple[float, float]]:
    """(window before, ssthresh) of every congestion event after slow start's, of one flow
    (40 ms, 100 Mb/s) whose queue adds `queue` of a BDP at most; drops at 4 s and 7 s come on
    top of the queue's own. Slow start's event is left out: there the window doubles within
    an RTT, so the sample before the event may be far below the window the kernel cut."""
    result = valid_run(
        scenario(
            flow=[{"cc": cc, "rtt": "40ms", "drop_at": ["4s", "7s"]}],
            bottleneck={"rate": "100Mbps", "queue": queue},
            duration="10s",
        )
    )
    events = [(before, ssthresh) for _, before, ssthresh in reductions(flow_of(result))][1:]
    print(
        "β:",
        [f"{before:.0f}→{ssthresh:.0f} ({ssthresh / before:.3f})" for before, ssthresh in events],
    )
    assert len(events) >= 2, events
    return events


def backed_off_by(events: list[tuple[float, float]], low: float, high: float) -> bool:
    """Whether each ssthresh is within [low, high] of the window before it. Slack: ssthresh is
    the whole part of β·cwnd (up to 1 packet), and the window is read up to 10 ms before the
    event, when congestion avoidance had it within 1% of the one cut."""
    return all(
        low * before - 1 - 0.01 * before <= ssthresh <= high * before + 0.01 * before
        for before, ssthresh in events
    )


def test_the_backoff_is_rtt_min_over_rtt_max():
    """A queue of half a BDP makes RTTmax 60 ms over RTTmin 40 ms: β = 2/3. Tolerance:
    RTTmax is the largest RTT sample, a full queue plus a few ms of the hosts' own scheduling
    (2/3 falls to 0.62 at +4 ms), and it fades by 5 % of its excess at each event: a drop may
    come before the queue fills again, 0.68 after one fade, 0.70 after three (this run has at
    most four events after slow start's)."""
    events = backoffs(htcp(bandwidth_switch=False), "50%bdp")
    assert backed_off_by(events, 0.62, 0.70), events


def test_without_a_queue_the_backoff_is_clamped_at_0_8():
    """A queue of a tenth of a BDP adds at most 4 ms to the 40 ms: RTTmin/RTTmax ≥ 0.9, which
    the clamp holds at 0.8 (it would take RTTmax ≥ 50 ms to go under)."""
    events = backoffs(htcp(bandwidth_switch=False), "10%bdp")
    assert backed_off_by(events, 0.8, 0.8), events


def test_without_adaptive_backoff_every_event_halves_the_window():
    events = backoffs(htcp(beta_adaptive=False, bandwidth_switch=False), "50%bdp")
    assert backed_off_by(events, 0.5, 0.5), events
