"""The measurement window: chosen in the scenario or with --measure, honoured
by every backend's summary, recorded with the tool's version and the scenario's hash; the whole
run's figures stay beside the window's."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import tcpeval
from helpers import small_scenario
from tcpeval import metrics
from tcpeval.backends import run
from tcpeval.cli import app
from tcpeval.measurement import measured
from tcpeval.provenance import scenario_sha256, version
from tcpeval.scenario import ScenarioError, parse_scenario

runner = CliRunner()


def two_flows(**keys: object) -> dict[str, object]:
    """A Reno flow alone for 4 s, joined by a second at 4 s: 8 s on 10 Mb/s, 20 ms."""
    return {
        "duration": "8s",
        "bottleneck": {"rate": "10Mbps", "queue": "100%bdp"},
        "flow": [{"cc": "reno", "rtt": "20ms"}, {"cc": "reno", "rtt": "20ms", "start": "4s"}],
        **keys,
    }


def test_a_measurement_window_changes_the_summary_and_keeps_the_whole_run() -> None:
    whole = tcpeval.simulate(two_flows())
    half = tcpeval.simulate(two_flows(measure="second half"))
    assert whole.summary["measure"] == {"window": "whole run", "start_s": 0.0, "end_s": 8.0}
    assert half.summary["measure"] == {"window": "second half", "start_s": 4.0, "end_s": 8.0}
    first = (whole.summary["flows"][0], half.summary["flows"][0])
    # Alone for the first half, flow 0 averages far more over the run than over the second.
    assert first[1]["goodput_mbps"] < 0.8 * first[0]["goodput_mbps"]
    assert first[1]["whole_run_goodput_mbps"] == first[0]["goodput_mbps"]
    expected = metrics.mean_goodput_mbps(half.flows, 0, start_s=4.0, end_s=8.0)
    assert first[1]["goodput_mbps"] == pytest.approx(expected)
    goodputs = [flow["goodput_mbps"] for flow in half.summary["flows"]]
    assert half.summary["jain_index"] == pytest.approx(metrics.jain_index(goodputs))
    assert half.summary["whole_run_jain_index"] == whole.summary["jain_index"]
    bottleneck = half.summary["bottleneck"]
    assert bottleneck["whole_run_utilization"] == whole.summary["bottleneck"]["utilization"]
    assert bottleneck["mean_queue_pkts"] != bottleneck["whole_run_mean_queue_pkts"]


def test_the_model_backend_honours_the_window_too() -> None:
    scenario = two_flows(measure="6s..")
    modelled = run(scenario, "model")
    flow = modelled.summary["flows"][0]
    assert modelled.summary["measure"]["start_s"] == 6.0
    expected = metrics.mean_goodput_mbps(modelled.flows, 0, start_s=6.0, end_s=8.0)
    assert flow["goodput_mbps"] == pytest.approx(expected)
    assert flow["goodput_mbps"] < flow["whole_run_goodput_mbps"]


def test_each_flow_is_windowed_from_its_own_samples_in_whatever_order_they_come() -> None:
    # The window's goodputs come from one pass over the series (not a filter per flow, which
    # takes minutes for 10,000 flows); shuffled rows, a flow without samples and one with a
    # missing sample must give what the per-flow definition gives.
    scenario = parse_scenario(two_flows(measure="2s..7s"))
    result = tcpeval.simulate(scenario)
    shuffled = result.flows.sample(frac=1.0, random_state=1)
    shuffled = shuffled.astype({"delivered_bytes": float})
    shuffled.loc[shuffled["flow"] == 1, "delivered_bytes"] = float("nan")
    summary = dict(result.summary)
    summary["flows"] = [*result.summary["flows"], result.summary["flows"][0] | {"id": 7}]
    flows = measured(summary, shuffled, result.links, scenario)["flows"]
    expected = metrics.mean_goodput_mbps(result.flows, 0, start_s=2.0, end_s=7.0)
    assert flows[0]["goodput_mbps"] == expected
    assert flows[1]["goodput_mbps"] is None  # a missing sample
    assert flows[2]["goodput_mbps"] is None  # no samples at all


def test_a_lab_shaped_result_is_windowed_by_its_time_series() -> None:
    # The lab and the probe return the same shape with their own series: a bottleneck and its
    # reverse direction on the links, kernel flows that deliver 1 MB/s for 10 s.
    scenario = parse_scenario(
        {
            "duration": "10s",
            "measure": "5s..",
            "bottleneck": {"rate": "80Mbps", "queue": "100pkt"},
            "flow": [{"cc": "cubic", "rtt": "20ms"}],
        }
    )
    t_s = [float(t) for t in range(1, 11)]
    flows = pd.DataFrame(
        {"t_s": t_s, "flow": 0, "delivered_bytes": [1e6 * t for t in t_s]}
        | dict.fromkeys(("cwnd_pkts", "ssthresh_pkts", "srtt_ms", "inflight_pkts"), 0.0)
        | {"retransmits": 0, "pacing_rate_bps": 0.0}
    )
    links = pd.concat(
        [
            pd.DataFrame(
                {"t_s": t_s, "link": name, "queue_pkts": [0.0] * 4 + [10.0] * 6, "drops": 0}
                | {"tx_bytes": [1e6 * t * (1 if name == "bottleneck" else 0.01) for t in t_s]}
            )
            for name in ("bottleneck", "bottleneck:reverse")
        ]
    )
    link = {"utilization": 0.1, "drops": 0, "mean_queue_pkts": 5.0}
    summary = {
        "backend": {"name": "lab", "wall_seconds": 10.0, "duration_s": 10.0},
        "scenario": {"duration": "10s"},
        "flows": [{"id": 0, "group": 0, "cc": "cubic", "rtt_ms": 20.0, "goodput_mbps": 8.0}],
        "bottleneck": {"name": "bottleneck", **link},
        "links": [{"name": "bottleneck", **link}, {"name": "bottleneck:reverse", **link}],
        "jain_index": 1.0,
    }
    windowed = measured(summary, flows, links, scenario)
    assert windowed["flows"][0]["goodput_mbps"] == pytest.approx(8.0)
    assert windowed["bottleneck"]["mean_queue_pkts"] == pytest.approx(10.0)
    assert [link["utilization"] for link in windowed["links"]] == pytest.approx([0.1, 0.001])


@pytest.mark.parametrize(
    ("window", "reason"),
    [
        ("9s..", "does not fit in the run's duration (8s)"),
        ("..20s", "does not fit in the run's duration (8s)"),
        ("5s..2s", "must end after it starts"),
        ("first half", "must be 'whole run', 'second half' or 'START..END' (e.g. '60s..')"),
        ("-1s..", "must not start or end before the run"),
    ],
)
def test_a_bad_window_is_one_error_naming_measure_and_the_value(window: str, reason: str) -> None:
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(two_flows(measure=window))
    assert (raised.value.field, raised.value.value, raised.value.reason) == (
        "measure",
        window,
        reason,
    )


def test_sim_measure_option_sets_the_window_and_the_table_shows_it(tmp_path: Path) -> None:
    path = tmp_path / "two.toml"
    path.write_text(
        'duration = "8s"\nbottleneck = { rate = "10Mbps", queue = "100%bdp" }\n'
        '[[flow]]\ncc = "reno"\nrtt = "20ms"\n'
    )
    out = tmp_path / "out"
    done = runner.invoke(
        app,
        ["sim", str(path), "--out", str(out), "--no-plots", "--measure", "second half"],
        env={"COLUMNS": "120"},
    )
    assert done.exit_code == 0, done.output
    assert "measured over" in done.output
    assert "second half (4–8 s); counters: whole run" in done.output
    summary = json.loads((out / "summary.json").read_text())
    assert summary["measure"]["window"] == "second half"
    bad = runner.invoke(app, ["sim", str(path), "--out", str(out), "--measure", "soon"])
    assert bad.exit_code == 2
    assert bad.output.startswith("error: measure: 'soon' must be")


def test_every_summary_records_the_tool_version_and_the_scenario_hash(tmp_path: Path) -> None:
    result = tcpeval.simulate(small_scenario())
    assert result.summary["tcpeval_version"] == version() != "unknown"
    assert result.summary["scenario_sha256"] == scenario_sha256(result.summary["scenario"])
    other = tcpeval.simulate(small_scenario() | {"seed": 2})
    assert other.summary["scenario_sha256"] != result.summary["scenario_sha256"]
    modelled = run(small_scenario(), "model")
    assert modelled.summary["scenario_sha256"] == result.summary["scenario_sha256"]
    result.save(tmp_path / "r")
    saved = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert saved["tcpeval_version"] == version()
    printed = runner.invoke(app, ["--version"])
    assert printed.exit_code == 0
    assert printed.output == f"tcpeval {version()}\n"
