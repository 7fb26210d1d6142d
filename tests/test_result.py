from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from pydantic import ValidationError

import tcpeval
from tcpeval.result import Result, load


def _result(goodput: float = 9.5) -> Result:
    flows = pd.DataFrame(
        {
            "t_s": [0.1, 0.2],
            "flow": np.array([0, 0], dtype=np.uint32),
            "cwnd_pkts": [10.0, 20.0],
            "ssthresh_pkts": [np.inf, 15.0],
            "srtt_ms": [20.0, 21.0],
            "inflight_pkts": [10.0, 20.0],
            "delivered_bytes": np.array([0, 2**40], dtype=np.uint64),
            "retransmits": np.array([0, 1], dtype=np.uint64),
            "pacing_rate_bps": [0.0, 0.0],
        }
    )
    links = pd.DataFrame(
        {
            "t_s": [0.1, 0.2],
            "link": ["bottleneck", "bottleneck"],
            "queue_pkts": [0.0, 3.0],
            "drops": np.array([0, 0], dtype=np.uint64),
            "tx_bytes": np.array([0, 2**40], dtype=np.uint64),
        }
    )
    flow = {"id": 0, "group": 0, "cc": "reno", "rtt_ms": 20.0, "goodput_mbps": goodput}
    summary = {
        "backend": {"name": "test", "wall_seconds": 0.0, "duration_s": 0.2},
        "scenario": {"name": "two samples"},
        "flows": [flow],
        "bottleneck": {"name": "bottleneck", "utilization": 0.5},
        "jain_index": 1.0,
    }
    return Result(summary, flows, links)


def test_a_summary_outside_the_schema_is_refused() -> None:
    valid = _result()
    with pytest.raises(ValidationError, match="backend"):
        Result({k: v for k, v in valid.summary.items() if k != "backend"}, valid.flows, valid.links)
    with pytest.raises(ValueError, match="srtt_ms"):
        Result(valid.summary, valid.flows.drop(columns="srtt_ms"), valid.links)


def test_save_then_load_gives_the_same_result(tmp_path: Path) -> None:
    original = _result()
    loaded = load(original.save(tmp_path / "run"))
    assert loaded.summary == original.summary
    pd.testing.assert_frame_equal(loaded.flows, original.flows)
    pd.testing.assert_frame_equal(loaded.links, original.links, check_dtype=False)
    assert list(loaded.links["link"]) == ["bottleneck", "bottleneck"]


def test_summary_json_is_sorted_and_indented(tmp_path: Path) -> None:
    text = (_result().save(tmp_path / "run") / "summary.json").read_text()
    assert text == json.dumps(_result().summary, indent=2, sort_keys=True) + "\n"
    assert text.index('"flows"') < text.index('"jain_index"')


def test_saving_again_replaces_the_earlier_result_and_leaves_no_litter(tmp_path: Path) -> None:
    _result(goodput=1.0).save(tmp_path / "run")
    (tmp_path / "run" / "cwnd.png").write_bytes(b"an old plot")
    _result(goodput=2.0).save(tmp_path / "run")
    assert load(tmp_path / "run").summary["flows"][0]["goodput_mbps"] == 2.0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"]
    assert not (tmp_path / "run" / "cwnd.png").exists()


def test_a_failed_save_keeps_the_earlier_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _result(goodput=1.0).save(tmp_path / "run")

    def disk_full(*args: object, **kwargs: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_parquet", disk_full)
    with pytest.raises(OSError, match="No space"):
        _result(goodput=2.0).save(tmp_path / "run")
    monkeypatch.undo()
    assert load(tmp_path / "run").summary["flows"][0]["goodput_mbps"] == 1.0
    assert sorted(path.name for path in tmp_path.iterdir()) == ["run"]


def test_a_directory_that_is_not_a_result_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "thesis").mkdir()
    (tmp_path / "thesis" / "chapter1.tex").write_text("precious")
    with pytest.raises(FileExistsError, match="not a tcpeval result"):
        _result().save(tmp_path / "thesis")
    assert (tmp_path / "thesis" / "chapter1.tex").read_text() == "precious"


def test_a_capture_is_saved_and_loaded_with_the_result(tmp_path: Path) -> None:
    result = _result()
    result.pcap = b"\xd4\xc3\xb2\xa1 a capture"
    directory = result.save(tmp_path / "run")
    assert (directory / "capture.pcap").read_bytes() == result.pcap
    assert load(directory).pcap == result.pcap
    assert load(_result().save(tmp_path / "other")).pcap is None


def test_the_goodput_column_never_exceeds_the_path_and_keeps_the_totals() -> None:
    """A 1 Gb/s path with random losses: differencing delivered_bytes shows the bursts a
    filled hole releases (above 1.5 Gb/s here); the column counts them when they must have
    arrived, so no sample passes 1 Gb/s (float rounding aside) and the bytes add up."""
    scenario = {
        "name": "bursts",
        "duration": "20s",
        "bottleneck": {"rate": "1Gbps", "queue": "100%bdp", "loss": 1e-5},
        "flow": [{"cc": "cubic", "rtt": "50ms"}],
    }
    flows = tcpeval.simulate(scenario).flows.sort_values("t_s")
    interval_s = np.diff(flows["t_s"], prepend=0.0)
    differenced = np.diff(flows["delivered_bytes"], prepend=0.0) * 8 / interval_s / 1e6
    assert differenced.max() > 1500
    assert flows["goodput_mbps"].max() <= 1000 * (1 + 1e-9)
    total_bytes = (flows["goodput_mbps"] * interval_s).sum() * 1e6 / 8
    assert total_bytes == pytest.approx(flows["delivered_bytes"].iloc[-1], rel=1e-9)
