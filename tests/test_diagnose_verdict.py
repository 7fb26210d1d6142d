"""The verdict's rules on evidence made by hand: each limit, and the order that settles
cases where one limit shows through another (docs/diagnose.md, "Verdicts")."""

from __future__ import annotations

from typing import Any

from tcpeval.diagnose.evidence import CpuEvidence, DiskEvidence, Evidence, PathEvidence, TcpEvidence
from tcpeval.diagnose.verdict import decide
from tcpeval.models import mathis_goodput_bps

CAPACITY_BPS = 100e6


def tcp(goodput_bps: float, **changes: Any) -> TcpEvidence:
    fields = {
        "streams": 1, "goodput_bps": goodput_bps, "srtt_ms": 40.0, "min_rtt_ms": 40.0,
        "mss_bytes": 1448, "retransmits": 0, "segments_sent": 100_000, "loss_rate": 0.0,
        "rwnd_limited": 0.0, "sndbuf_limited": 0.0, "app_limited": 0.0,
        "advertised_window_bytes": 3e6, "zero_window": 0.0,
        "mathis_bps": None,
    }  # fmt: skip
    return TcpEvidence(**(fields | changes))


def cpu(end: str, **changes: Any) -> CpuEvidence:
    role = "sender" if end == "client" else "receiver"
    fields = {"end": end, "role": role, "busiest_thread": 0.05, "most_waiting_thread": 0.01,
              "throttled": None, "busiest_core": 0.3, "softirq": 0.05}  # fmt: skip
    return CpuEvidence(**(fields | changes))


def evidence(single: TcpEvidence, **changes: Any) -> Evidence:
    path = PathEvidence(
        capacity_bps=CAPACITY_BPS, udp_capacity_bps=CAPACITY_BPS, udp_sender_limited=False,
        capacity_known=True, udp_sent=4000, udp_lost=0, udp_loss=0.0,
    )  # fmt: skip
    multi = single.model_copy(
        update={"streams": 4, "goodput_bps": min(95e6, 4 * single.goodput_bps)}
    )
    fields = {"path": path, "single": single, "multi": multi,
              "cpu": [cpu("client"), cpu("server")], "disks": [], "notes": []}  # fmt: skip
    return Evidence(**(fields | changes))


def test_a_full_link_is_the_path_whatever_else_shows():
    e = evidence(tcp(93e6, rwnd_limited=0.7), cpu=[cpu("server", most_waiting_thread=0.8)])
    assert decide(e).limit == "path_capacity"


def test_a_link_full_by_tcp_alone_is_not_called_full_when_udp_could_not_measure_it():
    e = evidence(tcp(22e6), cpu=[cpu("client"), cpu("server", most_waiting_thread=0.95)])
    e.path.capacity_known = False
    e.path.capacity_bps = 23e6
    assert decide(e).limit == "cpu"


def test_a_starved_receiver_is_the_cause_of_its_closed_window():
    e = evidence(tcp(30e6, rwnd_limited=0.9), cpu=[cpu("client"), cpu("server", throttled=0.95)])
    verdict = decide(e)
    assert verdict.limit == "cpu"
    assert "receiver CPU limited (server)" in verdict.headline
    assert "quota" in verdict.headline


def test_a_closed_window_with_a_throttled_receiver_is_its_cpu():
    # Measured on a lab path (server capped at 1 ms of CPU per second): the window closed in
    # 45% of the samples, rwnd-limited 66%, throttled 5.5% of the time, a thread waiting 6.6%.
    starved = cpu("server", throttled=0.055, most_waiting_thread=0.066)
    closed = tcp(17e6, rwnd_limited=0.66, advertised_window_bytes=512.0, zero_window=0.45)
    assert decide(evidence(closed, cpu=[cpu("client"), starved])).limit == "cpu"
    # A small buffer keeps the window open at its size: that is the window, not the CPU.
    small = tcp(16e6, rwnd_limited=0.9, advertised_window_bytes=80_000.0)
    assert decide(evidence(small, cpu=[cpu("client"), starved])).limit == "receiver_window"


def test_the_more_starved_end_is_named():
    ends = [cpu("client", most_waiting_thread=0.55), cpu("server", most_waiting_thread=0.9)]
    assert "(server)" in decide(evidence(tcp(30e6), cpu=ends)).headline


def test_receiver_window_advice_is_twice_the_bdp():
    # 1 Gb/s × 100 ms = 12.5 MB; twice that, rounded up to whole MiB: 24 MiB.
    e = evidence(tcp(100e6, rwnd_limited=0.8, min_rtt_ms=100.0))
    e.path.capacity_bps = 1e9
    verdict = decide(e)
    assert verdict.limit == "receiver_window"
    assert f"net.core.rmem_max={24 << 20}" in verdict.advice[0]


def test_send_buffer():
    verdict = decide(evidence(tcp(20e6, sndbuf_limited=0.9)))
    assert verdict.limit == "send_buffer"
    assert "wmem" in verdict.advice[0]


def test_a_greedy_senders_empty_queue_counts_for_its_send_buffer():
    # Measured on a lab path with tcp_wmem capped at 64 KiB: 30% sndbuf-limited, and half of
    # the samples app-limited although the probe never stops writing.
    assert decide(evidence(tcp(7e6, sndbuf_limited=0.3, app_limited=0.51))).limit == "send_buffer"
    assert decide(evidence(tcp(7e6, app_limited=0.9))).limit == "unexplained"


def test_loss_advises_streams_from_mathis_and_lists_the_predictions():
    mathis = mathis_goodput_bps(1448, 0.04, 1e-3)
    single = tcp(12e6, retransmits=100, loss_rate=1e-3, mathis_bps=mathis)
    verdict = decide(evidence(single), {"reno": 11e6, "bbr": 94e6})
    assert verdict.limit == "path_loss"
    # 100 Mb/s over Mathis's 11.2 Mb/s per stream: 9 streams.
    assert verdict.advice[0].startswith("9 parallel streams")
    assert "(best: bbr)" in verdict.advice[1]


def test_a_slow_disk_binds_before_the_network():
    disk = DiskEvidence(end="client", path="/data", read_bps=40e6, write_bps=200e6)
    assert decide(evidence(tcp(93e6), disks=[disk])).limit == "disk"
    fast = disk.model_copy(update={"read_bps": 2e9})
    assert decide(evidence(tcp(93e6), disks=[fast])).limit == "path_capacity"


def test_the_receiving_disk_counts_by_its_write_rate():
    near = DiskEvidence(end="client", path="/data", read_bps=2e9, write_bps=30e6)
    far = DiskEvidence(end="server", path="server --root", read_bps=2e9, write_bps=50e6)
    verdict = decide(evidence(tcp(93e6), disks=[near, far]))
    assert verdict.limit == "disk"
    assert "the server's server --root writes at 50.0 Mb/s" in verdict.headline


def test_nothing_found_is_said_so():
    assert decide(evidence(tcp(50e6))).limit == "unexplained"
