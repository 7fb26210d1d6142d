"""The fidelity map's draw stays within the lab's range and is the same for the same seed;
its spread reads a median, a p90 and the worst cases right."""

from __future__ import annotations

import random

from tcpeval import fidelity_map
from tcpeval.scenario import parse_scenario
from tcpeval.units import parse_rate

STACKS = ["reno", "cubic", "bbr"]


def drawn(seed: int, count: int) -> list[dict]:
    rng = random.Random(seed)
    return [fidelity_map.draw(rng, STACKS, 20, index) for index in range(count)]


def test_every_case_drawn_is_a_valid_scenario_within_the_range():
    for case in drawn(seed=3, count=300):
        scenario = parse_scenario(case)
        link = scenario.bottleneck
        assert link is not None
        rate_bps = parse_rate(case["bottleneck"]["rate"]).bps
        assert 9.9e6 <= rate_bps <= 1e9, case
        rtt_ms = float(case["flow"][0]["rtt"].removesuffix("ms"))
        assert 5 <= rtt_ms <= 300, case
        buffer = int(case["bottleneck"]["queue"].removesuffix("%bdp"))
        assert 10 <= buffer <= 200, case
        assert 1 <= sum(group["count"] for group in case["flow"]) <= fidelity_map.MAX_FLOWS
        assert len({group["cc"] for group in case["flow"]}) == len(case["flow"]) <= 2
        loss = case["bottleneck"].get("loss", 0)
        assert loss == 0 or 1e-4 <= loss <= 1e-2, case


def test_the_draw_covers_the_range_and_repeats_with_its_seed():
    cases = drawn(seed=5, count=300)
    assert cases == drawn(seed=5, count=300)
    assert cases != drawn(seed=6, count=300)
    share = lambda key: sum(key in c["bottleneck"] for c in cases) / len(cases)  # noqa: E731
    # Half the cases lossy, a quarter policed: within what 300 draws scatter (±4 σ).
    assert abs(share("loss") - fidelity_map.LOSSY_SHARE) < 0.12
    assert abs(share("policer") - fidelity_map.POLICED_SHARE) < 0.1
    assert {g["cc"] for c in cases for g in c["flow"]} == set(STACKS)


def test_the_spread_reads_median_p90_and_the_worst():
    measure = fidelity_map.MEASURES[0]
    cases = [
        {"name": f"case {k}", "differences": {measure.name: k / 100}} for k in range(1, 11)
    ] + [{"name": "one flow", "differences": {measure.name: None}}]
    spread = fidelity_map.spread(measure, cases, worst=2)
    assert spread is not None
    assert spread.count == 10
    assert spread.median == 0.055
    assert spread.p90 == 0.09
    assert spread.worst == [(0.10, "case 10"), (0.09, "case 9")]
