from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from tcpeval.metrics import goodput_mbps, jain_index, recovery_time, utilization


@pytest.mark.parametrize(
    ("shares", "index"),
    [([5.0, 5.0], 1.0), ([1.0, 0.0], 0.5), ([3.0, 0, 0], 1 / 3), ([1.0, 2.0], 0.9), ([0, 0], 1.0)],
)
def test_jain_index(shares: list[float], index: float) -> None:
    assert jain_index(shares) == pytest.approx(index)


def test_jain_index_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one"):
        jain_index([])


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
