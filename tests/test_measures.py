"""The suites' measures on real runs, against the models they should reproduce. The runs are
measured over their second half, as the suites' long-run tests are."""

from __future__ import annotations

import pytest

from tcpeval import simulate
from tcpeval.models import mathis_goodput_bps
from tcpeval.suites.measures import efficiency, impact, response

MSS_BYTES = 1448
RTT_S = 0.1


def test_the_response_measure_is_reno_s_long_run_window_as_mathis_predicts() -> None:
    # The response suite's path at p = 1e-6: slow start overshoots far above Mathis' window
    # (1225 packets) and takes minutes to come down, so the whole run's average is 1.8 times
    # the model; the second half is within the ±20% allowed for Mathis.
    p = 1e-6
    result = simulate(
        {
            "duration": "600s",
            "measure": "second half",
            "sample_interval": "1s",
            "bottleneck": {"rate": "10Gbps", "queue": "1000000pkt", "loss": p},
            "flow": [{"cc": "reno", "rtt": "100ms", "delayed_ack": False}],
        }
    )
    mathis_window = mathis_goodput_bps(MSS_BYTES, RTT_S, p, b=1) * RTT_S / (8 * MSS_BYTES)
    measured = response(result)
    assert measured["window_pkts"] == pytest.approx(mathis_window, rel=0.2)
    assert measured["loss_rate"] == pytest.approx(p, rel=0.5)


def _two_flows(first: dict[str, object], second: dict[str, object]) -> dict[str, object]:
    """10 Mb/s, 20 ms, 100 s, a buffer of one BDP, measured over the second half."""
    return {
        "duration": "100s",
        "measure": "second half",
        "sample_interval": "1s",
        "bottleneck": {"rate": "10Mbps", "queue": "100%bdp"},
        "flow": [{"rtt": "20ms"} | first, {"rtt": "20ms"} | second],
    }


def test_the_impact_measure_counts_the_standard_flows_long_run_goodput() -> None:
    # The last group's stack (CUBIC) is the standard one. The new flow leaves at 50 s, and
    # the standard flow has the whole link (9.65 Mb/s of payload) for the second half; over
    # the whole run it averages about 7.
    scenario = _two_flows({"cc": "reno", "stop": "50s"}, {"cc": "cubic"})
    measured = impact(simulate(scenario))
    assert measured["standard_mean_mbps"] == pytest.approx(9.65, rel=0.05)


def test_the_efficiency_measure_is_the_long_run_utilisation() -> None:
    scenario = _two_flows({"cc": "reno", "start": "50s"}, {"cc": "reno", "start": "50s"})
    result = simulate(scenario)
    assert result.summary["bottleneck"]["whole_run_utilization"] < 0.55  # idle, first half
    assert efficiency(result)["utilization"] > 0.9


def test_stability_is_near_zero_for_steady_flows_and_not_for_a_sawtooth() -> None:
    # Two windows of 5 packets where the path holds 17: nothing queues, goodput and RTT are
    # flat. Reno filling a one-BDP buffer saws its queue between empty and full, so its RTT
    # swings up to twice the base (its goodput stays steady: the link never idles).
    steady = _two_flows({"cc": "reno", "window": "5pkt"}, {"cc": "reno", "window": "5pkt"})
    calm = efficiency(simulate(steady))
    swinging = efficiency(simulate(_two_flows({"cc": "reno"}, {"cc": "reno"})))
    assert calm["throughput_cov"] < 0.02
    assert calm["rtt_cov"] < 0.02
    assert swinging["rtt_cov"] > 0.1


def test_a_flow_silent_in_the_second_half_has_no_stability_and_does_not_stop_the_others() -> None:
    # Flow 0 stops at 40 s of 100: its goodput CoV is undefined, flow 1's stands alone.
    measured = efficiency(simulate(_two_flows({"cc": "reno", "stop": "40s"}, {"cc": "reno"})))
    assert 0 <= measured["throughput_cov"] < 0.1
    assert measured["rtt_cov"] >= 0
