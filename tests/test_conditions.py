"""Network and host conditions: the scenario keys and their resolution into the resolved
scenario (docs/contract.md, "Conditions"). Pure Python: nothing here runs the simulator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from helpers import small_scenario
from tcpeval import simulate
from tcpeval.scenario import ScenarioError, describe, parse_scenario, resolution, resolve


def _resolve(data: dict[str, Any]) -> dict[str, Any]:
    return resolve(parse_scenario(data))


def _parking_lot() -> dict[str, Any]:
    """Three 100 Mb/s links of 5 ms; flows crossing one, two and three of them."""
    return {
        "duration": "3s",
        "link": [
            {"name": name, "rate": "100Mbps", "delay": "5ms", "queue": "100pkt"}
            for name in ("a", "b", "c")
        ],
        "flow": [
            {"cc": "reno", "rtt": "40ms", "route": ["a", "b", "c"]},
            {"cc": "reno", "rtt": "20ms", "route": ["b", "c"]},
            {"cc": "reno", "rtt": "10ms", "route": ["c"]},
        ],
    }


# Links


def test_links_are_declared_once_and_routes_name_them() -> None:
    resolved = _resolve(_parking_lot())
    assert [link["name"] for link in resolved["links"]] == ["a", "b", "c"]
    assert [link["delay_ns"] for link in resolved["links"]] == [5_000_000] * 3
    assert [flow["route"] for flow in resolved["flows"]] == [["a", "b", "c"], ["b", "c"], ["c"]]


def test_without_a_route_flows_cross_the_first_link() -> None:
    data = _parking_lot()
    del data["flow"][2]["route"]
    assert _resolve(data)["flows"][2]["route"] == ["a"]
    data = small_scenario() | {"link": [{"name": "wan", "rate": "1Gbps", "queue": "10pkt"}]}
    assert _resolve(data)["flows"][0]["route"] == ["bottleneck"]
    assert [link["name"] for link in _resolve(data)["links"]] == ["bottleneck", "wan"]


def test_queue_share_of_bdp_uses_the_flows_crossing_each_link() -> None:
    data = _parking_lot()
    for link in data["link"]:
        link["queue"] = "100%bdp"
    # 100 Mb/s × 40 ms / 12 000 bits = 333 packets on a; only the 40 and 20 ms flows cross b.
    # Counted in bytes (the default for %bdp): the bytes of that many 1500-byte packets.
    queues = [link["queue_bytes"] for link in _resolve(data)["links"]]
    assert queues == [333 * 1500] * 3
    data["flow"][0]["route"] = ["a", "c"]
    queues = [link["queue_bytes"] for link in _resolve(data)["links"]]
    assert queues[1] == 167 * 1500  # 20 ms is the largest RTT crossing b now


def test_window_share_of_bdp_is_at_the_slowest_link_of_the_route() -> None:
    data = _parking_lot()
    data["link"][1]["rate"] = "10Mbps"
    data["flow"][0]["window"] = "100%bdp"
    # 10 Mb/s × 40 ms / 12 000 bits = 33 packets
    assert _resolve(data)["flows"][0]["window_pkts"] == 33


@pytest.mark.parametrize(
    ("aqm", "resolved"),
    [
        ("droptail", {"name": "droptail"}),
        (
            "red",  # thresholds at 1/4 and 3/4 of the 100-packet queue
            {
                "name": "red",
                "min_th_pkts": 25.0,
                "max_th_pkts": 75.0,
                "max_p": 0.1,
                "weight": 0.002,
                "gentle": True,
                "ecn": False,
                "harddrop": False,
            },
        ),
        (
            {"name": "red", "min_th": "10pkt", "max_th": "30KB", "max_p": 0.2, "gentle": False},
            {
                "name": "red",
                "min_th_pkts": 10.0,
                "max_th_pkts": 20.0,  # 30 kB in packets of 1448 + 52 bytes
                "max_p": 0.2,
                "weight": 0.002,
                "gentle": False,
                "ecn": False,
                "harddrop": False,
            },
        ),
        (
            "codel",
            {
                "name": "codel",
                "target_ns": 5_000_000,
                "interval_ns": 100_000_000,
                "ecn": False,
                "ce_threshold_ns": None,
            },
        ),
        (
            {"name": "codel", "target": "2ms", "interval": "50ms", "ecn": True},
            {
                "name": "codel",
                "target_ns": 2_000_000,
                "interval_ns": 50_000_000,
                "ecn": True,
                "ce_threshold_ns": None,
            },
        ),
    ],
)
def test_aqm_forms(aqm: object, resolved: dict[str, Any]) -> None:
    data = small_scenario()
    data["bottleneck"] |= {"queue": "100pkt", "aqm": aqm}
    got = _resolve(data)["links"][0]["aqm"]
    assert got == pytest.approx(resolved)


def test_red_thresholds_in_packets_are_in_the_saved_scenario() -> None:
    data = small_scenario()
    data["bottleneck"] |= {"queue": "100pkt", "aqm": "red"}
    aqm = describe(parse_scenario(data))["bottleneck"]["aqm"]
    assert (aqm["min_th"], aqm["min_th_pkts"], aqm["max_th_pkts"]) == (None, 25.0, 75.0)


@pytest.mark.parametrize(
    ("loss", "resolved"),
    [
        (0.0, {"model": "none"}),
        (0, {"model": "none"}),
        (1e-3, {"model": "bernoulli", "p": 1e-3}),
        (
            {"model": "gilbert_elliott", "p": 0.01, "r": 0.3},
            {"model": "gilbert_elliott", "p": 0.01, "r": 0.3, "loss_good": 0.0, "loss_bad": 1.0},
        ),
        (
            {"model": "gilbert_elliott", "p": 0.01, "r": 0.3, "loss_good": 1e-4, "loss_bad": 0.5},
            {"model": "gilbert_elliott", "p": 0.01, "r": 0.3, "loss_good": 1e-4, "loss_bad": 0.5},
        ),
    ],
)
def test_loss_forms_on_data_and_ack_paths(loss: object, resolved: dict[str, Any]) -> None:
    data = small_scenario()
    data["bottleneck"] |= {"loss": loss, "ack_loss": loss}
    link = _resolve(data)["links"][0]
    assert (link["loss"], link["reverse_loss"]) == (resolved, resolved)


@pytest.mark.parametrize(
    ("policer", "resolved"),
    [
        (None, None),
        ({"rate": "4Mbps", "burst": "64KB"}, {"rate_bps": 4_000_000, "burst_bytes": 64_000}),
        # 10 ms at 8 Mb/s is 10 KB, below 10 packets of 1500 bytes: the floor holds.
        ({"rate": "8Mbps"}, {"rate_bps": 8_000_000, "burst_bytes": 15_000}),
        ({"rate": "10Mbps"}, {"rate_bps": 10_000_000, "burst_bytes": 15_000}),
    ],
)
def test_policer_forms_and_burst_default(policer: object, resolved: object) -> None:
    data = small_scenario()  # a 10 Mb/s bottleneck
    if policer is not None:
        data["bottleneck"]["policer"] = policer
    assert _resolve(data)["links"][0]["policer"] == resolved


def test_the_burst_default_is_ten_ms_at_the_policed_rate_and_described() -> None:
    data = small_scenario()
    data["bottleneck"] |= {"rate": "1Gbps", "policer": {"rate": "200Mbps"}}
    scenario = parse_scenario(data)
    assert resolve(scenario)["links"][0]["policer"]["burst_bytes"] == 250_000
    described = describe(scenario)["bottleneck"]["policer"]
    assert described == {"rate": "200Mbps", "burst": None, "burst_bytes": 250_000}


# Flows


def test_flow_conditions_resolve_to_base_units() -> None:
    data = small_scenario()
    data["flow"][0] |= {
        "direction": "reverse",
        "drop_every": 100,
        "pacing": "10us",
        "source_rate": "50Mbps",
        "sink_rate": "160Mbps",
        "mss": "8948B",
    }
    flow = _resolve(data)["flows"][0]
    assert (flow["reverse"], flow["drop_every"], flow["mss_bytes"]) == (True, 100, 8948)
    assert (flow["pacing_gap_ns"], flow["pacing_rate_bps"]) == (10_000, None)
    assert (flow["source_rate_bps"], flow["sink_rate_bps"]) == (50_000_000, 160_000_000)


@pytest.mark.parametrize(
    ("pacing", "gap_ns", "rate_bps"),
    [("0us", 0, None), ("20us", 20_000, None), ("500Mbps", None, 500_000_000)],
)
def test_pacing_is_a_gap_or_a_rate(pacing: str, gap_ns: int | None, rate_bps: int | None) -> None:
    data = small_scenario()
    data["flow"][0]["pacing"] = pacing
    flow = _resolve(data)["flows"][0]
    assert (flow["pacing_gap_ns"], flow["pacing_rate_bps"]) == (gap_ns, rate_bps)


def test_streams_stripe_each_transfer_over_its_own_flows() -> None:
    data = small_scenario()
    data["flow"][0] |= {"size": "1MB", "streams": 3}  # count = 2
    result = resolution(parse_scenario(data))
    sizes = [flow["size_bytes"] for flow in result.resolved["flows"]]
    assert sizes == [333_334, 333_333, 333_333] * 2
    assert [(t.id, t.group, t.flows, t.bytes) for t in result.transfers] == [
        (0, 0, [0, 1, 2], 1_000_000),
        (1, 0, [3, 4, 5], 1_000_000),
    ]


def _starts_ns(seed: int, **group: object) -> list[int]:
    data = small_scenario() | {"seed": seed}
    data["flow"][0] |= group
    return [flow["start_ns"] for flow in _resolve(data)["flows"]]


def test_start_jitter_draws_each_connection_start_from_the_seed() -> None:
    jittered = {"start": "1s", "start_jitter": "500ms", "count": 4}
    starts = _starts_ns(7, **jittered)
    assert all(1_000_000_000 <= start < 1_500_000_000 for start in starts)
    assert len(set(starts)) == 4  # each connection its own start
    assert _starts_ns(7, **jittered) == starts  # the seed decides
    assert _starts_ns(8, **jittered) != starts  # another repeat, other starts
    assert _starts_ns(7, start="1s", count=4) == [1_000_000_000] * 4  # no jitter, no draw
    streams = _starts_ns(7, start_jitter="1s", count=2, size="1MB", streams=3)
    assert len(set(streams)) == 6  # every stream of every transfer


def test_repeats_of_a_jittered_dumbbell_differ_and_a_seed_repeats_exactly() -> None:
    data = small_scenario()
    data["flow"][0]["start_jitter"] = "100ms"

    def goodputs(seed: int) -> list[float]:
        return [f["goodput_mbps"] for f in simulate(data | {"seed": seed}).summary["flows"]]

    assert goodputs(1) != goodputs(2)
    assert goodputs(1) == goodputs(1)


def test_a_thousand_streams() -> None:
    data = small_scenario()
    data["flow"][0] |= {"size": "1GB", "streams": 1000, "count": 1}
    flows = _resolve(data)["flows"]
    assert len(flows) == 1000
    assert sum(flow["size_bytes"] for flow in flows) == 10**9


# Background sources, web traffic, request-response


def test_cbr_and_onoff_sources() -> None:
    data = small_scenario()
    data["cbr"] = [{"rate": "2Mbps", "start": "1s", "stop": "2s"}]
    data["onoff"] = [
        {"rate": "1Mbps", "count": 3, "shape": 1.4, "mean_on": "50ms", "direction": "reverse"}
    ]
    sources = _resolve(data)["sources"]
    assert sources[0] == {
        "kind": "cbr",
        "route": ["bottleneck"],
        "reverse": False,
        "rate_bps": 2_000_000,
        "packet_bytes": 1500,
        "start_ns": 1_000_000_000,
        "stop_ns": 2_000_000_000,
    }
    assert (
        sources[1:]
        == [
            {
                "kind": "onoff",
                "route": ["bottleneck"],
                "reverse": True,
                "rate_bps": 1_000_000,
                "packet_bytes": 1500,
                "start_ns": 0,
                "stop_ns": None,
                "shape": 1.4,
                "mean_on_ns": 50_000_000,
                "mean_off_ns": 400_000_000,
            }
        ]
        * 3
    )


def _web(**keys: object) -> dict[str, Any]:
    data = small_scenario() | {"duration": "100s"}
    data["web"] = [{"cc": "reno", "rtt": "30ms", "arrival_rate": 20.0, "mean_size": "50KB"}]
    data["web"][0] |= keys
    return data


def test_web_flows_arrive_as_poisson_with_pareto_sizes() -> None:
    flows = _resolve(_web())["flows"][2:]  # after the two [[flow]] flows
    starts = np.array([flow["start_ns"] for flow in flows]) / 1e9
    sizes = np.array([flow["size_bytes"] for flow in flows])
    assert len(flows) == pytest.approx(2000, rel=0.1)  # 20 per second for 100 s
    assert (np.diff(starts) >= 0).all()
    gaps = np.diff(starts)
    assert gaps.mean() == pytest.approx(0.05, rel=0.1)
    assert gaps.std() == pytest.approx(gaps.mean(), rel=0.15)  # exponential: std = mean
    # Pareto with shape 1.2: scale = 50 kB × 0.2/1.2, never below it, heavy-tailed above.
    assert sizes.min() >= 50_000 / 6
    assert np.median(sizes) == pytest.approx(50_000 / 6 * 2 ** (1 / 1.2), rel=0.1)
    assert {flow["group"] for flow in flows} == {1}
    assert {(flow["rtt_ns"], flow["cc"]["name"]) for flow in flows} == {(30_000_000, "reno")}


def test_web_draws_are_deterministic_and_follow_the_seed() -> None:
    first, again = _resolve(_web()), _resolve(_web())
    assert first["flows"] == again["flows"]
    other = _resolve(_web() | {"seed": 2})
    assert other["flows"] != first["flows"]


def test_web_arrivals_stay_in_their_window() -> None:
    flows = _resolve(_web(start="10s", stop="20s"))["flows"][2:]
    starts = [flow["start_ns"] for flow in flows]
    assert min(starts) >= 10 * 10**9
    assert max(starts) < 20 * 10**9


def test_request_response_is_two_flows_and_an_exchange() -> None:
    data = small_scenario()
    data["reqresp"] = [
        {"cc": "cubic", "rtt": "50ms", "request": "64B", "response": "2MB", "think": "10ms"}
    ]
    resolved = _resolve(data)
    request, response = resolved["flows"][2:]
    assert (request["reverse"], response["reverse"]) == (True, False)
    assert (request["group"], response["group"]) == (1, 1)
    assert (request["size_bytes"], response["size_bytes"]) == (None, None)
    assert resolved["exchanges"] == [
        {
            "request_flow": 2,
            "response_flow": 3,
            "request_bytes": 64,
            "response_bytes": 2_000_000,
            "think_ns": 10_000_000,
            "count": 10,
        }
    ]


def test_pcap_names_the_captured_link() -> None:
    assert _resolve(small_scenario() | {"pcap": "bottleneck"})["pcap_link"] == "bottleneck"


def test_origins_point_back_at_the_users_tables() -> None:
    data = _parking_lot()
    data["cbr"] = [{"rate": "1Mbps", "route": ["a"]}]
    data["reqresp"] = [{"cc": "reno", "rtt": "40ms", "route": ["a", "b"]}]
    origins = resolution(parse_scenario(data)).origins
    assert origins["flows"] == ["flow[0]", "flow[1]", "flow[2]", "reqresp[0]", "reqresp[0]"]
    assert origins["links"] == ["link[0]", "link[1]", "link[2]"]
    assert (origins["sources"], origins["exchanges"]) == (["cbr[0]"], ["reqresp[0]"])


# Bad input: one ScenarioError naming the field and the value.


def _with(table: str, entry: dict[str, Any]) -> Any:
    return lambda d: d.update({table: [entry]})


BAD = [
    (
        "stop before the latest start",
        lambda d: d["flow"][0].update(start="1s", start_jitter="1s", stop="1.5s"),
        "flow[0].stop",
        "1.5s",
        "must be later than start (1s + 1s)",
    ),
    (
        "unknown route link",
        lambda d: d["flow"][0].update(route=["wan"]),
        "flow[0].route[0]",
        "wan",
        "not a declared link",
    ),
    (
        "route twice",
        lambda d: d["flow"][0].update(route=["bottleneck", "bottleneck"]),
        "flow[0].route[1]",
        "bottleneck",
        "twice",
    ),
    ("empty route", lambda d: d["flow"][0].update(route=[]), "flow[0].route", None, "at least 1"),
    (
        "duplicate link",
        _with("link", {"name": "bottleneck", "rate": "1Gbps"}),
        "link[0].name",
        "bottleneck",
        "declared twice",
    ),
    (
        "rtt below delays",
        lambda d: d["bottleneck"].update(delay="15ms"),
        "flow[0].rtt",
        "20ms",
        "2 × 15ms",
    ),
    (
        "pacing neither",
        lambda d: d["flow"][0].update(pacing="10"),
        "flow[0].pacing",
        "10",
        "neither a time",
    ),
    (
        "pacing negative",
        lambda d: d["flow"][0].update(pacing="-1us"),
        "flow[0].pacing",
        "-1us",
        "negative",
    ),
    (
        "drop_every 1",
        lambda d: d["flow"][0].update(drop_every=1),
        "flow[0].drop_every",
        1,
        "greater than or equal to 2",
    ),
    (
        "streams 1001",
        lambda d: d["flow"][0].update(streams=1001, size="1GB"),
        "flow[0].streams",
        1001,
        "less than or equal to 1000",
    ),
    (
        "streams without size",
        lambda d: d["flow"][0].update(streams=4),
        "flow[0].streams",
        4,
        "needs size",
    ),
    (
        "direction",
        lambda d: d["flow"][0].update(direction="up"),
        "flow[0].direction",
        "up",
        "forward",
    ),
    (
        "source rate",
        lambda d: d["flow"][0].update(source_rate="fast"),
        "flow[0].source_rate",
        "fast",
        "unit",
    ),
    ("no links", lambda d: d.pop("bottleneck"), "bottleneck", None, "[[link]]"),
    ("aqm", lambda d: d["bottleneck"].update(aqm="sfq"), "bottleneck.aqm", "sfq", "codel"),
    (
        "red max_p",
        lambda d: d["bottleneck"].update(aqm={"name": "red", "max_p": 0}),
        "bottleneck.aqm.max_p",
        0,
        "(0, 1]",
    ),
    (
        "red thresholds",
        lambda d: d["bottleneck"].update(aqm={"name": "red", "min_th": "9pkt", "max_th": "3pkt"}),
        "bottleneck.aqm.max_th",
        "3pkt",
        "above min_th",
    ),
    (
        "red unknown key",
        lambda d: d["bottleneck"].update(aqm={"name": "red", "maxp": 0.1}),
        "bottleneck.aqm.maxp",
        None,
        "unknown key",
    ),
    (
        "codel target",
        lambda d: d["bottleneck"].update(aqm={"name": "codel", "target": "1s"}),
        "bottleneck.aqm.target",
        "1s",
        "shorter than interval",
    ),
    (
        "loss table",
        lambda d: d["bottleneck"].update(loss={"model": "bursty"}),
        "bottleneck.loss",
        {"model": "bursty"},
        "gilbert_elliott",
    ),
    (
        "policer above the link",
        lambda d: d["bottleneck"].update(policer={"rate": "11Mbps"}),
        "bottleneck.policer.rate",
        "11Mbps",
        "above the link's rate (10Mbps)",
    ),
    (
        "policer burst below a packet",
        lambda d: d["bottleneck"].update(policer={"rate": "5Mbps", "burst": "1KB"}),
        "bottleneck.policer.burst",
        "1KB",
        "smaller than one packet (1500 B",
    ),
    (
        "policer zero burst",
        lambda d: d["bottleneck"].update(policer={"rate": "5Mbps", "burst": "0B"}),
        "bottleneck.policer.burst",
        "0B",
        "positive size",
    ),
    (
        "policer without rate",
        lambda d: d["bottleneck"].update(policer={"burst": "64KB"}),
        "bottleneck.policer.rate",
        None,
        "required",
    ),
    (
        "ge r",
        lambda d: d["bottleneck"].update(ack_loss={"model": "gilbert_elliott", "p": 0.1, "r": 0}),
        "bottleneck.ack_loss.r",
        0,
        "(0, 1]",
    ),
    (
        "ge p",
        lambda d: d["bottleneck"].update(loss={"model": "gilbert_elliott", "p": 2, "r": 0.5}),
        "bottleneck.loss.p",
        2,
        "[0, 1]",
    ),
    ("cbr rate", _with("cbr", {"rate": "0Mbps"}), "cbr[0].rate", "0Mbps", "positive"),
    (
        "cbr stop",
        _with("cbr", {"rate": "1Mbps", "start": "2s", "stop": "1s"}),
        "cbr[0].stop",
        "1s",
        "later than start",
    ),
    (
        "cbr packet",
        _with("cbr", {"rate": "1Mbps", "packet_size": "70KB"}),
        "cbr[0].packet_size",
        "70KB",
        "larger than an IP packet",
    ),
    (
        "cbr route",
        _with("cbr", {"rate": "1Mbps", "route": ["x"]}),
        "cbr[0].route[0]",
        "x",
        "not a declared link",
    ),
    (
        "onoff shape",
        _with("onoff", {"rate": "1Mbps", "shape": 2.5}),
        "onoff[0].shape",
        2.5,
        "(1, 2)",
    ),
    (
        "onoff count",
        _with("onoff", {"rate": "1Mbps", "count": 0}),
        "onoff[0].count",
        0,
        "greater than or equal to 1",
    ),
    (
        "web shape",
        _with(
            "web",
            {"cc": "reno", "rtt": "20ms", "arrival_rate": 1.0, "mean_size": "10KB", "shape": 1.0},
        ),
        "web[0].shape",
        1.0,
        "greater than 1",
    ),
    (
        "web rate",
        _with("web", {"cc": "reno", "rtt": "20ms", "arrival_rate": 0.0, "mean_size": "10KB"}),
        "web[0].arrival_rate",
        0.0,
        "greater than 0",
    ),
    (
        "web load",
        _with("web", {"cc": "reno", "rtt": "20ms", "arrival_rate": 1e6, "mean_size": "10KB"}),
        "web[0].arrival_rate",
        1e6,
        "at most 100,000",
    ),
    (
        "web size",
        _with("web", {"cc": "reno", "rtt": "20ms", "arrival_rate": 1.0}),
        "web[0].mean_size",
        None,
        "missing",
    ),
    (
        "reqresp rtt",
        lambda d: (
            d.update(reqresp=[{"cc": "reno", "rtt": "10ms"}])
            or d["bottleneck"].update(delay="6ms", queue="10pkt")
            or d.pop("flow")
        ),
        "reqresp[0].rtt",
        "10ms",
        "twice the one-way delay",
    ),
    (
        "reqresp count",
        _with("reqresp", {"cc": "reno", "rtt": "20ms", "count": 0}),
        "reqresp[0].count",
        0,
        "greater than or equal to 1",
    ),
    (
        "reqresp think",
        _with("reqresp", {"cc": "reno", "rtt": "20ms", "think": "-1s"}),
        "reqresp[0].think",
        "-1s",
        "negative",
    ),
    ("pcap", lambda d: d.update(pcap="wan"), "pcap", "wan", "not a link"),
    (
        "bdp without flows",
        _with("link", {"name": "idle", "rate": "1Gbps"}),
        "link[0].queue",
        "100%bdp",
        "no flow crosses",
    ),
]


@pytest.mark.parametrize(
    ("change", "field", "value", "reason"), [case[1:] for case in BAD], ids=[c[0] for c in BAD]
)
def test_bad_conditions_name_the_field_and_the_value(
    change: Any, field: str, value: object, reason: str
) -> None:
    data = small_scenario()
    change(data)
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data)
    assert (raised.value.field, raised.value.value) == (field, value)
    assert reason in raised.value.reason
    assert "\n" not in str(raised.value)


def test_rtt_error_names_the_flow_and_the_route() -> None:
    data = _parking_lot()
    data["flow"][0]["rtt"] = "25ms"
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data)
    assert raised.value.field == "flow[0].rtt"
    assert "a + b + c: 2 × 15ms" in raised.value.reason
