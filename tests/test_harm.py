"""Harm in rate, delay and loss (Ware et al., HotNets 2019) and starvation
(docs/methodology.md §3.13): the formulas, and BBR v1's known harm to CUBIC in a shallow buffer
on the simulator."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcpeval import backends
from tcpeval.metrics import harm, starved_s
from tcpeval.scenario import parse_scenario
from tcpeval.suites.measures import harm as harm_measure


def test_harm_is_the_victims_loss_as_a_share_of_what_it_had():
    assert harm(50.0, 25.0, "higher") == pytest.approx(0.5)
    # Less is better: an RTT doubled from 40 to 80 ms is a harm of (80 − 40) / 80.
    assert harm(40.0, 80.0, "lower") == pytest.approx(0.5)
    assert harm(1e-3, 4e-3, "lower") == pytest.approx(0.75)
    # Better off beside the new stack: negative.
    assert harm(40.0, 60.0, "higher") < 0
    assert harm(40.0, 20.0, "lower") < 0
    with pytest.raises(ValueError, match="positive"):
        harm(0.0, 1.0, "higher")


def test_starvation_is_the_longest_run_of_bins_under_a_tenth_of_an_equal_share():
    # 1 Mb/s per second for 20 s, except nothing from 5 s to 12 s (7 bins).
    t_s = np.arange(1, 21, dtype=float)
    rate_mbps = np.where((t_s > 5) & (t_s <= 12), 0.0, 1.0)
    flows = pd.DataFrame({"t_s": t_s, "flow": 0, "delivered_bytes": np.cumsum(rate_mbps) * 1e6 / 8})
    assert starved_s(flows, 0, equal_share_mbps=1.0, start_s=0.0, end_s=20.0) == 7.0
    assert starved_s(flows, 0, equal_share_mbps=1.0, start_s=13.0, end_s=20.0) == 0.0


def _two_flows(first_cc: str) -> dict[str, float]:
    """One flow of `first_cc` and one CUBIC flow through half a BDP of drop-tail queue at
    100 Mb/s and 40 ms: the CUBIC flow's figures over 10–30 s."""
    scenario = parse_scenario(
        {
            "name": f"harm-{first_cc}",
            "duration": "30s",
            "measure": "10s..",
            "seed": 1,
            "bottleneck": {"rate": "100Mbps", "queue": "50%bdp"},
            "flow": [{"cc": first_cc, "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}],
        }
    )
    return harm_measure(backends.run(scenario, backends.get("sim")))


def test_bbr_v1_harms_cubic_in_a_shallow_buffer():
    # Known result (Cardwell et al.'s own reports; Ware et al. 2019; Hock et al. 2017): BBR v1
    # takes most of a shallow buffer's link from CUBIC. Beside CUBIC the flow has about half
    # of 100 Mb/s; beside BBR far less — a rate harm above 0.5 is what the suite's rule calls
    # harmful, and the expected outcome here.
    own_kind, beside_bbr = _two_flows("cubic"), _two_flows("bbr")
    assert harm(own_kind["classic_mbps"], beside_bbr["classic_mbps"], "higher") > 0.5
    # Its losses rise too: BBR v1 ignores loss and keeps the shallow queue overflowing.
    retransmitted = own_kind["classic_retransmitted"], beside_bbr["classic_retransmitted"]
    assert harm(*retransmitted, "lower") > 0
    # Beside its own kind no CUBIC flow is starved for a whole second.
    assert own_kind["classic_starved_s"] == 0.0
