"""Short flows' slowdown against an ideal transfer (docs/methodology.md §3.14), on the
simulator: never below 1, the ideal itself for a flow that fits in the initial window, and
queueing behind a bulk flow makes it worse."""

from __future__ import annotations

import pytest

from tcpeval import backends
from tcpeval.metrics import slowdowns
from tcpeval.scenario import parse_scenario
from tcpeval.suites.measures import short_flows

RATE_BPS = 100e6
# Ten segments of 1448 B: Linux's initial window (RFC 6928), the simulator's too.
INITIAL_WINDOW_BYTES = 10 * 1448


def _web(bulk: bool) -> dict:
    flows = [{"cc": "cubic", "rtt": "40ms"}] if bulk else []
    return {
        "name": "short-flows",
        "duration": "30s",
        "measure": "5s..",
        "seed": 3,
        "bottleneck": {"rate": "100Mbps", "queue": "100%bdp"},
        **({"flow": flows} if flows else {}),
        "web": [{"cc": "cubic", "rtt": "40ms", "arrival_rate": 5, "mean_size": "50KB"}],
    }


def _run(bulk: bool):
    return backends.run(parse_scenario(_web(bulk)), backends.get("sim"))


def test_no_flow_beats_the_ideal_and_one_initial_window_can_meet_it():
    result = _run(bulk=False)
    web = [f for f in result.summary["flows"] if f["completion_s"] is not None]
    found = slowdowns(web, RATE_BPS)
    assert len(found) > 50
    # The ideal is a lower bound: an unlimited window on an empty path.
    assert found.min() >= 1.0
    # Within the initial window a flow is sent at once: the ideal, exactly when its last
    # segment is ACKed at once; an odd last segment waits for the delayed-ACK timer (40 ms,
    # one RTT here: RFC 1122 §4.2.3.2), never more.
    within = [f for f in web if f["bytes_delivered"] <= INITIAL_WINDOW_BYTES]
    ratios = slowdowns(within, RATE_BPS)
    assert ratios.min() == pytest.approx(1.0, abs=0.02)
    assert ratios.max() <= 2.0


def test_a_bulk_flow_beside_them_slows_the_short_flows_down():
    alone, beside_bulk = short_flows(_run(bulk=False)), short_flows(_run(bulk=True))
    assert alone["short_unfinished"] == 0.0
    # CUBIC's standing queue (up to a BDP: 40 ms) delays every short flow's round trips.
    assert beside_bulk["short_slowdown_mean"] > 1.3 * alone["short_slowdown_mean"]
