"""The model backend under ECN and AQM: DCTCP through a step marker (Alizadeh et al., SIGCOMM
2010, §3.3) and RED's fixed point (Firoiu & Borden, INFOCOM 2000), against numbers worked by
hand from the papers' formulas and, with stated tolerances, against the simulator."""

from __future__ import annotations

import math
from typing import Any

import pytest

import tcpeval
from tcpeval import models
from tcpeval.compare import Comparison, compare_backends
from tcpeval.scenario import ScenarioError, parse_scenario

DCTCP_LABEL = "link share (DCTCP: Alizadeh et al. 2010 §3.3)"
RED_LABEL = "RED equilibrium (Firoiu & Borden 2000)"
PAYLOAD = 1448 / 1500  # goodput per bit on the wire: MSS over MSS + 52 header bytes


def _dctcp(count: int, k: str) -> dict[str, Any]:
    """`count` DCTCP flows, 1 Gb/s, 1 ms, a step marker at `k`: the simulator's textbook host
    without TSO bursts, as the paper's model assumes."""
    return {
        "name": "dctcp-step",
        "duration": "30s",
        "measure": "second half",
        "bottleneck": {"rate": "1Gbps", "aqm": {"name": "step", "threshold": k}},
        "flow": [{"cc": "dctcp", "rtt": "1ms", "count": count, "host": "rfc", "tso": False}],
    }


def _queue_model(result: tcpeval.Result) -> dict[str, Any]:
    (figures,) = result.summary["backend"]["details"]["queue_models"]
    return dict(figures)


# DCTCP through a step marker


def test_dctcp_matches_the_sigcomm_model_worked_by_hand() -> None:
    # 2 flows, C = 1 Gb/s of 1500-byte packets = 83,333 packets/s, RTT 1 ms, K = 13:
    #   C·RTT = 83.33 packets; W* = (83.33 + 13)/2 = 48.17 (eq. 5);
    #   eq. 7: α²(1 − α/4) = (2·48.17 + 1)/49.17² = 0.04026, so α = 0.2060 (√(2/W*) = 0.2038);
    #   A = N·(W* + 1)·α/2 = 2·49.17·0.2060/2 = 10.13 (eq. 10);
    #   Q_max = K + N = 15 (eq. 12), Q_min = 15 − 10.13 = 4.87 > 0 (eq. 13): the link stays
    #   full, each flow gets 500 Mb/s on the wire = 482.67 Mb/s of goodput;
    #   mean queue K + N − A/2 = 15 − 5.07 = 9.93 packets; a fraction α of packets marked.
    result = tcpeval.run(_dctcp(2, "13pkt"), "model")
    figures = _queue_model(result)
    assert figures["w_star_pkts"] == pytest.approx(48.17, abs=0.01)
    assert figures["alpha"] == pytest.approx(0.2060, abs=1e-4)
    assert figures["amplitude_pkts"] == pytest.approx(10.13, abs=0.01)
    assert (figures["q_max_pkts"], figures["q_min_pkts"]) == (15, pytest.approx(4.87, abs=0.01))
    link = result.summary["bottleneck"]
    assert link["utilization"] == pytest.approx(1.0)
    assert link["mean_queue_pkts"] == pytest.approx(9.93, abs=0.01)
    assert (link["drops"], link["aqm_drops"]) == (0, 0)
    packets = sum(f["packets_sent"] for f in result.summary["flows"])
    assert link["aqm_marks"] == pytest.approx(0.2060 * packets, rel=1e-3)
    for flow in result.summary["flows"]:
        assert flow["goodput_mbps"] == pytest.approx(482.67, abs=0.01)
        assert flow["limited_by"] == DCTCP_LABEL
        assert flow["retransmits"] == 0
    # The queue series is the epoch's mean, as the drop-tail epochs give theirs.
    assert result.links["queue_pkts"].to_numpy() == pytest.approx(9.935, abs=1e-3)


def test_dctcp_below_the_papers_threshold_idles_the_link_as_its_sawtooth_says() -> None:
    # 1 flow, K = 1: W* = 84.33, α = 0.1557, A = 6.64, Q_max = 2, Q_min = −4.64 < 0. The
    # aggregate window sweeps linearly from C·RTT + Q_min to C·RTT + Q_max: the link idles
    # while it is below C·RTT, utilization 1 − Q_min²/(2·A·C·RTT) = 1 − 21.56/1107.2 = 0.9805;
    # the queue stands for Q_max/A of the cycle, mean Q_max²/(2A) = 0.301 packets.
    result = tcpeval.run(_dctcp(1, "1pkt"), "model")
    figures = _queue_model(result)
    assert figures["q_min_pkts"] == pytest.approx(-4.64, abs=0.01)
    link = result.summary["bottleneck"]
    assert link["utilization"] == pytest.approx(0.9805, abs=1e-4)
    assert link["mean_queue_pkts"] == pytest.approx(0.301, abs=1e-3)
    (flow,) = result.summary["flows"]
    assert flow["goodput_mbps"] == pytest.approx(1000 * PAYLOAD * 0.9805, rel=1e-4)


def test_dctcp_alpha_is_the_root_of_eq_7_close_to_its_approximation() -> None:
    for w_star in (10.0, 48.17, 1000.0):
        alpha = models.dctcp_alpha(w_star)
        assert alpha**2 * (1 - alpha / 4) == pytest.approx((2 * w_star + 1) / (w_star + 1) ** 2)
        assert alpha == pytest.approx(math.sqrt(2 / w_star), rel=0.02)
    assert models.dctcp_alpha(0.5) == 1.0


def test_dctcp_flows_of_different_rtts_are_refused_by_name() -> None:
    data = _dctcp(1, "13pkt")
    data["flow"].append({"cc": "dctcp", "rtt": "2ms"})
    with pytest.raises(ScenarioError) as raised:
        tcpeval.run(data, "model")
    assert raised.value.field == "flow[1].rtt"
    assert "one RTT" in str(raised.value)


def test_a_sawtooth_that_overflows_the_buffer_has_no_model() -> None:
    # K + N = 13 + 30 = 43 packets above a 40-packet buffer: drops the model does not have.
    data = _dctcp(30, "13pkt")
    data["bottleneck"]["queue"] = "40pkt"
    result = tcpeval.run(data, "model")
    assert all(f["goodput_mbps"] is None for f in result.summary["flows"])
    assert "overflows the queue" in result.summary["flows"][0]["limited_by"]


@pytest.mark.parametrize(
    ("flows", "reason"),
    [
        ([{"cc": "prague", "rtt": "1ms"}], "no model of prague through a step marker"),
        (
            [{"cc": "dctcp", "rtt": "1ms"}, {"cc": "cubic", "rtt": "1ms", "ecn": "classic"}],
            "no model of cubic through a step marker",
        ),
    ],
)
def test_other_stacks_through_a_step_marker_have_no_model(
    flows: list[dict[str, Any]], reason: str
) -> None:
    data = _dctcp(1, "13pkt") | {"flow": flows}
    result = tcpeval.run(data, "model")
    for flow in result.summary["flows"]:
        assert (flow["goodput_mbps"], flow["limited_by"]) == (None, reason)
    assert result.summary["bottleneck"]["utilization"] is None


def test_an_ecn_flow_beside_not_ect_flows_filling_a_step_marker_has_no_model() -> None:
    # Reno without ECN fills the buffer far above K; the marks would cut the DCTCP flow below
    # its 2-packet window by an amount no model gives, and the Reno flows' shares hang on it.
    data = _dctcp(1, "5pkt")
    data["flow"] = [
        {"cc": "reno", "rtt": "1ms", "count": 2},
        {"cc": "dctcp", "rtt": "1ms", "window": "2pkt"},
    ]
    summary = tcpeval.run(data, "model").summary
    assert all(f["goodput_mbps"] is None for f in summary["flows"])
    assert "Not-ECT flows fill" in summary["flows"][2]["limited_by"]


def test_without_ect_a_step_marker_is_a_drop_tail_queue() -> None:
    # Not-ECT packets pass a step marker to the hard limit: Reno with ECN off meets drop-tail.
    data = {
        "name": "reno-step",
        "duration": "10s",
        "bottleneck": {
            "rate": "10Mbps",
            "queue": "100%bdp",
            "aqm": {"name": "step", "threshold": "5pkt"},
        },
        "flow": [{"cc": "reno", "rtt": "20ms", "count": 2}],
    }
    step = tcpeval.run(data, "model").summary
    droptail = tcpeval.run(data | {"bottleneck": {"rate": "10Mbps", "queue": "100%bdp"}}, "model")
    assert step["flows"] == droptail.summary["flows"]
    assert (
        step["bottleneck"]["mean_queue_pkts"] == droptail.summary["bottleneck"]["mean_queue_pkts"]
    )


# RED's fixed point


def _red(ecn: bool, reno_ecn: str = "classic") -> dict[str, Any]:
    """One Reno flow, 10 Mb/s, 30 ms, RED from 20 to 70 packets with max_p = 0.003."""
    red = {"name": "red", "min_th": "20pkt", "max_th": "70pkt", "max_p": 0.003, "ecn": ecn}
    return {
        "name": "reno-red",
        "duration": "60s",
        "bottleneck": {"rate": "10Mbps", "queue": "100pkt", "aqm": red},
        "flow": [{"cc": "reno", "rtt": "30ms", "ecn": reno_ecn}],
    }


def test_red_fixed_point_matches_mathis_worked_by_hand() -> None:
    # C = 833.33 packets/s. At a mean queue of q = 25 packets: RED's p_b = 0.003·(25 − 20)/50
    # = 3e-4; its count spacing signals 2·p_b/(1 + p_b) = 5.998e-4 of the packets; Reno's
    # window (Mathis, the project's C = √(3/2), ABC) is √(1.5/p) = 50.01 packets, and the
    # pipe plus the queue hold C·RTT + q = 25 + 25 = 50: the fixed point, to 0.01 packet
    # (the window's excess of 0.0075 moves q by 0.0075/6 = 0.001). The link is full: goodput
    # 10 Mb/s · 1448/1500 = 9.6533 Mb/s.
    result = tcpeval.run(_red(ecn=True), "model")
    figures = _queue_model(result)
    assert figures["p_b"] == pytest.approx(3e-4, rel=1e-3)
    assert figures["p"] == pytest.approx(5.998e-4, rel=1e-3)
    link = result.summary["bottleneck"]
    assert link["mean_queue_pkts"] == pytest.approx(25.0, abs=0.01)
    assert link["utilization"] == pytest.approx(1.0)
    (flow,) = result.summary["flows"]
    assert flow["goodput_mbps"] == pytest.approx(10 * PAYLOAD, rel=1e-6)
    rtt_s = 0.030 + 25 / 833.33
    assert flow["goodput_mbps"] == pytest.approx(
        models.mathis_goodput_bps(1448, rtt_s, figures["p"]) / 1e6, rel=1e-3
    )
    assert flow["limited_by"] == f"{RED_LABEL} at p = 0.0006"
    assert flow["rtt_ms"] == 30.0  # the base RTT; the series' srtt carries the queue
    assert result.flows["srtt_ms"].to_numpy() == pytest.approx(60.0, abs=0.02)


@pytest.mark.parametrize(
    ("ecn", "reno_ecn", "marked"),
    [(True, "classic", True), (True, "off", False), (False, "classic", False)],
)
def test_red_signals_are_marks_for_ecn_and_drops_otherwise(
    ecn: bool, reno_ecn: str, marked: bool
) -> None:
    summary = tcpeval.run(_red(ecn, reno_ecn), "model").summary
    link, (flow,) = summary["bottleneck"], summary["flows"]
    signals = 5.998e-4 * flow["packets_sent"]
    marks, drops = (signals, 0) if marked else (0, signals)
    assert link["aqm_marks"] == pytest.approx(marks, rel=2e-3, abs=1)
    assert link["aqm_drops"] == link["drops"] == pytest.approx(drops, rel=2e-3, abs=1)
    assert flow["ce_marks"] == link["aqm_marks"]
    assert flow["retransmits"] == link["aqm_drops"]


def test_red_probability_and_signal_rate() -> None:
    assert models.red_probability(10, 20, 70, 0.1) == 0.0
    assert models.red_probability(45, 20, 70, 0.1) == pytest.approx(0.05)
    # Gentle: from max_p at max_th to 1 at 2·max_th; without it, 1 from max_th.
    assert models.red_probability(105, 20, 70, 0.1) == pytest.approx(0.55)
    assert models.red_probability(105, 20, 70, 0.1, gentle=False) == 1.0
    assert models.red_probability(140, 20, 70, 0.1) == 1.0
    assert models.red_signal_rate(1e-4) == pytest.approx(2e-4, rel=1e-3)
    assert models.red_signal_rate(1.0) == 1.0


def test_a_window_below_the_pipe_keeps_its_limit_through_red() -> None:
    # 10 packets at 30 ms fill 40% of 10 Mb/s: RED never reaches min_th, so no signal.
    data = _red(ecn=True)
    data["flow"][0]["window"] = "10pkt"
    summary = tcpeval.run(data, "model").summary
    (flow,) = summary["flows"]
    assert flow["limited_by"] == "window"
    assert flow["goodput_mbps"] == pytest.approx(10 * 1448 * 8 / 0.030 / 1e6)
    assert (summary["bottleneck"]["aqm_marks"], summary["bottleneck"]["mean_queue_pkts"]) == (0, 0)


def test_stacks_without_a_response_function_have_no_model_through_red() -> None:
    data = _red(ecn=False) | {"flow": [{"cc": "bbr", "rtt": "30ms"}]}
    (flow,) = tcpeval.run(data, "model").summary["flows"]
    assert (flow["goodput_mbps"], flow["limited_by"]) == (None, "no model of how bbr answers RED")


@pytest.mark.parametrize("aqm", ["codel", "pie", "fq_codel", "dualpi2"])
def test_the_other_queue_disciplines_are_refused(aqm: str) -> None:
    data = _red(ecn=False)
    data["bottleneck"]["aqm"] = aqm
    parse_scenario(data)  # a valid scenario, which the model refuses
    with pytest.raises(ScenarioError) as raised:
        tcpeval.run(data, "model")
    assert raised.value.field == "bottleneck.aqm"
    assert f"no model of {aqm} here (backend 'model')" in str(raised.value)


# Against the simulator


def _ratio(comparison: Comparison, figure: str) -> float:
    """The simulator's value over the model's."""
    row = next(row for row in comparison.rows if row.figure == figure)
    ratio = row.ratios["sim"]
    assert ratio is not None, row
    return ratio


def _report(comparison: Comparison) -> None:
    for row in comparison.rows:
        print(f"{row.figure}: model {row.values['model']}, sim {row.values['sim']}")


def test_dctcp_model_against_the_simulator() -> None:
    # Tolerances: goodput and utilization within 5% (the model's link is full, so is the
    # simulator's); the mean queue within 20%, the project's model-against-simulator
    # tolerance (measured: model 9.93, simulator 11.2 packets, +12%: its flows are less
    # synchronised than the model's, its queue peaks a little above K + N).
    comparison = compare_backends(parse_scenario(_dctcp(2, "13pkt")), ["model", "sim"])
    _report(comparison)
    assert abs(_ratio(comparison, "utilization") - 1) <= 0.05
    for figure in ("goodput flow 0", "goodput flow 1", "goodput total"):
        assert abs(_ratio(comparison, figure) - 1) <= 0.05, figure
    assert abs(_ratio(comparison, "mean queue") - 1) <= 0.2


def _reno_red(count: int, rate: str, rtt: str, queue: str, duration: str) -> dict[str, Any]:
    return {
        "name": "reno-red-ecn",
        "duration": duration,
        "measure": "second half",
        "bottleneck": {"rate": rate, "queue": queue, "aqm": {"name": "red", "ecn": True}},
        "flow": [{"cc": "reno", "rtt": rtt, "count": count, "ecn": "classic"}],
    }


def test_red_model_against_the_simulator_two_reno_flows() -> None:
    # 2 Reno flows (ECN) through marking RED, 100 Mb/s, 40 ms, queue 200% of the BDP (667
    # packets; RED from 167 to 500), 60 s, second half. The fixed point needs p = 2.4e-5: it
    # sits at min_th (166.8 packets). Goodput and utilization hold within 5% (total) and 20%
    # (each flow's, the simulator's split being uneven over 30 s). The mean queue misses: with
    # two flows each mark halves a quarter of the aggregate window, so the simulator's queue
    # saws from about min_th down to about 40 packets (mean 83 on the `linux` host) rather than
    # standing at min_th. Asserted as what it is, a miss in one direction.
    comparison = compare_backends(
        parse_scenario(_reno_red(2, "100Mbps", "40ms", "200%bdp", "60s")), ["model", "sim"]
    )
    _report(comparison)
    assert abs(_ratio(comparison, "utilization") - 1) <= 0.05
    assert abs(_ratio(comparison, "goodput total") - 1) <= 0.05
    for figure in ("goodput flow 0", "goodput flow 1"):
        assert abs(_ratio(comparison, figure) - 1) <= 0.2, figure
    model_queue = comparison.results["model"].summary["bottleneck"]["mean_queue_pkts"]
    assert model_queue == pytest.approx(166.8, abs=0.1)
    assert 0.3 < _ratio(comparison, "mean queue") < 0.8


def test_red_model_against_the_simulator_many_flows() -> None:
    # With 20 flows the windows are small and RED's average stands between the thresholds, the
    # fixed point's assumption: 10 Mb/s, 40 ms, queue 200 packets (RED from 50 to 150), 120 s.
    # Mean queue within 20% (measured: model 75.8, simulator 71.5), goodput within 5%.
    comparison = compare_backends(
        parse_scenario(_reno_red(20, "10Mbps", "40ms", "200pkt", "120s")), ["model", "sim"]
    )
    _report(comparison)
    assert abs(_ratio(comparison, "goodput total") - 1) <= 0.05
    assert abs(_ratio(comparison, "utilization") - 1) <= 0.05
    assert abs(_ratio(comparison, "mean queue") - 1) <= 0.2
