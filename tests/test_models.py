from __future__ import annotations

import math

import pytest

from tcpeval.models import (
    acked_per_increase,
    bdp_pkts,
    hstcp_response_window_pkts,
    mathis_goodput_bps,
    pftk_goodput_bps,
    reno_recovery_time_s,
    reno_response_window_pkts,
    scalable_response_window_pkts,
)


@pytest.mark.parametrize(
    ("rate_bps", "rtt_ms", "pkts"),
    # algorithms.md §10.4, 1500-byte packets
    [(250e6, 42, 875), (250e6, 324, 6750), (100e6, 162, 1350), (10e6, 82, 68)],
)
def test_bdp_matches_the_reference_table(rate_bps: float, rtt_ms: float, pkts: int) -> None:
    assert bdp_pkts(rate_bps, rtt_ms / 1e3, 1500) == pytest.approx(pkts, abs=0.5)


@pytest.mark.parametrize(("rate_bps", "p"), [(100e6, 2.2e-6), (1e9, 2.2e-8), (10e9, 2.2e-10)])
def test_mathis_fills_the_path_at_the_reference_loss_rates(rate_bps: float, p: float) -> None:
    # algorithms.md §10.1: 100 ms, 1500 B, the loss rate that lets Reno fill each rate.
    assert mathis_goodput_bps(1500, 0.1, p, b=1) == pytest.approx(rate_bps, rel=0.02)


def test_delayed_acks_counted_per_ack_cost_mathis_a_factor_root_two() -> None:
    every_packet = mathis_goodput_bps(1448, 0.06, 1e-4, b=1)
    delayed = mathis_goodput_bps(1448, 0.06, 1e-4, b=2)
    assert every_packet / delayed == pytest.approx(math.sqrt(2))
    # The mathis-random-loss example: about 24 Mb/s, or 17 with `abc = false`.
    assert every_packet / 1e6 == pytest.approx(23.7, abs=0.1)
    assert delayed / 1e6 == pytest.approx(16.8, abs=0.1)


@pytest.mark.parametrize(
    ("delayed_ack", "counts_packets", "b"),
    [(False, False, 1), (False, True, 1), (True, True, 1), (True, False, 2)],
)
def test_only_delayed_acks_counted_per_ack_make_b_two(
    delayed_ack: bool, counts_packets: bool, b: int
) -> None:
    assert acked_per_increase(delayed_ack, counts_packets) == b


@pytest.mark.parametrize("b", [1, 2])
def test_pftk_tends_to_mathis_at_low_loss(b: int) -> None:
    pftk = pftk_goodput_bps(1448, 0.1, 1e-6, rto_s=0.2, b=b)
    assert pftk == pytest.approx(mathis_goodput_bps(1448, 0.1, 1e-6, b), rel=0.01)


def test_pftk_is_capped_by_the_receiver_window() -> None:
    pftk = pftk_goodput_bps(1500, 0.1, 1e-8, rto_s=1.0, b=2, max_window_pkts=100)
    assert pftk == pytest.approx(100 * 1500 * 8 / 0.1, rel=0.01)


def test_pftk_timeouts_cost_more_the_longer_the_rto() -> None:
    short = pftk_goodput_bps(1448, 0.05, 0.05, rto_s=0.2, b=2)
    long = pftk_goodput_bps(1448, 0.05, 0.05, rto_s=2.0, b=2)
    assert long < 0.6 * short
    assert short < mathis_goodput_bps(1448, 0.05, 0.05, b=2)


def test_reno_recovery_is_half_a_window_of_rtts() -> None:
    # algorithms.md §10.4: W ≈ 4050 at 162 ms → 2025 RTTs ≈ 330 s.
    assert reno_recovery_time_s(4050, 0.162) == pytest.approx(328, abs=1)
    # 1 Gb/s × 200 ms with 1500-byte packets: W = 16 667, about 28 minutes.
    assert reno_recovery_time_s(bdp_pkts(1e9, 0.2, 1500), 0.2) / 60 == pytest.approx(27.8, abs=0.1)


@pytest.mark.parametrize(
    ("p", "window"),
    # RFC 3649 Table 1/2: Low_Window 38 at 1e-3 up to High_Window 83 000 at 1e-7.
    [(1e-2, 12), (1e-3, 38), (1e-4, 263), (1e-5, 1795), (1e-7, 83981)],
)
def test_hstcp_response_function(p: float, window: int) -> None:
    assert hstcp_response_window_pkts(p) == pytest.approx(window, rel=0.01)


def test_hstcp_is_standard_tcp_up_to_its_low_window_then_far_more_aggressive() -> None:
    for p in (1e-1, 1e-2, 2e-3):
        assert hstcp_response_window_pkts(p) == reno_response_window_pkts(p)
    assert hstcp_response_window_pkts(1e-5) > 4 * reno_response_window_pkts(1e-5)


def test_scalable_response_is_inverse_in_p() -> None:
    assert scalable_response_window_pkts(1e-3) == pytest.approx(80)
    assert scalable_response_window_pkts(1e-6) == pytest.approx(80_000)
