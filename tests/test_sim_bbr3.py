"""bbr3 (BBRv3, draft-ietf-ccwg-bbr) on one simulated flow: the goals of docs/bbr3.md.

Each case is a 60 s run measured over its second half (about 0.1–0.3 s of wall time each at
100 Mb/s). Goals the implementation misses are marked `xfail(strict=True)` with the measured
figure and its reason, so a change that meets them shows.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import pytest

from tcpeval import simulate


@cache  # a run is a pure function of its scenario: the loss-free runs serve several tests
def one_flow(
    cc: str, rtt: str, *, queue: str = "100%bdp", loss: float = 0.0, seed: int = 1
) -> dict[str, Any]:
    return simulate(
        {
            "name": f"bbr3-{cc}-{rtt}",
            "duration": "60s",
            "measure": "second half",
            "seed": seed,
            "bottleneck": {"rate": "100Mbps", "queue": queue, "loss": loss},
            "flow": [{"cc": cc, "rtt": rtt}],
        }
    ).summary


@pytest.mark.parametrize("rtt", ["10ms", "100ms"])
def test_one_flow_fills_a_clean_path(rtt: str) -> None:
    # The goal: at least 95 % utilisation (docs/bbr3.md; 0.982 and 0.962 measured).
    assert one_flow("bbr3", rtt)["bottleneck"]["utilization"] >= 0.95


@pytest.mark.xfail(
    strict=True,
    reason="0.935 at 300 ms: ProbeRTT every 5 s holds half the BDP for 200 ms and a 300 ms "
    "round, about 5 % of the time (BBR v1 loses the same, 0.933)",
)
def test_one_flow_fills_a_clean_300ms_path() -> None:
    assert one_flow("bbr3", "300ms")["bottleneck"]["utilization"] >= 0.95


@pytest.mark.xfail(
    strict=True,
    reason="82 against v1's 30 packets: without a loss to set inflight_hi, ProbeBW_UP lasts "
    "until the delivery rate plateaus for 3 rounds at a cwnd gain of 2.25 (§5.3.3.7)",
)
def test_the_queue_is_below_bbr_v1s() -> None:
    v3, v1 = (one_flow(cc, "100ms")["bottleneck"]["mean_queue_pkts"] for cc in ("bbr3", "bbr"))
    assert v3 < v1


def goodput_share(loss: float) -> float:
    """bbr3's goodput at `loss` as a share of its loss-free goodput, 100 Mb/s, 100 ms."""
    base = one_flow("bbr3", "100ms")["flows"][0]["goodput_mbps"]
    return one_flow("bbr3", "100ms", loss=loss)["flows"][0]["goodput_mbps"] / base


@pytest.mark.parametrize("loss", [0.005, 0.01])
def test_random_loss_below_the_threshold_costs_under_ten_percent(loss: float) -> None:
    # The draft tolerates 2 % loss per round (§2.8 LossThresh): within 10 % of loss-free.
    assert goodput_share(loss) > 0.9


@pytest.mark.xfail(
    strict=True,
    reason="86 % at 1.5 %: rounds whose losses pass 2 % by chance (12 expected, 17 over) "
    "set inflight_hi low, and every lossy round outside a probe cuts bw_lo",
)
def test_random_loss_just_below_the_threshold_costs_under_ten_percent() -> None:
    assert goodput_share(0.015) > 0.9


def test_random_loss_above_the_threshold_brings_goodput_down() -> None:
    # Above 2 % every probe ends at once and the short-term model is cut each round: well
    # below the loss-free figure (25 % of it measured at 3 %); half is a wide margin.
    assert goodput_share(0.03) < 0.5


def test_a_shallow_buffer_retransmits_less_than_bbr_v1() -> None:
    # Google's IETF 117 report: fewer retransmissions than v1. 10 % of the BDP at 100 ms:
    # 0.0064 against 0.0246 per packet sent measured (ratio 0.26).
    v3, v1 = (one_flow(cc, "100ms", queue="10%bdp") for cc in ("bbr3", "bbr"))
    assert v3["flows"][0]["retransmits"] < v1["flows"][0]["retransmits"]


def test_the_seed_draws_the_probe_waits_and_nothing_else_varies() -> None:
    first, again, other = (one_flow("bbr3", "100ms", seed=s) for s in (1, 1, 2))
    assert first["flows"] == again["flows"]
    assert first["flows"] != other["flows"], "a new seed draws other probe waits"
