from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from helpers import SMALL_TOML, small_scenario
from tcpeval import Scenario, ScenarioError, simulate
from tcpeval.metrics import jain_index, recovery_time, utilization
from tcpeval.models import reno_recovery_time_s
from tcpeval.result import (
    ALGORITHM_COLUMN,
    FLOW_COLUMNS,
    GOODPUT_COLUMN,
    LINK_COLUMNS,
    SIM_FLOW_COLUMNS,
    SIM_LINK_COLUMNS,
)
from tcpeval.scenario import cc_algorithms, describe, parse_scenario


@pytest.fixture(scope="module")
def small_result():
    return simulate(small_scenario())


def test_time_series_have_the_contract_columns_and_one_row_per_sample(small_result) -> None:
    flows, links = small_result.flows, small_result.links
    flow_columns = (*FLOW_COLUMNS, *SIM_FLOW_COLUMNS, ALGORITHM_COLUMN, GOODPUT_COLUMN)
    assert tuple(flows.columns) == flow_columns
    assert tuple(links.columns) == (*LINK_COLUMNS, *SIM_LINK_COLUMNS)
    samples = np.arange(1, 31) * 0.1  # every 100 ms up to and including 3 s
    for flow in (0, 1):
        assert flows[flows["flow"] == flow]["t_s"].to_numpy() == pytest.approx(samples)
    assert links["t_s"].to_numpy() == pytest.approx(samples)
    assert set(links["link"]) == {"bottleneck"}


def test_cumulative_counters_never_decrease(small_result) -> None:
    for _, rows in small_result.flows.groupby("flow"):
        assert (np.diff(rows["delivered_bytes"].to_numpy(np.int64)) >= 0).all()
        assert (np.diff(rows["retransmits"].to_numpy(np.int64)) >= 0).all()
    assert (np.diff(small_result.links["tx_bytes"].to_numpy(np.int64)) >= 0).all()


def test_summary_adds_the_scenario_and_jain_index(small_result) -> None:
    summary = small_result.summary
    assert summary["scenario"] == describe(parse_scenario(small_scenario()))
    goodputs = [flow["goodput_mbps"] for flow in summary["flows"]]
    assert summary["jain_index"] == jain_index(goodputs)
    assert [flow["id"] for flow in summary["flows"]] == [0, 1]


def test_two_flows_share_a_small_link_sensibly(small_result) -> None:
    summary = small_result.summary
    assert sum(flow["goodput_mbps"] for flow in summary["flows"]) <= 10.0
    assert 0.5 < summary["bottleneck"]["utilization"] <= 1.0
    assert utilization(small_result.links, 10e6) == pytest.approx(
        summary["bottleneck"]["utilization"], abs=0.02
    )


def test_a_scenario_can_be_a_model_a_dict_or_a_file(tmp_path: Path) -> None:
    data = small_scenario() | {"duration": "1s"}
    path = tmp_path / "small.toml"
    path.write_text(SMALL_TOML.replace('duration = "3s"', 'duration = "1s"'))
    sources = [Scenario.model_validate(data), data, str(path), path]
    first, *others = [simulate(source).summary for source in sources]
    for summary in others:
        assert summary["flows"] == first["flows"]


def test_core_errors_name_the_flow_table_they_came_from() -> None:
    data = small_scenario()  # group 0 expands to flows 0 and 1
    data["flow"].append({"cc": {"name": "reno", "no_such_parameter": 1}, "rtt": "20ms"})
    with pytest.raises(ScenarioError) as raised:
        simulate(data)
    assert raised.value.field.startswith("flow[1].cc")
    assert "no_such_parameter" in str(raised.value)


def test_every_registered_algorithm_runs() -> None:
    for algorithm in cc_algorithms():
        data = small_scenario()
        data["duration"] = "1s"
        data["flow"][0]["cc"] = algorithm["name"]
        summary = simulate(data).summary
        assert {flow["cc"] for flow in summary["flows"]} == {algorithm["name"]}


def test_reno_recovers_from_one_loss_in_half_a_window_of_rtts() -> None:
    # 50 Mb/s × 20 ms: W = 83 packets, so (W/2)·RTT = 0.83 s.
    result = simulate(
        {
            "duration": "3s",
            "sample_interval": "10ms",
            "bottleneck": {"rate": "50Mbps", "queue": "200%bdp"},
            "flow": [
                {
                    "cc": "reno",
                    "rtt": "20ms",
                    "window": "100%bdp",
                    "delayed_ack": False,
                    "drop_at": ["1s"],
                }
            ],
        }
    )
    window = result.summary["scenario"]["flow"][0]["window_pkts"]
    measured = recovery_time(result.flows, 0, 1.0, window)
    assert measured == pytest.approx(reno_recovery_time_s(window, 0.020), rel=0.15)
    assert result.summary["bottleneck"]["induced_drops"] == 1
