"""Host profiles (`flow.host`, docs/hosts.md): a profile resolves into the sender's loss-recovery
switches, a table may set any switch alone, the summary records what ran, the lab refuses what
its kernel cannot do, and the profiles differ where the mechanisms say they must."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import small_scenario
from tcpeval import backends
from tcpeval.cli import app
from tcpeval.scenario import ScenarioError, parse_scenario
from tcpeval.scenario.hosts import PROFILES, SWITCHES, rfc_3390_initial_window
from tcpeval.scenario.resolve import resolve

RECOVERY_KEYS = ("window_reduction", "loss_detection", "lost_retransmission", "tail_loss_probe")


def _flow_keys(**flow: object) -> dict[str, object]:
    data = small_scenario()
    data["flow"][0] |= flow
    resolved = resolve(parse_scenario(data))["flows"][0]
    return {key: resolved[key] for key in (*RECOVERY_KEYS, "sack_compression", "initial_cwnd_pkts")}


def test_each_profile_resolves_into_its_switches() -> None:
    assert (
        _flow_keys()
        == _flow_keys(host="linux")
        == {
            "window_reduction": "prr",
            "loss_detection": "rack",
            "lost_retransmission": "resend",
            "tail_loss_probe": True,
            "sack_compression": True,
            "initial_cwnd_pkts": 10,
        }
    )
    assert _flow_keys(host="linux-2.6") == {
        "window_reduction": "rate-halving",
        "loss_detection": "dupthresh",
        "lost_retransmission": "resend",
        "tail_loss_probe": False,
        "sack_compression": False,
        "initial_cwnd_pkts": 3,
    }
    rfc = _flow_keys(host="rfc")
    assert (rfc["window_reduction"], rfc["lost_retransmission"]) == ("rfc6675", "reduce")


def test_the_rfc_3390_window_follows_the_mss() -> None:
    # min(4·MSS, max(2·MSS, 4380 B)): 4 small segments, 3 of 1448 B, 2 jumbo ones.
    assert [rfc_3390_initial_window(mss) for mss in (536, 1448, 8948)] == [4, 3, 2]
    assert _flow_keys(host="linux-2.6", mss="8948B")["initial_cwnd_pkts"] == 2


def test_a_switch_set_in_the_table_overrides_its_host() -> None:
    keys = _flow_keys(host="rfc", window_reduction="prr", initial_cwnd=4)
    assert keys["window_reduction"] == "prr"
    assert keys["lost_retransmission"] == "reduce"
    assert keys["initial_cwnd_pkts"] == 4


@pytest.mark.parametrize(
    ("flow", "field"),
    [
        ({"host": "windows"}, "flow[0].host"),
        ({"window_reduction": "halve"}, "flow[0].window_reduction"),
    ],
)
def test_an_unknown_host_or_switch_is_one_error_naming_it(flow: dict, field: str) -> None:
    data = small_scenario()
    data["flow"][0] |= flow
    with pytest.raises(ScenarioError) as error:
        parse_scenario(data)
    assert error.value.field == field


def test_the_summary_records_the_switches_that_ran() -> None:
    data = small_scenario()
    data["flow"][0] |= {"host": "linux-2.6", "loss_detection": "rack"}
    described = tcpeval.simulate(data).summary["scenario"]["flow"][0]
    assert described["host"] == "linux-2.6"
    assert {key: described[key] for key in SWITCHES} == {
        "window_reduction": "rate-halving",
        "loss_detection": "rack",
        "lost_retransmission": "resend",
        "tail_loss_probe": False,
        "sack_compression": False,
        "initial_cwnd": 3,
        "undo": True,
        "timestamps": True,
        "rto_in_recovery": "keep-ssthresh",
    }


def _lossy(host: str) -> dict:
    """One Reno flow at 100 Mb/s, 60 ms, under random loss 1e-3: many recoveries."""
    return {
        "name": "lossy",
        "duration": "60s",
        "bottleneck": {"rate": "100Mbps", "queue": "100%bdp", "loss": 1e-3},
        "flow": [{"cc": "reno", "rtt": "60ms", "host": host}],
    }


def test_each_profile_recovers_its_own_way_from_the_same_loss_rate() -> None:
    # The same random loss met by three TCPs: the linux sender keeps sending through each
    # recovery (PRR) where RFC 6675 pauses, and never halves twice, so it moves at least as
    # much data; each profile gives a run of its own.
    summaries = {host: tcpeval.simulate(_lossy(host)).summary for host in PROFILES}
    goodput = {host: s["flows"][0]["goodput_mbps"] for host, s in summaries.items()}
    assert goodput["linux"] >= goodput["rfc"] * 0.98, goodput
    assert len({json.dumps(s["flows"][0], sort_keys=True) for s in summaries.values()}) == 3


def test_the_lab_refuses_a_recovery_its_kernel_cannot_do_by_name() -> None:
    lab = backends.get("lab")
    data = small_scenario()
    data["flow"][0] |= {"host": "rfc"}
    problems = {p.field: p.value for p in lab.supports(parse_scenario(data))}
    assert problems == {"flow[0].host": "rfc"}
    data["flow"][0] = {"cc": "reno", "rtt": "20ms", "window_reduction": "rate-halving"}
    problems = {p.field: p.value for p in lab.supports(parse_scenario(data))}
    assert problems == {"flow[0].window_reduction": "rate-halving"}
    data["flow"][0] = {"cc": "reno", "rtt": "20ms", "loss_detection": "dupthresh"}
    assert lab.supports(parse_scenario(data)) == [], "tcp_recovery = 0 turns RACK off"


def test_hosts_lists_every_profile_and_switch() -> None:
    run = CliRunner().invoke(app, ["hosts"])
    assert run.exit_code == 0, run.output
    for word in (*PROFILES, *SWITCHES, "rate-halving", "rfc3390"):
        assert word in run.stdout
