"""Conditions that change during a run (docs/scenario.md): how they are written, what the
simulator makes of them, and the backends that refuse them by name."""

from __future__ import annotations

from typing import Any

import pytest

from tcpeval import ScenarioError, simulate
from tcpeval.backends import lab, probe
from tcpeval.backends.model import backend as model
from tcpeval.scenario import parse_scenario, resolve

STEP_DOWN = [["0s", "10Mbps"], ["1.5s", "5Mbps"]]


def _one_flow(bottleneck: dict[str, Any], **flow: object) -> dict[str, Any]:
    """One Reno flow, RTT 20 ms, for 3 s."""
    return {
        "duration": "3s",
        "sample_interval": "50ms",
        "bottleneck": {"queue": "100%bdp"} | bottleneck,
        "flow": [{"cc": "reno", "rtt": "20ms", **flow}],
    }


def test_a_plain_rate_is_a_schedule_of_one_step() -> None:
    [link] = resolve(parse_scenario(_one_flow({"rate": "10Mbps"})))["links"]
    assert (link["rate_bps"], link["rate_changes"]) == (10_000_000, [])
    [link] = resolve(parse_scenario(_one_flow({"rate": STEP_DOWN})))["links"]
    assert link["rate_bps"] == 10_000_000
    assert link["rate_changes"] == [{"at_ns": 1_500_000_000, "rate_bps": 5_000_000}]


@pytest.mark.parametrize(
    ("rate", "message"),
    [
        ([], "at least one"),
        ([["0s", "10Mbps"], "1s"], "entry 1 must be a [time, rate] pair"),
        ([["0s", "10Mbps"], ["1s", "0bps"]], "entry 1: must be a positive rate"),
        ([["0s", "10Mbps"], ["-1s", "5Mbps"]], "entry 1: time '-1s' must not be negative"),
    ],
)
def test_a_bad_schedule_is_refused_naming_the_entry(rate: list[Any], message: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(_one_flow({"rate": rate}))
    assert raised.value.field == "bottleneck.rate"
    assert message in str(raised.value)


def test_the_link_carries_the_new_rate_after_a_step() -> None:
    links = simulate(_one_flow({"rate": STEP_DOWN})).links
    bottleneck = links[links["link"] == "bottleneck"].set_index("t_s")["tx_bytes"]
    # Reno keeps the 1-BDP queue busy (its window never halves below the BDP), so the link
    # sends at its rate: 10% covers the samples' edges.
    before = (bottleneck[1.5] - bottleneck[1.0]) * 8 / 0.5
    after = (bottleneck[3.0] - bottleneck[2.0]) * 8 / 1.0
    assert before == pytest.approx(10e6, rel=0.1)
    assert after == pytest.approx(5e6, rel=0.1)


@pytest.mark.parametrize("backend", [lab.BACKEND, model.BACKEND, probe.BACKEND])
def test_backends_that_hold_the_rate_fixed_refuse_a_schedule(backend: Any) -> None:
    problems = backend.supports(parse_scenario(_one_flow({"rate": STEP_DOWN})))
    assert [(p.field, p.value) for p in problems if p.field == "bottleneck.rate"] == [
        ("bottleneck.rate", STEP_DOWN)
    ]
