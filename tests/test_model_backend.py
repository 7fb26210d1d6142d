"""The model backend: the analytical models in the result shape, checked against their own
formulas and, through `compare`, against the simulator on the cases the models describe."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

import tcpeval
from helpers import small_scenario
from tcpeval import models
from tcpeval.compare import Comparison, compare_backends
from tcpeval.metrics import recovery_time
from tcpeval.report.plots import write_plots
from tcpeval.result import ALGORITHM_COLUMN, FLOW_COLUMNS, GOODPUT_COLUMN, LINK_COLUMNS
from tcpeval.scenario import ScenarioError, load_scenario

EXAMPLES = Path(__file__).parent.parent / "examples"
MODEL_VS_SIM = 0.2  # the models must be within ±20% of the simulator


def _ratio(comparison: Comparison, figure: str) -> float:
    row = next(row for row in comparison.rows if row.figure == figure)
    ratio = row.ratios["sim"]
    assert ratio is not None, row
    return ratio


@pytest.mark.parametrize(("loss", "duration"), [(1e-3, "300s"), (1e-4, "600s")])
def test_mathis_goodput_agrees_with_the_simulator(loss: float, duration: str) -> None:
    scenario = load_scenario(
        EXAMPLES / "mathis-random-loss.toml",
        [f"bottleneck.loss={loss}", f"duration={duration}"],
    )
    comparison = compare_backends(scenario, ["model", "sim"], tolerance=MODEL_VS_SIM)
    model = comparison.results["model"].summary["flows"][0]
    mathis = models.mathis_goodput_bps(1448, 0.060, loss) / 1e6
    assert model["goodput_mbps"] == pytest.approx(mathis, rel=1e-3)
    assert model["limited_by"].startswith("loss (Mathis")
    ratio = _ratio(comparison, "goodput flow 0")
    assert abs(ratio - 1) <= MODEL_VS_SIM, ratio


@pytest.mark.parametrize("example", ["recovery-6ms", "recovery-25ms"])
def test_recovery_time_agrees_with_the_simulator(example: str) -> None:
    scenario = load_scenario(EXAMPLES / f"{example}.toml")
    comparison = compare_backends(scenario, ["model", "sim"], tolerance=MODEL_VS_SIM)
    window = comparison.results["model"].summary["scenario"]["flow"][0]["window_pkts"]
    model = next(r for r in comparison.rows if r.figure == "recovery flow 0").values["model"]
    # (W/2)·RTT, up to one sample interval (the metric reads the series at its samples)
    assert model == pytest.approx(
        models.reno_recovery_time_s(window, scenario.flow[0].rtt.seconds), abs=0.1
    )
    ratio = _ratio(comparison, "recovery flow 0")
    assert abs(ratio - 1) <= MODEL_VS_SIM, ratio


def test_a_window_a_fraction_of_a_packet_above_the_pipe_still_recovers_as_reno() -> None:
    # 100% of the BDP at 1 Gb/s × 200 ms rounds up to 16,667 packets, a third of a packet above
    # the pipe: the flow is limited by its window, so after the loss it regrows in (W/2)·RTT
    # (the simulator: 1,668 s) rather than being read as link-limited with no dip at all.
    scenario = load_scenario(EXAMPLES / "recovery-200ms.toml")
    result = tcpeval.run(scenario, "model")
    window = result.summary["scenario"]["flow"][0]["window_pkts"]
    assert window == 16_667
    assert result.summary["flows"][0]["limited_by"] == "window"
    assert recovery_time(result.flows, 0, 10.0, window) == pytest.approx(
        models.reno_recovery_time_s(window, 0.2), abs=1.0
    )
    assert result.summary["bottleneck"]["utilization"] <= 1


def test_a_window_limited_flow_gets_window_over_rtt() -> None:
    data = small_scenario()
    data["flow"][0] |= {"count": 1, "window": "10pkt"}
    flow = tcpeval.run(data, "model").summary["flows"][0]
    assert flow["goodput_mbps"] == pytest.approx(10 * 1448 * 8 / 0.020 / 1e6, rel=1e-3)
    assert flow["limited_by"] == "window"
    assert flow["retransmits"] == 0


def test_a_paced_flow_gets_its_pacing_rate_and_the_rest_goes_to_the_other() -> None:
    data = small_scenario()
    data["bottleneck"]["queue"] = "100%bdp"  # Reno keeps a full pipe: utilization 1
    data["flow"] = [
        {"cc": "reno", "rtt": "20ms", "pacing": "2Mbps"},
        {"cc": "reno", "rtt": "20ms"},
    ]
    paced, free = tcpeval.run(data, "model").summary["flows"]
    assert (paced["goodput_mbps"], paced["limited_by"]) == (pytest.approx(2.0), "pacing")
    wire = 10 * 1448 / 1500  # payload share of a 10 Mb/s link
    assert free["goodput_mbps"] == pytest.approx(wire - 2.0, rel=1e-3)
    assert free["limited_by"] == "link share"


def test_like_flows_share_the_link_by_the_sawtooth_of_their_backoff() -> None:
    data = small_scenario()  # two Reno flows, queue 50% of the BDP
    result = tcpeval.run(data, "model")
    bdp = models.bdp_pkts(10e6, 0.020, 1500)
    queue = round(0.5 * bdp)
    expected = models.sawtooth_utilization(bdp, queue, 0.5)
    assert result.summary["bottleneck"]["utilization"] == pytest.approx(expected, rel=1e-3)
    assert result.summary["jain_index"] == pytest.approx(1.0)
    goodputs = [f["goodput_mbps"] for f in result.summary["flows"]]
    assert goodputs[0] == pytest.approx(goodputs[1])


def test_sawtooth_utilization_and_queue_match_the_textbook_cases() -> None:
    # Reno without a buffer keeps 3/4 of the link busy; one BDP of buffer keeps it full.
    assert models.sawtooth_utilization(100, 0, 0.5) == pytest.approx(0.75)
    assert models.sawtooth_utilization(100, 100, 0.5) == 1.0
    # β = 0.7 needs Q ≥ 0.43·BDP (algorithms.md §10.4).
    assert models.sawtooth_utilization(100, 43, 0.7) == 1.0
    assert models.sawtooth_utilization(100, 40, 0.7) < 1.0
    # With one BDP of buffer the window sweeps 100…200: a mean queue of 50 packets.
    assert models.sawtooth_mean_queue_pkts(100, 100, 0.5) == pytest.approx(50.0)
    assert models.sawtooth_mean_queue_pkts(100, 0, 0.5) == 0.0


def test_unlike_flows_share_by_their_response_functions_at_one_loss_rate() -> None:
    data = small_scenario()
    data["flow"] = [{"cc": "reno", "rtt": "20ms"}, {"cc": "reno", "rtt": "40ms"}]
    short, long = tcpeval.run(data, "model").summary["flows"]
    # At one common loss rate Reno's rate goes as 1/RTT (algorithms.md §10.5, k = 1); the
    # queueing delay is added to both RTTs, so the ratio is a little below 2.
    assert 1.5 < short["goodput_mbps"] / long["goodput_mbps"] < 2.0


def test_flows_without_a_model_say_so_and_no_number_is_guessed() -> None:
    data = small_scenario()
    data["flow"] = [{"cc": "bbr", "rtt": "20ms"}, {"cc": "reno", "rtt": "20ms", "window": "2pkt"}]
    result = tcpeval.run(data, "model")
    bbr, reno = result.summary["flows"]
    assert bbr["goodput_mbps"] is None
    assert bbr["limited_by"].startswith("no model")
    assert reno["limited_by"] == "window"  # its own limit is below any share: known
    assert result.summary["bottleneck"]["utilization"] is None
    rows = result.flows[result.flows["flow"] == 0]
    assert rows["cwnd_pkts"].isna().all()


def test_bbr3_has_no_model() -> None:
    # No published steady-state model predicts BBRv3's share (Sarpkaya et al., IFIP
    # Networking 2025 find the existing ones do not): the backend says so (docs/bbr3.md).
    data = small_scenario()
    data["flow"] = [{"cc": "bbr3", "rtt": "20ms"}, {"cc": "cubic", "rtt": "20ms"}]
    bbr3, cubic = tcpeval.run(data, "model").summary["flows"]
    assert bbr3["goodput_mbps"] is None
    assert cubic["goodput_mbps"] is None
    assert bbr3["limited_by"] == "no model of how bbr3 fills a link"


def test_epochs_follow_starts_and_stops() -> None:
    data = small_scenario() | {"duration": "10s"}
    data["bottleneck"]["queue"] = "100%bdp"
    data["flow"] = [
        {"cc": "reno", "rtt": "20ms"},
        {"cc": "reno", "rtt": "20ms", "start": "5s"},
    ]
    result = tcpeval.run(data, "model")
    alone = result.flows[(result.flows["flow"] == 0) & (result.flows["t_s"] <= 5)]
    shared = result.flows[(result.flows["flow"] == 0) & (result.flows["t_s"] > 5.5)]
    assert alone["cwnd_pkts"].iloc[-1] == pytest.approx(2 * shared["cwnd_pkts"].iloc[-1], rel=0.05)
    first, late = result.summary["flows"]
    assert late["start_s"] == 5.0
    assert first["goodput_mbps"] == pytest.approx(0.75 * 10 * 1448 / 1500, rel=0.02)


def test_the_result_has_the_shape_every_backend_shares(tmp_path: Path) -> None:
    result = tcpeval.run(small_scenario(), "model")
    assert tuple(result.flows.columns) == (*FLOW_COLUMNS, ALGORITHM_COLUMN, GOODPUT_COLUMN)
    assert tuple(result.links.columns) == LINK_COLUMNS
    samples = result.flows.groupby("flow").size()
    assert (samples == 30).all()  # 3 s at 100 ms
    assert (
        result.flows.groupby("flow")["delivered_bytes"]
        .apply(lambda s: s.is_monotonic_increasing)
        .all()
    )
    write_plots(result, result.save(tmp_path / "model"))
    assert tcpeval.load(tmp_path / "model").summary == result.summary


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"bottleneck": {"rate": "10Mbps", "aqm": "codel"}}, "bottleneck.aqm"),
        (
            {
                "bottleneck": {
                    "rate": "10Mbps",
                    "loss": {"model": "gilbert_elliott", "p": 0.01, "r": 0.3},
                }
            },
            "bottleneck.loss",
        ),
        ({"flow": [{"cc": "bbr", "rtt": "20ms", "drop_at": ["1s"]}]}, "flow[0].drop_at"),
        ({"flow": [{"cc": "reno", "rtt": "20ms", "size": "1MB"}]}, "flow[0].size"),
    ],
)
def test_the_model_refuses_what_it_has_no_formula_for(change: dict, field: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        tcpeval.run(small_scenario() | change, "model")
    assert raised.value.field == field
    assert "(backend 'model')" in str(raised.value)


def test_cubic_response_matches_rfc_9438_constant() -> None:
    # 1.054·RTT^0.75/p^0.75 (algorithms.md §10.3) above the Reno-friendly window.
    window = models.cubic_window_pkts(1e-6, 0.1)
    assert window == pytest.approx(1.054 * 0.1**0.75 / 1e-6**0.75, rel=1e-3)
    assert models.cubic_window_pkts(1e-2, 0.01) == pytest.approx(1.2 / math.sqrt(1e-2))
