from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers import SMALL_TOML, small_scenario
from tcpeval.scenario import (
    ScenarioError,
    cc_algorithms,
    describe,
    load_scenario,
    parse_scenario,
    resolve,
)

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.toml"))


def test_defaults_fill_what_the_file_leaves_out() -> None:
    scenario = parse_scenario(
        {
            "duration": "10s",
            "bottleneck": {"rate": "1Gbps"},
            "flow": [{"cc": "reno", "rtt": "42ms"}],
        }
    )
    assert (scenario.name, scenario.seed, scenario.sample_interval.ns) == ("scenario", 1, 10**8)
    bottleneck = scenario.bottleneck
    assert bottleneck is not None
    assert (bottleneck.queue.bdp_percent, bottleneck.aqm.name, bottleneck.loss) == (
        100,
        "droptail",
        0,
    )
    assert (bottleneck.delay.ns, bottleneck.ack_loss) == (0, 0)
    flow = scenario.flow[0]
    assert (flow.count, flow.start.ns, flow.stop, flow.size, flow.window) == (
        1,
        0,
        None,
        None,
        None,
    )
    assert (flow.mss.bytes, flow.sack, flow.delayed_ack, flow.host) == (1448, True, True, "linux")
    assert flow.behaviour().initial_cwnd_pkts(flow.mss.bytes) == 10
    assert (flow.min_rto.ns, flow.drop_at) == (200_000_000, [])
    assert (flow.route, flow.direction, flow.drop_every, flow.pacing, flow.streams) == (
        None,
        "forward",
        None,
        None,
        1,
    )
    assert (flow.source_rate, flow.sink_rate) == (None, None)
    assert scenario.route(flow) == ["bottleneck"]


def test_resolve_gives_the_contract_in_base_units() -> None:
    data = small_scenario()
    data["flow"][0] |= {"stop": "2.5s", "window": "64KB", "drop_at": ["1s", "1500ms"]}
    # 10 Mb/s × 20 ms = 16.7 packets of 1500 bytes; half of that rounds to 8.
    assert resolve(parse_scenario(data)) == {
        "name": "small",
        "duration_ns": 3_000_000_000,
        "seed": 1,
        "sample_interval_ns": 100_000_000,
        "links": [
            {
                "name": "bottleneck",
                "rate_bps": 10_000_000,
                "delay_ns": 0,
                "queue_pkts": None,
                "queue_bytes": 12_000,  # 50% BDP counted in bytes: 8 packets of 1500 B
                "aqm": {"name": "droptail"},
                "loss": {"model": "none"},
                "reverse_loss": {"model": "none"},
                "policer": None,
                "outages_ns": [],
                "reverse_outages_ns": [],
                "reorder": None,
                "mtu_black_hole_bytes": None,
                "rate_changes": [],
            }
        ],
        "flows": [
            {
                "group": 0,
                "cc": {"name": "reno"},
                "rtt_ns": 20_000_000,
                "forward_delay_ns": None,
                "start_ns": 0,
                "stop_ns": 2_500_000_000,
                "size_bytes": None,
                "mss_bytes": 1448,
                "sack": True,
                "delayed_ack": True,
                "sack_compression": True,
                "ecn": "off",
                "window_reduction": "prr",
                "loss_detection": "rack",
                "lost_retransmission": "resend",
                "tail_loss_probe": True,
                "undo": True,
                "timestamps": True,
                "rto_in_recovery": "keep-ssthresh",
                "tso": True,
                "window_pkts": 44,  # 64 000 bytes hold 44 whole segments of 1448
                "initial_cwnd_pkts": 10,
                "min_rto_ns": 200_000_000,
                "drop_at_ns": [1_000_000_000, 1_500_000_000],
                "route": ["bottleneck"],
                "route_changes": [],
                "reverse": False,
                "drop_every": None,
                "pacing_gap_ns": None,
                "pacing_rate_bps": None,
                "source_rate_bps": None,
                "sink_rate_bps": None,
            }
        ]
        * 2,
        "sources": [],
        "exchanges": [],
        "pcap_link": None,
    }


def test_count_expands_into_flows_that_remember_their_group() -> None:
    data = small_scenario()
    data["flow"].append({"cc": "reno", "rtt": "80ms", "size": "1MB"})
    flows = resolve(parse_scenario(data))["flows"]
    assert [(flow["group"], flow["rtt_ns"]) for flow in flows] == [
        (0, 20_000_000),
        (0, 20_000_000),
        (1, 80_000_000),
    ]
    assert flows[2]["size_bytes"] == 1_000_000


@pytest.mark.parametrize(
    ("counts", "pkts", "nbytes"), [(None, None, 14 * 9000), ("packets", 14, None)]
)
def test_queue_share_of_bdp_uses_the_largest_rtt_and_packet(
    counts: str | None, pkts: int | None, nbytes: int | None
) -> None:
    data = small_scenario()
    data["bottleneck"]["queue"] = "100%bdp"
    if counts is not None:
        data["bottleneck"]["queue_counts"] = counts
    data["flow"].append({"cc": "reno", "rtt": "100ms", "mss": "8948B"})
    # 10 Mb/s × 100 ms / (8 × 9000-byte packets) = 13.9 → 14 of the largest packets; counted
    # in bytes (the default for %bdp), the bytes of 14 of them.
    link = resolve(parse_scenario(data))["links"][0]
    assert (link["queue_pkts"], link["queue_bytes"]) == (pkts, nbytes)


@pytest.mark.parametrize(
    ("queue", "counts", "pkts", "nbytes"),
    [
        ("1%bdp", None, None, 1500),
        ("1%bdp", "packets", 1, None),
        ("250pkt", None, 250, None),
        ("250pkt", "bytes", None, 250 * 1500),
        ("1.5MB", None, None, 1_500_000),
        ("1.5MB", "packets", 1000, None),
        ("1.5MB", "bytes", None, 1_500_000),
    ],
)
def test_queue_forms(queue: str, counts: str | None, pkts: int | None, nbytes: int | None) -> None:
    # Written in one unit and counted in the other, a limit converts at the largest packet
    # crossing the link (1500 B here).
    data = small_scenario()
    data["bottleneck"]["queue"] = queue
    if counts is not None:
        data["bottleneck"]["queue_counts"] = counts
    link = resolve(parse_scenario(data))["links"][0]
    assert (link["queue_pkts"], link["queue_bytes"]) == (pkts, nbytes)


@pytest.mark.parametrize(
    ("window", "rtt", "pkts"),
    [
        ("2MB", "20ms", 1381),  # floor(2e6 / 1448)
        ("1000pkt", "20ms", 1000),
        ("100%bdp", "20ms", 17),  # 16.7 rounds up
        ("100%bdp", "200ms", 167),  # the flow's own RTT, not the largest
    ],
)
def test_window_forms(window: str, rtt: str, pkts: int) -> None:
    data = small_scenario()
    data["flow"].insert(0, {"cc": "reno", "rtt": "200ms"})
    data["flow"][1] |= {"window": window, "rtt": rtt}
    assert resolve(parse_scenario(data))["flows"][1]["window_pkts"] == pkts


def test_cc_tables_pass_their_parameters_through() -> None:
    algorithm = next(entry for entry in cc_algorithms() if entry["params"])
    param, default = next(iter(algorithm["params"].items()))
    data = small_scenario()
    data["flow"][0]["cc"] = {"name": algorithm["name"], param: default}
    flows = resolve(parse_scenario(data))["flows"]
    assert flows[0]["cc"] == {"name": algorithm["name"], param: default}


def test_describe_keeps_the_users_units_and_adds_resolved_limits() -> None:
    data = small_scenario()
    data["flow"][0]["window"] = "100%bdp"
    described = describe(parse_scenario(data))
    assert described["duration"] == "3s"
    assert described["bottleneck"] == {
        "rate": "10Mbps",
        "delay": "0s",
        "queue": "50%bdp",
        "aqm": {"name": "droptail"},
        "loss": 0.0,
        "ack_loss": 0.0,
        "policer": None,
        "outage": [],
        "ack_outage": [],
        "reorder": None,
        "mtu_black_hole": None,
        "queue_counts": "bytes",  # made explicit: a %bdp queue counts bytes unless told
        "queue_pkts": None,
        "queue_bytes": 12_000,
    }
    assert described["flow"][0]["rtt"] == "20ms"
    assert described["flow"][0]["window"] == "100%bdp"
    assert described["flow"][0]["window_pkts"] == 17
    # The algorithm's parameters as the core ran them: the registry's defaults filled in.
    assert described["flow"][0]["cc"] == {"name": "reno", "abc": True, "abc_limit": 2.0}
    assert described["flow"][0]["route"] == ["bottleneck"]


@pytest.mark.parametrize("path", EXAMPLES, ids=[path.stem for path in EXAMPLES])
def test_every_example_loads_and_resolves(path: Path) -> None:
    scenario = load_scenario(path)
    assert scenario.name == path.stem
    assert resolve(scenario)["flows"]


def test_at_least_the_documented_examples_exist() -> None:
    names = {path.stem for path in EXAMPLES}
    assert {"reno-100mbps", "two-reno-fairness", "mathis-random-loss"} <= names
    assert {"recovery-6ms", "recovery-25ms", "recovery-200ms"} <= names
    assert {
        "cbr-background",
        "selfsimilar-background",
        "gilbert-loss",
        "red-queue",
        "codel-queue",
        "parking-lot",
        "reverse-traffic",
        "mtu-9000-vs-3000",
        "pacing-kernel-delay",
        "disk-limited",
        "parallel-streams",
        "request-response",
        "pcap-capture",
        "ecn-classic",
        "l4s-dualpi2",
    } <= names


# --set overrides


@pytest.fixture
def small_file(tmp_path: Path) -> Path:
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML)
    return path


def test_overrides_reach_tables_list_items_and_top_level(small_file: Path) -> None:
    scenario = load_scenario(
        small_file,
        ["bottleneck.rate=1Gbps", "flow.0.rtt=42ms", "duration=30s", "seed=7", "flow.0.sack=false"],
    )
    assert scenario.bottleneck.rate.bps == 10**9
    assert scenario.flow[0].rtt.ns == 42_000_000
    assert scenario.duration.ns == 30 * 10**9
    assert scenario.seed == 7  # TOML integer, not the text "7"
    assert scenario.flow[0].sack is False


def test_star_overrides_every_flow_table(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text(SMALL_TOML + '\n[[flow]]\ncc = "reno"\nrtt = "80ms"\n')
    scenario = load_scenario(path, ["flow.*.rtt=42ms", 'flow.*.cc={ name = "reno" }'])
    assert [group.rtt.ns for group in scenario.flow] == [42_000_000, 42_000_000]
    assert [group.cc.name for group in scenario.flow] == ["reno", "reno"]


# Bad input: one ScenarioError naming the field and the value.


def _without(data: dict[str, Any], table: str, key: str) -> dict[str, Any]:
    del data[table][key]
    return data


@pytest.mark.parametrize(
    ("change", "field", "value", "reason"),
    [
        (lambda d: d["bottleneck"].update(qeue="1pkt"), "bottleneck.qeue", None, "unknown key"),
        (lambda d: d.update(colour="blue"), "colour", None, "unknown key"),
        (lambda d: d.update({"": 1}), '""', None, "unknown key"),
        (lambda d: d["bottleneck"].update({"a b": 1}), 'bottleneck."a b"', None, "unknown key"),
        (lambda d: d["flow"][0].update(rtt="42"), "flow[0].rtt", "42", "missing a unit"),
        (lambda d: d["flow"][0].update(rtt=42), "flow[0].rtt", 42, "missing a unit"),
        (lambda d: d["bottleneck"].update(rate="-5Mbps"), "bottleneck.rate", "-5Mbps", "positive"),
        (lambda d: d["bottleneck"].update(rate="0bps"), "bottleneck.rate", "0bps", "positive"),
        (
            lambda d: d["bottleneck"].update(queue="1000B"),
            "bottleneck.queue",
            "1000B",
            "one packet",
        ),
        (lambda d: d["bottleneck"].update(queue="0pkt"), "bottleneck.queue", "0pkt", "at least 1"),
        (lambda d: d["bottleneck"].update(aqm="sfq"), "bottleneck.aqm", "sfq", "droptail"),
        (lambda d: d["bottleneck"].update(loss=1.0), "bottleneck.loss", 1.0, "[0, 1)"),
        (lambda d: d["flow"][0].update(cc={"beta": 1}), "flow[0].cc.name", None, "missing"),
        (lambda d: d["flow"][0].update(count=0), "flow[0].count", 0, "greater than or equal"),
        (lambda d: d["flow"][0].update(sack="yes"), "flow[0].sack", "yes", "boolean"),
        (lambda d: d["flow"][0].update(start="-1s"), "flow[0].start", "-1s", "negative"),
        (lambda d: d["flow"][0].update(stop="0s"), "flow[0].stop", "0s", "later than start"),
        (lambda d: d["flow"][0].update(window="1KB"), "flow[0].window", "1KB", "one segment"),
        (lambda d: d["flow"][0].update(drop_at=["1s", "x"]), "flow[0].drop_at[1]", "x", "unit"),
        (lambda d: d.update(sample_interval="5s"), "sample_interval", "5s", "duration"),
        (lambda d: d.update(flow=[]), "flow", None, "at least 1 entry"),
        (lambda d: d.pop("bottleneck"), "bottleneck", None, "[[link]]"),
        (lambda d: d.update(bottleneck="1Gbps"), "bottleneck", "1Gbps", "must be a table"),
        (lambda d: _without(d, "bottleneck", "rate"), "bottleneck.rate", None, "missing"),
    ],
)
def test_bad_input_names_the_field_and_the_value(
    change: Any, field: str, value: object, reason: str
) -> None:
    data = small_scenario()
    change(data)
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data)
    assert (raised.value.field, raised.value.value) == (field, value)
    assert reason in raised.value.reason
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(
    ("assignment", "reason"),
    [
        ("flow.3.rtt=42ms", "list of 1"),
        ("nosuch.key=1", "'nosuch'"),
        ("flow.0.cc.beta=1", "not a table"),
        ("duration", "KEY=VALUE"),
    ],
)
def test_bad_override_paths_are_named(small_file: Path, assignment: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        load_scenario(small_file, [assignment])
    assert (raised.value.field, raised.value.value) == ("--set", assignment)
    assert reason in raised.value.reason


def test_malformed_toml_names_the_file_and_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text('duration = "3s"\n[bottleneck\nrate = "1Gbps"\n')
    with pytest.raises(ScenarioError) as raised:
        load_scenario(path)
    assert raised.value.field == str(path)
    assert "line 2" in raised.value.reason


def test_a_missing_file_is_a_scenario_error(tmp_path: Path) -> None:
    with pytest.raises(ScenarioError, match="cannot be read"):
        load_scenario(tmp_path / "nope.toml")
