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


def _two_paths(**flow: object) -> dict[str, Any]:
    """Links a (5 ms) and b (25 ms); one Reno flow of RTT 20 ms on a, 10 packets of window."""
    return {
        "duration": "3s",
        "sample_interval": "10ms",
        "link": [
            {"name": "a", "rate": "10Mbps", "delay": "5ms"},
            {"name": "b", "rate": "10Mbps", "delay": "25ms"},
        ],
        "flow": [{"cc": "reno", "rtt": "20ms", "route": ["a"], "window": "10pkt", **flow}],
    }


def test_a_route_change_moves_the_rtt_to_the_new_paths() -> None:
    # The private 10 ms stays: 10 + 2 × 25 = 60 ms on b. 10 packets stay below both BDPs, so
    # srtt is the path's plus 1.2 ms of transmission at 10 Mb/s. With delayed ACKs that is 5
    # RTT samples a round trip, and srtt's 1/8 gain (RFC 6298 §2.3) leaves (7/8)^25 of the
    # 40 ms step, under 2 ms, after 5 round trips on the new path: 8 (0.5 s) leave room for
    # the round trip that straddles the change.
    flows = simulate(_two_paths(route_changes=[["1s", ["b"]]])).flows.set_index("t_s")
    assert flows["srtt_ms"][0.9] == pytest.approx(21.2, abs=2)
    assert flows["srtt_ms"][1.5] == pytest.approx(61.2, abs=2)


@pytest.mark.parametrize(
    ("changes", "field", "value"),
    [
        ([["1s", ["c"]]], "flow[0].route_changes[0].route[0]", "c"),
        ([["1s", ["b", "b"]]], "flow[0].route_changes[0].route[1]", "b"),
        ([["3s", ["b"]]], "flow[0].route_changes[0]", "3s"),
        ([["1s", "b"]], "flow[0].route_changes", [["1s", "b"]]),
    ],
)
def test_a_bad_route_change_is_refused_by_name(changes: Any, field: str, value: Any) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(_two_paths(route_changes=changes))
    assert (raised.value.field, raised.value.value) == (field, value)


@pytest.mark.parametrize("backend", [lab.BACKEND, model.BACKEND, probe.BACKEND])
def test_backends_without_routes_refuse_a_route_change(backend: Any) -> None:
    data = _one_flow({"rate": "10Mbps"}, route_changes=[["1s", ["bottleneck"]]])
    problems = backend.supports(parse_scenario(data))
    assert "flow[0].route_changes" in [p.field for p in problems]


def test_reordering_resolves_to_a_share_and_a_delay() -> None:
    data = _one_flow({"rate": "10Mbps", "reorder": {"share": 0.01, "delay": "2ms"}})
    [link] = resolve(parse_scenario(data))["links"]
    assert link["reorder"] == {"share": 0.01, "delay_ns": 2_000_000}
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(_one_flow({"rate": "10Mbps", "reorder": {"share": 0, "delay": "2ms"}}))
    assert (raised.value.field, raised.value.value) == ("bottleneck.reorder.share", 0)


def test_reordering_without_loss_costs_the_linux_host_no_window() -> None:
    # 0.5% of the packets 5 ms late on 10 Mb/s, 40 ms RTT: a 40-packet window sends one a
    # millisecond, so 5 overtake each, and the 100%-BDP queue holds the 7 above the BDP:
    # nothing is lost. The linux host undoes its one spurious recovery, then RACK waits 10 ms
    # (a quarter of the minimum RTT); the rfc host halves at most hold-backs (about 12).
    flow = {"rtt": "40ms", "window": "40pkt"}
    data = _one_flow({"rate": "10Mbps", "reorder": {"share": 0.005, "delay": "5ms"}}, **flow)
    linux = simulate(data).summary["flows"][0]
    rfc = simulate(data | {"flow": [data["flow"][0] | {"host": "rfc"}]}).summary["flows"][0]
    assert linux["congestion_events"] <= 1
    assert rfc["congestion_events"] >= 3


def test_an_outage_resolves_to_periods_in_ns() -> None:
    data = _one_flow({"rate": "10Mbps", "outage": [["1s", "1.5s"]], "ack_outage": [["2s", "3s"]]})
    [link] = resolve(parse_scenario(data))["links"]
    assert link["outages_ns"] == [[1_000_000_000, 1_500_000_000]]
    assert link["reverse_outages_ns"] == [[2_000_000_000, 3_000_000_000]]
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(_one_flow({"rate": "10Mbps", "outage": [["1s", "1s"]]}))
    assert raised.value.field == "bottleneck.outage"
    assert "entry 0: end '1s' must come after its start" in str(raised.value)


def test_losing_all_feedback_ends_in_a_timeout_and_a_window_of_one() -> None:
    # The ACK path down from 1 s to 2 s: RFC 6298 §5.5 timeouts (summary `timeouts`), and
    # RFC 5681 §3.1's loss window, 1 segment, in the samples during the outage.
    data = _one_flow({"rate": "10Mbps", "ack_outage": [["1s", "2s"]]}, host="rfc")
    result = simulate(data)
    assert result.summary["flows"][0]["timeouts"] >= 2
    cwnd = result.flows.set_index("t_s")["cwnd_pkts"]
    assert cwnd[1.5] == 1.0
    assert cwnd[3.0] > 1.0


REFUSALS = [
    (backend, key)
    for backend in (lab.BACKEND, model.BACKEND, probe.BACKEND)
    for key in ("outage", "ack_outage", "reorder")
    if (backend, key) != (lab.BACKEND, "reorder")  # the lab's emulator reorders
]


@pytest.mark.parametrize(("backend", "key"), REFUSALS)
def test_backends_refuse_outages_and_reordering(backend: Any, key: str) -> None:
    problems = backend.supports(parse_scenario(_one_flow({"rate": "10Mbps", key: _value(key)})))
    assert f"bottleneck.{key}" in [p.field for p in problems]


def test_the_lab_takes_reordering() -> None:
    reorder = {"rate": "10Mbps", "reorder": _value("reorder")}
    problems = lab.BACKEND.supports(parse_scenario(_one_flow(reorder)))
    assert "bottleneck.reorder" not in [p.field for p in problems]


def _value(key: str) -> Any:
    return {"share": 0.01, "delay": "2ms"} if key == "reorder" else [["1s", "2s"]]
