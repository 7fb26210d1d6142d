"""The ECN and AQM keys of a scenario: defaults by stack, one error naming the key for what a
stack or a queue cannot do, and every discipline's resolved table accepted by the core (the
one link dialect, crates/netem/src/spec.rs)."""

from __future__ import annotations

from typing import Any

import pytest

import tcpeval
from tcpeval.scenario import ScenarioError, parse_scenario, resolve


def scenario(aqm: Any = "droptail", **flow: Any) -> dict[str, Any]:
    return {
        "name": "ecn",
        "duration": "2s",
        "bottleneck": {"rate": "10Mbps", "queue": "100pkt", "aqm": aqm},
        "flow": [{"cc": "reno", "rtt": "20ms"} | flow],
    }


@pytest.mark.parametrize(
    ("cc", "ecn"), [("reno", "off"), ("cubic", "off"), ("dctcp", "classic"), ("prague", "l4s")]
)
def test_a_flow_negotiates_its_stacks_default_ecn(cc: str, ecn: str) -> None:
    assert resolve(parse_scenario(scenario(cc=cc)))["flows"][0]["ecn"] == ecn


@pytest.mark.parametrize(
    ("cc", "ecn"), [("cubic", "l4s"), ("bbr", "classic"), ("dctcp", "off"), ("prague", "classic")]
)
def test_an_ecn_setting_a_stack_cannot_use_is_refused_by_name(cc: str, ecn: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(scenario(cc=cc, ecn=ecn))
    assert (raised.value.field, raised.value.value) == ("flow[0].ecn", ecn)
    assert cc in str(raised.value)


def test_a_step_threshold_at_or_beyond_the_buffer_is_refused_by_name() -> None:
    with pytest.raises(ScenarioError) as raised:
        resolve(parse_scenario(scenario({"name": "step", "threshold": "100pkt"})))
    assert (raised.value.field, raised.value.value) == ("bottleneck.aqm.threshold", "100pkt")


def test_the_models_refuse_a_queue_they_have_no_formula_for() -> None:
    with pytest.raises(ScenarioError) as raised:
        tcpeval.run(scenario("dualpi2"), "model")
    assert raised.value.field == "bottleneck.aqm"
    assert "(backend 'model')" in str(raised.value)


@pytest.mark.parametrize(
    "aqm",
    [
        {"name": "red", "ecn": True},
        {"name": "codel", "ecn": True, "ce_threshold": "1ms"},
        {"name": "pie", "ecn": True},
        {"name": "step", "threshold": "20pkt"},
        "fq_codel",
        "dualpi2",
    ],
)
def test_every_discipline_resolves_into_the_cores_dialect_and_marks(aqm: Any) -> None:
    # Two flows, classic ECN, 2 s at 10 Mb/s into a 100-packet buffer: every discipline
    # signals at least once, and marks the ECN-capable packets (FQ-CoDel and the step
    # marker by default; the others as asked).
    data = scenario(aqm, cc="reno", ecn="classic", count=2)
    result = tcpeval.simulate(data)
    assert result.summary["bottleneck"]["aqm_marks"] > 0
    assert sum(f["ce_marks"] for f in result.summary["flows"]) > 0
    assert result.links["marks"].iloc[-1] == result.summary["bottleneck"]["aqm_marks"]
    # The series end where the summary does: marks, echoes and reductions by cause.
    last = result.flows.groupby("flow").last()
    for flow in result.summary["flows"]:
        row = last.loc[flow["id"]]
        for key in ("ce_marks", "ece_acks", "congestion_events", "ecn_reductions"):
            assert row[key] == flow[key], key
