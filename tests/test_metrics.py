from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from tcpeval.metrics import (
    bw_impact,
    bw_impact_aggregate,
    coefficient_of_variation,
    congestion_event_rate,
    convergence_time_s,
    friendliness,
    goodput_mbps,
    goodput_series_mbps,
    jain_index,
    loss_rate,
    mean_goodput_mbps,
    mean_queue_pkts,
    recovery_time,
    retransmission_rate,
    rtt_cov,
    rtt_unfairness_exponent,
    throughput_cov,
    throughput_mbps,
    throughput_ratio,
    utilization,
)


@pytest.mark.parametrize(
    ("shares", "index"),
    [([5.0, 5.0], 1.0), ([1.0, 0.0], 0.5), ([3.0, 0, 0], 1 / 3), ([1.0, 2.0], 0.9), ([0, 0], 1.0)],
)
def test_jain_index(shares: list[float], index: float) -> None:
    assert jain_index(shares) == pytest.approx(index)


def test_jain_index_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        jain_index([])


@pytest.mark.parametrize(
    ("ratio", "index"),
    # methodology.md §1.5: Jain's index of two flows with throughput ratio r.
    [(0.1, 0.599), (0.2, 0.692), (0.5, 0.900), (0.67, 0.962), (0.8, 0.988), (0.9, 0.997)],
)
def test_jain_index_of_two_flows_matches_the_ratio_table(ratio: float, index: float) -> None:
    assert jain_index([ratio, 1.0]) == pytest.approx(index, abs=5e-4)
    assert throughput_ratio(1.0, ratio) == pytest.approx(ratio)


@pytest.mark.parametrize(
    ("a", "b", "ratio"), [(2.0, 4.0, 0.5), (4.0, 2.0, 0.5), (3.0, 3.0, 1.0), (0.0, 3.0, 0.0)]
)
def test_throughput_ratio_is_min_over_max(a: float, b: float, ratio: float) -> None:
    assert throughput_ratio(a, b) == ratio


def test_throughput_ratio_of_two_idle_flows_is_fair_and_negative_is_an_error() -> None:
    assert throughput_ratio(0.0, 0.0) == 1.0
    with pytest.raises(ValueError, match="non-negative"):
        throughput_ratio(-1.0, 2.0)


def test_friendliness_is_the_standard_flows_share_relative_to_the_std_std_baseline() -> None:
    assert friendliness(40.0, 50.0) == pytest.approx(0.8)
    assert friendliness(0.0, 50.0) == 0.0
    with pytest.raises(ValueError, match="baseline"):
        friendliness(40.0, 0.0)


@pytest.mark.parametrize(
    ("std_only", "mixed_std", "impact", "aggregate"),
    [
        ([5.0, 5.0], [5.0], 1.0, 2.0),  # the new flow takes exactly a standard share
        ([5.0, 5.0], [2.5], 2.0, 4.0),  # it takes three quarters of the link
        ([4.0, 4.0, 4.0], [3.0, 3.0], 4 / 3, 2.0),
        ([5.0, 5.0], [0.0], math.inf, math.inf),  # it starves the standard flow
    ],
)
def test_bw_impact_both_readings(
    std_only: list[float], mixed_std: list[float], impact: float, aggregate: float
) -> None:
    assert bw_impact(std_only, mixed_std) == pytest.approx(impact)
    assert bw_impact_aggregate(std_only, mixed_std) == pytest.approx(aggregate)


@pytest.mark.parametrize(("std_only", "mixed_std"), [([5.0], []), ([5.0, 5.0], [5.0, 5.0])])
def test_bw_impact_needs_n_and_n_minus_one_standard_flows(
    std_only: list[float], mixed_std: list[float]
) -> None:
    with pytest.raises(ValueError, match="n − 1"):
        bw_impact(std_only, mixed_std)


def test_bw_impact_needs_a_positive_baseline() -> None:
    with pytest.raises(ValueError, match="positive"):
        bw_impact([0.0, 0.0], [0.0])


def _delivering(rates_mbps: list[float], flow: int = 0, dt: float = 0.1) -> pd.DataFrame:
    """Samples every dt of a flow delivering rates_mbps[i] during interval i."""
    delivered = np.cumsum(np.round(np.array(rates_mbps) * 1e6 / 8 * dt)).astype(np.uint64)
    return pd.DataFrame(
        {"t_s": dt * np.arange(1, len(rates_mbps) + 1), "flow": flow, "delivered_bytes": delivered}
    )


def test_mean_goodput_over_the_run_and_a_window() -> None:
    flows = _delivering([0.0] * 10 + [10.0] * 10)  # idle for 1 s, then 10 Mb/s
    assert mean_goodput_mbps(flows, 0) == pytest.approx(5.0)
    assert mean_goodput_mbps(flows, 0, start_s=1.0) == pytest.approx(10.0)
    assert mean_goodput_mbps(flows, 0, start_s=0.5, end_s=1.5) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="empty window"):
        mean_goodput_mbps(flows, 0, start_s=2.0)
    with pytest.raises(ValueError, match="no samples of flow 1"):
        mean_goodput_mbps(flows, 1)


def test_goodput_series_bins_whole_intervals_of_one_flow() -> None:
    flows = pd.concat([_delivering([2.0, 6.0, 6.0, 2.0, 4.0], dt=0.5), _delivering([9.0], 1)])
    assert goodput_series_mbps(flows, 0, 1.0) == pytest.approx([4.0, 4.0])  # 2.5 s: 2 bins
    assert goodput_series_mbps(flows, 0, 1.0, start_s=0.5) == pytest.approx([6.0, 3.0])
    assert goodput_series_mbps(flows, 0, 0.5, end_s=1.0) == pytest.approx([2.0, 6.0])
    with pytest.raises(ValueError, match="no whole"):
        goodput_series_mbps(flows, 0, 5.0)


def test_throughput_counts_every_packet_sent_over_the_flows_lifetime() -> None:
    flow = {"id": 0, "packets_sent": 1000, "start_s": 2.0, "end_s": 12.0}
    assert throughput_mbps(flow, mss_bytes=1250) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="no duration"):
        throughput_mbps({**flow, "end_s": 2.0}, mss_bytes=1250)


def test_convergence_time_from_the_start_to_the_smoothed_threshold() -> None:
    # Starts at 5 s; 4 Mb/s for 2 s, then 10 Mb/s: the 1 s mean is 4 + 0.6k at 7 s + k/10,
    # first ≥ 8 (80 % of 10) at 7.7 s, first ≥ 5 at 7.2 s.
    new = _delivering([0.0] * 50 + [4.0] * 20 + [10.0] * 30, flow=1)
    flows = pd.concat([_delivering([10.0] * 100, flow=0), new])
    assert convergence_time_s(flows, 1, 10.0, 5.0, hold_s=2.0) == pytest.approx(2.7)
    assert convergence_time_s(flows, 1, 10.0, 5.0, hold_s=2.0, threshold=0.5) == pytest.approx(2.2)
    # Without smoothing the first 10 Mb/s sample (7.1 s) counts.
    assert convergence_time_s(flows, 1, 10.0, 5.0, hold_s=2.0, smoothing_s=0.1) == pytest.approx(
        2.1
    )


def test_convergence_time_counts_only_windows_after_the_start() -> None:
    flows = _delivering([10.0] * 50)  # already at its share before start_s
    assert convergence_time_s(flows, 0, 10.0, 2.0, hold_s=1.0) == pytest.approx(1.0)
    assert convergence_time_s(flows, 0, 10.0, 2.0, hold_s=1.0, smoothing_s=0.5) == pytest.approx(
        0.5
    )


def test_convergence_time_ignores_crossings_that_do_not_hold() -> None:
    # 1 s mean ≥ 7.5 from 1.8 s to 2.2 s, then again from 3.8 s to the end at 6 s.
    flows = _delivering([0.0] * 10 + [10.0] * 10 + [0.0] * 10 + [10.0] * 30)
    assert convergence_time_s(flows, 0, 10.0, 0.0, hold_s=0.3, threshold=0.75) == pytest.approx(1.8)
    assert convergence_time_s(flows, 0, 10.0, 0.0, hold_s=1.0, threshold=0.75) == pytest.approx(3.8)


def test_convergence_time_is_none_if_the_level_is_never_held() -> None:
    flows = _delivering([0.0] * 10 + [4.0] * 20 + [10.0] * 30)
    assert convergence_time_s(flows, 0, 20.0, 0.0, hold_s=1.0) is None  # never 16 Mb/s
    assert convergence_time_s(flows, 0, 10.0, 0.0, hold_s=5.0) is None  # data end at 6 s


@pytest.mark.parametrize(
    ("rtt_ratios", "throughput_ratios", "k"),
    [
        ([2.0, 4.0, 10.0], [4.0, 16.0, 100.0], 2.0),  # x ∝ 1/RTT²
        ([0.5, 3.0], [2.0, 1 / 3], -1.0),
        ([2.0, 4.0], [2.0, 16.0], 1.8),  # u = (1, 2)·ln 2, y = (1, 4)·ln 2: 9/5
        ([1.0, 2.0], [1.2, 2.0], 1.0),  # equal RTTs do not enter the fit
        ([0.25], [1 / 16], 2.0),  # flow 1 has the longer RTT
    ],
)
def test_rtt_unfairness_exponent(
    rtt_ratios: list[float], throughput_ratios: list[float], k: float
) -> None:
    assert rtt_unfairness_exponent(rtt_ratios, throughput_ratios) == pytest.approx(k)


@pytest.mark.parametrize(
    ("rtt_ratios", "throughput_ratios", "message"),
    [
        ([], [], "different RTTs"),
        ([1.0, 1.0], [1.5, 2.0], "different RTTs"),
        ([2.0], [0.0], "positive"),
        ([2.0, 3.0], [4.0], "equal length"),
    ],
)
def test_rtt_unfairness_exponent_errors(
    rtt_ratios: list[float], throughput_ratios: list[float], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        rtt_unfairness_exponent(rtt_ratios, throughput_ratios)


@pytest.mark.parametrize(("series", "cov"), [([1.0, 3.0], 0.5), ([5.0] * 3, 0.0), ([2.0], 0.0)])
def test_coefficient_of_variation(series: list[float], cov: float) -> None:
    assert coefficient_of_variation(series) == pytest.approx(cov)


@pytest.mark.parametrize(("series", "message"), [([], "at least one"), ([0.0, 0.0], "zero mean")])
def test_coefficient_of_variation_errors(series: list[float], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        coefficient_of_variation(series)


def test_throughput_cov_over_one_second_bins() -> None:
    flows = _delivering([2.0, 2.0, 6.0, 6.0, 2.0, 2.0, 6.0, 6.0, 100.0], dt=0.5)
    assert throughput_cov(flows, 0, 1.0, end_s=4.0) == pytest.approx(0.5)
    assert throughput_cov(flows, 0, 0.5, end_s=1.0) == 0.0
    with pytest.raises(ValueError, match="zero mean"):
        throughput_cov(_delivering([0.0, 0.0]), 0, 0.1)


def test_rtt_cov_skips_samples_without_an_estimate_and_outside_the_window() -> None:
    flows = pd.DataFrame(
        {"t_s": [0.1, 0.2, 0.3, 0.4, 0.5], "flow": 0, "srtt_ms": [0.0, 10.0, 30.0, 10.0, 90.0]}
    )
    assert rtt_cov(flows, 0, end_s=0.45) == pytest.approx(np.std([10, 30, 10]) / (50 / 3))
    assert rtt_cov(flows, 0, start_s=0.25, end_s=0.35) == 0.0
    with pytest.raises(ValueError, match="at least one"):
        rtt_cov(flows, 0, end_s=0.1)


def test_mean_queue_of_the_named_link_in_a_window() -> None:
    links = pd.concat(
        [
            _links([1.0, 2.0, 3.0], [0, 0, 0]).assign(queue_pkts=[10.0, 20.0, 60.0]),
            _links([1.0], [0]).assign(link="access", queue_pkts=500.0),
        ]
    )
    assert mean_queue_pkts(links) == pytest.approx(30.0)
    assert mean_queue_pkts(links, end_s=2.0) == pytest.approx(15.0)
    assert mean_queue_pkts(links, link="access") == 500.0
    with pytest.raises(ValueError, match="no samples"):
        mean_queue_pkts(links, start_s=4.0)


def _flow_summary(sent: int, retransmits: int = 0, events: int = 0) -> dict[str, int]:
    return {"id": 0, "packets_sent": sent, "retransmits": retransmits, "congestion_events": events}


def test_loss_rate_is_bottleneck_drops_per_packet_sent_by_all_flows() -> None:
    summary = {"flows": [_flow_summary(400), _flow_summary(600)], "bottleneck": {"drops": 5}}
    assert loss_rate(summary) == pytest.approx(0.005)
    with pytest.raises(ValueError, match="no packets"):
        loss_rate({"flows": [_flow_summary(0)], "bottleneck": {"drops": 0}})


def test_retransmission_and_congestion_event_rates_per_packet_sent() -> None:
    flow = _flow_summary(1000, retransmits=30, events=2)
    assert retransmission_rate(flow) == pytest.approx(0.03)
    assert congestion_event_rate(flow) == pytest.approx(0.002)
    for rate in (retransmission_rate, congestion_event_rate):
        with pytest.raises(ValueError, match="sent no packets"):
            rate(_flow_summary(0))


def _links(t_s: list[float], tx_bytes: list[int]) -> pd.DataFrame:
    return pd.DataFrame(
        {"t_s": t_s, "link": "bottleneck", "queue_pkts": 0.0, "drops": 0, "tx_bytes": tx_bytes}
    )


def test_utilization_over_the_run_and_a_window() -> None:
    # 10 Mb/s link: idle the first second, then full.
    links = _links([1.0, 2.0, 3.0], [0, 1_250_000, 2_500_000])
    assert utilization(links, 10e6) == pytest.approx(2 / 3)
    assert utilization(links, 10e6, start_s=1.0) == pytest.approx(1.0)
    assert utilization(links, 10e6, start_s=0.0, end_s=1.5) == pytest.approx(1 / 3)


def test_utilization_reads_only_the_named_link() -> None:
    links = pd.concat([_links([1.0], [1_250_000]), _links([1.0], [0]).assign(link="access")])
    assert utilization(links, 10e6) == pytest.approx(1.0)
    assert utilization(links, 10e6, link="access") == 0.0


def test_goodput_is_the_increment_of_delivered_bytes_per_interval() -> None:
    flows = pd.DataFrame(
        {
            "t_s": [0.5, 1.0, 0.5, 1.0],
            "flow": [1, 1, 0, 0],
            "delivered_bytes": np.array([125_000, 125_000, 62_500, 187_500], dtype=np.uint64),
        }
    )
    goodput = goodput_mbps(flows)
    assert list(goodput["flow"]) == [0, 0, 1, 1]
    assert list(goodput["goodput_mbps"]) == pytest.approx([1.0, 2.0, 2.0, 0.0])


def test_goodput_is_bounded_by_each_flows_own_path_rate() -> None:
    # Both flows release 250 kB at 1.0 s after nothing at 0.5 s, rows interleaved. Flow 0's path
    # carries 2 Mb/s, so half of it must have arrived by 0.5 s; flow 1's rate is unknown.
    flows = pd.DataFrame(
        {
            "t_s": [1.5, 1.5, 1.0, 1.0, 0.5, 0.5],
            "flow": [0, 1, 1, 0, 0, 1],
            "delivered_bytes": np.array([250_000, 250_000, 250_000, 250_000, 0, 0], np.uint64),
        }
    )
    goodput = goodput_mbps(flows, {0: 2e6})
    assert list(goodput["flow"]) == [0, 0, 0, 1, 1, 1]
    assert list(goodput["goodput_mbps"]) == pytest.approx([2.0, 2.0, 0.0, 0.0, 4.0, 0.0])


def _cwnd(series: list[float], flow: int = 0, dt: float = 0.1) -> pd.DataFrame:
    return pd.DataFrame(
        {"t_s": dt * np.arange(1, len(series) + 1), "flow": flow, "cwnd_pkts": series}
    )


def test_recovery_time_counts_from_the_loss_to_regaining_the_target() -> None:
    # Loss at 0.25 s, halved at 0.3 s, back at 100 packets at 0.7 s.
    flows = _cwnd([100, 100, 100, 50, 60, 70, 100, 100])
    assert recovery_time(flows, 0, 0.25, 100) == pytest.approx(0.45)


def test_recovery_time_ignores_samples_before_the_loss_and_other_flows() -> None:
    own = _cwnd([10, 100, 100, 40, 100], flow=0)  # the dip at 0.1 s is slow start
    other = _cwnd([100, 100, 100, 100, 10], flow=1)
    assert recovery_time(pd.concat([own, other]), 0, 0.25, 100) == pytest.approx(0.25)


def test_recovery_time_is_none_without_a_dip_or_without_recovery() -> None:
    assert recovery_time(_cwnd([100, 100, 120]), 0, 0.0, 100) is None
    assert recovery_time(_cwnd([100, 50, 80, 99]), 0, 0.0, 100) is None
