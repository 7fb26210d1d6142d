"""Network and host conditions run through the simulator: each condition has the
effect it should, and the result carries what the contract adds (links, sources, transfers,
exchanges, the pcap capture)."""

from __future__ import annotations

import io
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import dpkt
import numpy as np
import pytest

from helpers import small_scenario
from tcpeval import ScenarioError, _core, load, simulate

LINKTYPE_RAW = 101  # the record starts with the IPv4 header


def _one_flow(**flow: object) -> dict[str, Any]:
    """One Reno flow alone on 10 Mb/s, RTT 20 ms, for 3 s."""
    return {
        "duration": "3s",
        "bottleneck": {"rate": "10Mbps", "queue": "100%bdp"},
        "flow": [{"cc": "reno", "rtt": "20ms", **flow}],
    }


def test_cbr_takes_its_rate_and_reno_the_rest() -> None:
    data = _one_flow() | {"cbr": [{"rate": "4Mbps"}]}
    summary = simulate(data).summary
    [cbr] = summary["sources"]
    assert cbr["kind"] == "cbr"
    assert cbr["goodput_mbps"] == pytest.approx(4.0, rel=0.05)
    assert summary["flows"][0]["goodput_mbps"] == pytest.approx(6.0, rel=0.15)


def hurst_aggregated_variance(series: np.ndarray) -> float:
    """Hurst parameter from how the variance of block means falls with the block size m:
    Var ∝ m^(2H - 2) (Beran, "Statistics for long-memory processes", 1994)."""
    sizes = np.unique(np.logspace(0, np.log10(len(series) // 20), 15).astype(int))
    variances = [series[: len(series) // m * m].reshape(-1, m).mean(axis=1).var() for m in sizes]
    slope = np.polyfit(np.log(sizes), np.log(variances), 1)[0]
    return 1 + slope / 2


def _onoff_bytes(shape: float) -> np.ndarray:
    """Bytes per 10 ms on a link that only 50 Pareto on/off sources use, for 1000 s."""
    result = simulate(
        {
            "duration": "1000s",
            "sample_interval": "10ms",
            "bottleneck": {"rate": "1Gbps", "queue": "1000pkt"},
            "flow": [{"cc": "reno", "rtt": "20ms", "start": "999s", "window": "1pkt"}],
            "onoff": [{"rate": "1Mbps", "count": 50, "shape": shape}],
        }
    )
    tx_bytes = result.links[result.links["link"] == "bottleneck"]["tx_bytes"]
    return np.diff(tx_bytes.to_numpy(np.int64)).astype(float)


def test_pareto_onoff_aggregate_is_self_similar_with_hurst_near_3_minus_shape_over_2() -> None:
    hurst = {shape: hurst_aggregated_variance(_onoff_bytes(shape)) for shape in (1.2, 1.4, 1.8)}
    assert hurst[1.4] == pytest.approx((3 - 1.4) / 2, abs=0.1)
    assert hurst[1.2] > hurst[1.4] > hurst[1.8] > 0.5  # heavier tails, longer memory


def test_gilbert_elliott_loss_drops_in_bursts() -> None:
    loss = {"model": "gilbert_elliott", "p": 0.001, "r": 0.25}
    data = _one_flow() | {"duration": "10s"}
    data["bottleneck"] |= {"loss": loss, "queue": "1000pkt"}
    summary = simulate(data).summary
    assert summary["bottleneck"]["random_drops"] > 0
    assert summary["bottleneck"]["queue_drops"] == 0


@pytest.mark.parametrize("aqm", ["red", "codel"])
def test_aqm_keeps_the_queue_shorter_than_droptail(aqm: str) -> None:
    def mean_queue(discipline: str) -> float:
        data = _one_flow(count=4) | {"duration": "10s"}
        data["bottleneck"] |= {"queue": "200pkt", "aqm": discipline}
        return simulate(data).summary["bottleneck"]["mean_queue_pkts"]

    assert mean_queue(aqm) < 0.7 * mean_queue("droptail")


def test_parking_lot_the_flow_crossing_every_link_gets_least() -> None:
    links = [{"name": n, "rate": "10Mbps", "delay": "2ms", "queue": "50pkt"} for n in "abc"]
    long = {"cc": "reno", "rtt": "20ms", "route": ["a", "b", "c"]}
    cross = [{"cc": "reno", "rtt": "20ms", "route": [name]} for name in "abc"]
    summary = simulate({"duration": "10s", "link": links, "flow": [long, *cross]}).summary
    goodputs = [flow["goodput_mbps"] for flow in summary["flows"]]
    assert goodputs[0] < min(goodputs[1:])
    assert [link["name"] for link in summary["links"]] == ["a", "b", "c"]
    assert all(link["utilization"] > 0.8 for link in summary["links"])


def test_reverse_traffic_shares_the_ack_path() -> None:
    data = _one_flow()
    data["flow"].append({"cc": "reno", "rtt": "20ms", "direction": "reverse"})
    result = simulate(data)
    assert set(result.links["link"]) == {"bottleneck", "bottleneck:reverse"}
    names = [link["name"] for link in result.summary["links"]]
    assert "bottleneck:reverse" in names
    assert all(flow["goodput_mbps"] > 2 for flow in result.summary["flows"])


def test_striped_transfer_completes_with_its_last_stream() -> None:
    summary = simulate(_one_flow(size="2MB", streams=8)).summary
    [transfer] = summary["transfers"]
    completions = [flow["completion_s"] for flow in summary["flows"]]
    assert transfer["flows"] == list(range(8))
    assert transfer["bytes"] == 2_000_000
    assert transfer["completion_s"] == max(completions)
    assert sum(flow["bytes_delivered"] for flow in summary["flows"]) == 2_000_000


def test_an_unfinished_transfer_has_no_completion() -> None:
    summary = simulate(_one_flow(size="100MB", streams=2)).summary
    assert summary["transfers"][0]["completion_s"] is None


def test_request_response_latency_in_rtts() -> None:
    data = small_scenario()
    data["reqresp"] = [{"cc": "reno", "rtt": "20ms", "count": 5, "response": "100KB"}]
    summary = simulate(data).summary
    [exchange] = summary["exchanges"]
    latencies = np.array(exchange["latencies_s"])
    assert len(latencies) == 5
    assert exchange["latency_rtts"] == pytest.approx(list(latencies / 0.020))
    assert min(exchange["latency_rtts"]) >= 1.0  # a request and its response take an RTT


def test_web_flows_are_short_finite_transfers() -> None:
    data = small_scenario()
    data["web"] = [{"cc": "reno", "rtt": "20ms", "arrival_rate": 10.0, "mean_size": "20KB"}]
    flows = simulate(data).summary["flows"][2:]
    assert len(flows) > 10
    assert {flow["group"] for flow in flows} == {1}
    assert sum(flow["completion_s"] is not None for flow in flows) >= 0.8 * len(flows)


def test_drop_every_n_at_the_receiver() -> None:
    summary = simulate(_one_flow(drop_every=100)).summary
    flow = summary["flows"][0]
    assert flow["receiver_drops"] == pytest.approx(flow["packets_sent"] / 100, abs=2)


@pytest.mark.parametrize(
    ("key", "value", "limit_mbps"),
    [("pacing", "3Mbps", 3.0), ("sink_rate", "2Mbps", 2.0), ("source_rate", "4Mbps", 4.0)],
)
def test_a_rate_limit_caps_goodput(key: str, value: str, limit_mbps: float) -> None:
    # Delivered bytes include what waits in the receive buffer (2 BDP = 50 kB): up to 4% more.
    data = _one_flow(**{key: value}) | {"duration": "10s"}
    goodput = simulate(data).summary["flows"][0]["goodput_mbps"]
    assert 0.8 * limit_mbps < goodput <= 1.05 * limit_mbps


def test_a_pacing_gap_spaces_packets() -> None:
    # 1 ms between 1500-byte packets: at most 12 Mb/s on the wire, 11.6 Mb/s of payload.
    data = _one_flow(pacing="1ms")
    data["bottleneck"]["rate"] = "100Mbps"
    goodput = simulate(data).summary["flows"][0]["goodput_mbps"]
    assert 5 < goodput <= 11.6


def test_jumbo_frames_fill_the_pipe_faster() -> None:
    def goodput(mss: str) -> float:
        data = _one_flow(mss=mss) | {"duration": "1s"}
        data["bottleneck"] |= {"rate": "1Gbps"}
        data["flow"][0]["rtt"] = "50ms"
        return simulate(data).summary["flows"][0]["goodput_mbps"]

    assert goodput("8948B") > goodput("2948B")


# The pcap capture


def _captured(tmp_path: Path) -> tuple[dict[str, Any], list[tuple[float, bytes]], Path]:
    """Two Reno flows with the bottleneck captured, saved and loaded back."""
    directory = simulate(small_scenario() | {"pcap": "bottleneck"}).save(tmp_path / "run")
    result = load(directory)
    assert result.pcap is not None
    reader = dpkt.pcap.Reader(io.BytesIO(result.pcap))
    assert reader.datalink() == LINKTYPE_RAW
    return result.summary, list(reader), directory / "capture.pcap"


def test_pcap_records_every_packet_leaving_the_link_with_its_sequence_number(
    tmp_path: Path,
) -> None:
    summary, records, _ = _captured(tmp_path)
    packets = [dpkt.ip.IP(data) for _, data in records]
    assert sum(packet.len for packet in packets) == summary["bottleneck"]["tx_bytes"]
    seqs: dict[int, list[int]] = defaultdict(list)
    for packet in packets:
        assert isinstance(packet.data, dpkt.tcp.TCP)
        seqs[int.from_bytes(packet.src[2:], "big")].append(packet.data.seq)  # 10.0.x.y: flow
    assert sorted(seqs) == [flow["id"] for flow in summary["flows"]]
    for flow in summary["flows"]:
        flow_seqs = seqs[flow["id"]]
        assert len(flow_seqs) <= flow["packets_sent"]
        assert all(seq % 1448 == 0 for seq in flow_seqs)  # seq = segment number · mss
        # every segment delivered in order left the bottleneck at least once
        assert set(range(0, flow["bytes_delivered"], 1448)) <= set(flow_seqs)
    times = [time for time, _ in records]
    assert times == sorted(times)
    assert times[-1] <= 3.0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed")
def test_tshark_reads_the_capture(tmp_path: Path) -> None:
    _, records, path = _captured(tmp_path)
    run = subprocess.run(
        ["tshark", "-r", str(path), "-T", "fields", "-e", "tcp.seq_raw"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert len(run.stdout.splitlines()) == len(records)


def test_no_capture_without_pcap(tmp_path: Path) -> None:
    result = simulate(small_scenario())
    assert result.pcap is None
    assert not (result.save(tmp_path / "run") / "capture.pcap").exists()


# Core errors point at the user's tables


@pytest.mark.parametrize(
    ("entry", "key", "field"),
    [
        (("links", 1), "queue", "link[0].queue"),
        (("links", 0), "rate", "bottleneck.rate"),
        (("sources", 1), "rate", "onoff[0].rate"),
        (("flows", 3), "cc.beta", "reqresp[0].cc.beta"),
        (("exchanges", 0), "count", "reqresp[0].count"),
        ((None, None), "duration", "duration"),
    ],
)
def test_core_errors_name_the_table_the_entry_came_from(
    monkeypatch: pytest.MonkeyPatch,
    entry: tuple[str | None, int | None],
    key: str,
    field: str,
) -> None:
    def reject(resolved_json: str, progress: object = None) -> None:
        raise _core.ScenarioRejected(*entry, key, "42", "is wrong")

    monkeypatch.setattr(_core, "simulate", reject)
    data = small_scenario()
    data["link"] = [{"name": "wan", "rate": "1Gbps", "queue": "10pkt"}]
    data["cbr"] = [{"rate": "1Mbps"}]
    data["onoff"] = [{"rate": "1Mbps"}]
    data["reqresp"] = [{"cc": "reno", "rtt": "20ms"}]
    with pytest.raises(ScenarioError) as raised:
        simulate(data)
    assert (raised.value.field, raised.value.value, raised.value.reason) == (
        field,
        "42",
        "is wrong",
    )


def test_a_black_hole_swallows_only_the_larger_segments_and_mtu_probing_is_refused() -> None:
    """The simulator's senders keep their MSS: behind a 1400-byte black hole a flow of
    1500-byte packets delivers nothing, each of them the black hole's, while one of 1352-byte
    packets (mss 1300) runs; asking the senders to probe is refused by name."""
    data: dict[str, Any] = {
        "duration": "2s",
        "bottleneck": {"rate": "10Mbps", "mtu_black_hole": 1400},
        "flow": [{"cc": "reno", "rtt": "20ms"}, {"cc": "reno", "rtt": "20ms", "mss": "1300B"}],
    }
    result = simulate(data)
    link, (large, small) = result.summary["bottleneck"], result.summary["flows"]
    assert large["bytes_delivered"] == 0
    assert small["goodput_mbps"] > 5.0, small
    # Every packet of the large flow, none of the small one's.
    assert link["black_hole_drops"] == large["packets_sent"] > 0
    data["flow"][0]["mtu_probing"] = True
    with pytest.raises(ScenarioError, match=r"flow\[0\]\.mtu_probing"):
        simulate(data)
