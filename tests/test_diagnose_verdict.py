"""The verdict's relations on evidence made by hand: each limit named when its arithmetic
explains the rate, the causes ranked before their symptoms, CPU contention shown but not
taken for the limit (docs/diagnose.md, "Verdicts")."""

from __future__ import annotations

from typing import Any

from tcpeval.diagnose.evidence import (
    CpuEvidence,
    DiskEvidence,
    Evidence,
    OtherProgram,
    PathEvidence,
    TcpEvidence,
)
from tcpeval.diagnose.measure import TrainEvidence
from tcpeval.diagnose.verdict import decide
from tcpeval.models import mathis_goodput_bps

CAPACITY_BPS = 100e6
# One stream's goodput on the wire: 1448 B of payload cost 1500 B (timestamps on).
WIRE = 1500 / 1448


def tcp(goodput_bps: float, **changes: Any) -> TcpEvidence:
    fields = {
        "streams": 1, "goodput_bps": goodput_bps, "srtt_ms": 40.0, "min_rtt_ms": 40.0,
        "mss_bytes": 1448, "retransmits": 0, "segments_sent": 100_000, "loss_rate": 0.0,
        "rwnd_limited": 0.0, "sndbuf_limited": 0.0, "app_limited": 0.0,
        "advertised_window_bytes": 3e6, "advertised_window_mean_bytes": 3e6,
        "zero_window": 0.0, "mathis_bps": None, "window_scale": 7,
        "send_buffer_bytes": 4e6, "cc": "cubic",
    }  # fmt: skip
    fields = fields | changes
    # A test out of slow start: the second half goes at the whole test's rate.
    return TcpEvidence(**({"steady_goodput_bps": fields["goodput_bps"]} | fields))


def cpu(end: str, **changes: Any) -> CpuEvidence:
    role = "sender" if end == "client" else "receiver"
    fields = {"end": end, "role": role, "busiest_thread": 0.05, "most_waiting_thread": 0.01,
              "busiest_thread_runnable": 0.06, "throttled": None, "busiest_core": 0.3,
              "softirq": 0.05}  # fmt: skip
    return CpuEvidence(**(fields | changes))


def path(**changes: Any) -> PathEvidence:
    fields = {
        "capacity_bps": CAPACITY_BPS, "udp_capacity_bps": CAPACITY_BPS,
        "udp_sender_limited": False, "capacity_known": True, "udp_sent": 4000, "udp_lost": 0,
        "udp_loss": 0.0, "burst_sent": 2000, "burst_received": 1700, "burst_lost": 300,
        # A drop-tail queue of one BDP at 40 ms fills before it drops.
        "burst_owd_variation_ns": 40_000_000,
    }  # fmt: skip
    return PathEvidence(**(fields | changes))


def evidence(single: TcpEvidence, **changes: Any) -> Evidence:
    multi = single.model_copy(
        update={"streams": 4, "goodput_bps": min(95e6, 4 * single.goodput_bps)}
    )
    fields = {"path": path(), "single": single, "multi": multi,
              "cpu": [cpu("client"), cpu("server")], "disks": [], "notes": []}  # fmt: skip
    return Evidence(**(fields | changes))


def window_rate_bps(window_bytes: float, rtt_ms: float) -> float:
    return window_bytes * 8 / (rtt_ms / 1e3) / WIRE


def test_a_full_link_is_the_path_and_the_window_that_also_fits_comes_second():
    # 400 KiB over 40 ms is 82 Mb/s: the window also explains the rate, within its band.
    single = tcp(93e6, rwnd_limited=0.7, advertised_window_mean_bytes=420e3)
    verdict = decide(evidence(single, cpu=[cpu("server", most_waiting_thread=0.8)]))
    assert [f.limit for f in verdict.ranked] == ["path_capacity", "receiver_window"]
    assert "; and receiver-window limited" in verdict.headline


def test_a_link_full_by_tcp_alone_is_not_called_full_when_udp_could_not_measure_it():
    e = evidence(tcp(22e6), path=path(capacity_known=False, capacity_bps=23e6))
    assert "path_capacity" not in {f.limit for f in decide(e).fits}


def test_a_window_that_explains_the_rate_is_named_on_a_busy_host():
    # Seen on a site's host with other programs running: one stream at 6 Mb/s, an advertised
    # window of 49 KB and a 48 ms smoothed RTT (window/RTT = 8.2 Mb/s), rwnd-limited 46% of
    # the time, the busiest thread at 0.4% of a core while a thread waited for a CPU 55%.
    single = tcp(6e6, srtt_ms=48.0, rwnd_limited=0.46, advertised_window_mean_bytes=49e3)
    busy = cpu("server", busiest_thread=0.004, most_waiting_thread=0.55,
               busiest_thread_runnable=0.554,
               others=[OtherProgram(pid=4242, command="cc1plus", cores=0.97)])  # fmt: skip
    verdict = decide(evidence(single, cpu=[cpu("client"), busy]))
    assert verdict.limit == "receiver_window"
    assert verdict.ranked[0].residual is not None
    assert -0.35 < verdict.ranked[0].residual < 0
    assert [f.limit for f in verdict.ranked] == ["receiver_window"]
    # The contention is shown, with who else ran, and not taken for the limit.
    assert "waited for a CPU 55%" in verdict.contention[0]
    assert "cc1plus (pid 4242) 97%" in verdict.contention[0]


def test_a_receiver_starved_by_its_quota_is_the_cause_of_its_closed_window():
    # Measured on a lab path (server capped at 1 ms of CPU per second): the window closed in
    # 54% of the samples, rwnd-limited 61%; the quota ran out in every period, though its
    # accounting says 73% of it was used; the busiest thread runnable 83% of the time.
    closed = tcp(24.8e6, rwnd_limited=0.61, zero_window=0.54, advertised_window_mean_bytes=1e6)
    starved = cpu("server", throttled=0.75, most_waiting_thread=0.86,
                  busiest_thread_runnable=0.83, quota_used=0.73, throttled_periods=1.0)  # fmt: skip
    verdict = decide(evidence(closed, cpu=[cpu("client"), starved]))
    assert [f.limit for f in verdict.ranked] == ["cpu", "receiver_application"]
    assert "receiver's (server) CPU: its cgroup's quota periods run out at 100%" in verdict.headline
    assert verdict.advice[0].startswith("give the server more CPU")


def test_a_reader_that_sleeps_while_its_window_is_closed_is_the_application():
    closed = tcp(17e6, rwnd_limited=0.8, zero_window=0.4, advertised_window_mean_bytes=90e3)
    assert decide(evidence(closed)).limit == "receiver_application"


def test_a_window_never_scaled_is_named_as_such():
    rate = 0.9 * window_rate_bps(64e3, 40.0)
    single = tcp(rate, rwnd_limited=0.9, advertised_window_mean_bytes=64e3, window_scale=0)
    verdict = decide(evidence(single))
    assert verdict.limit == "window_scaling"
    assert "64 KiB" in verdict.advice[0]
    scaled = single.model_copy(update={"window_scale": 2})
    assert decide(evidence(scaled)).limit == "receiver_window"


def test_receiver_window_advice_is_twice_the_bdp():
    # 1 Gb/s × 100 ms = 12.5 MB; twice that, rounded up to whole MiB: 24 MiB.
    rate = window_rate_bps(1e6, 100.0)
    single = tcp(rate, rwnd_limited=0.8, srtt_ms=100.0, min_rtt_ms=100.0,
                 advertised_window_mean_bytes=1e6)  # fmt: skip
    e = evidence(single, path=path(capacity_bps=1e9, udp_capacity_bps=1e9))
    verdict = decide(e)
    assert verdict.limit == "receiver_window"
    assert f"net.core.rmem_max={24 << 20}" in verdict.advice[0]


def test_a_send_buffer_that_explains_the_rate():
    # Measured on a lab path with tcp_wmem capped at 64 KiB: 7.3 Mb/s at 43 ms, 0.6 of
    # buffer / RTT; 1.4% sndbuf-limited, nothing left to send in 57% of the samples.
    single = tcp(7.27e6, srtt_ms=43.2, sndbuf_limited=0.014, app_limited=0.57,
                 send_buffer_bytes=65536, advertised_window_mean_bytes=400e3)  # fmt: skip
    verdict = decide(evidence(single))
    assert verdict.limit == "send_buffer"
    assert "wmem" in verdict.advice[0]
    # The same rate with a buffer ten times larger is not the buffer's doing.
    large = single.model_copy(update={"send_buffer_bytes": 655360})
    assert decide(evidence(large)).limit == "unexplained"


def test_two_limits_that_both_bind_are_both_named_smallest_residual_first():
    rate = 0.95 * window_rate_bps(80e3, 40.0)
    single = tcp(rate, rwnd_limited=0.5, sndbuf_limited=0.2, app_limited=0.4,
                 advertised_window_mean_bytes=80e3, send_buffer_bytes=130e3)  # fmt: skip
    verdict = decide(evidence(single))
    assert [f.limit for f in verdict.ranked] == ["receiver_window", "send_buffer"]


def test_loss_advises_streams_from_mathis_and_lists_the_predictions():
    mathis = mathis_goodput_bps(1448, 0.04, 1e-3)
    single = tcp(12e6, retransmits=100, loss_rate=1e-3, mathis_bps=mathis)
    verdict = decide(evidence(single), {"reno": 11e6, "bbr": 94e6})
    assert verdict.limit == "path_loss"
    assert "Mathis at 1.0e-03 loss" in verdict.headline
    # 100 Mb/s over Mathis's 11.2 Mb/s per stream: 9 streams.
    assert verdict.advice[0].startswith("9 parallel streams")
    assert "(best: bbr)" in verdict.advice[1]


def test_loss_far_above_what_mathis_allows_is_not_the_loss():
    mathis = mathis_goodput_bps(1448, 0.04, 1e-2)
    single = tcp(40e6, retransmits=1000, loss_rate=1e-2, mathis_bps=mathis)
    verdict = decide(evidence(single))
    assert verdict.limit == "unexplained"
    (loss,) = [f for f in verdict.fits if f.limit == "path_loss"]
    assert loss.residual is not None
    assert loss.residual > 1


def test_spurious_retransmissions_are_reordering():
    single = tcp(12e6, retransmits=100, loss_rate=1e-3, dsack_dups=80, reord_seen=40)
    assert decide(evidence(single)).limit == "reordering"
    # Real losses: few DSACKs and a reordering event or two.
    real = single.model_copy(update={"dsack_dups": 5, "reord_seen": 2})
    assert decide(evidence(real)).limit == "path_loss"


def test_losses_without_queueing_are_a_policer_at_the_rate_the_paced_train_got_through():
    # Measured on a lab path policed at 20 Mb/s on 100 Mb/s: the train paced at 41 Mb/s lost
    # half of itself and got 20.6 Mb/s through; TCP 13.4 Mb/s, 4.1% of segments lost, 1 ms
    # over its minimum RTT — seven times what Mathis allows at that loss.
    policed = path(capacity_known=False, udp_capacity_bps=82.5e6, udp_loss=0.503,
                   paced_rate_bps=20.6e6, paced_owd_variation_ns=900_000)  # fmt: skip
    single = tcp(13.4e6, retransmits=106, loss_rate=0.041, srtt_ms=40.95,
                 delivery_rate_p90_bps=21e6)  # fmt: skip
    verdict = decide(evidence(single, path=policed))
    assert verdict.limit == "policer"
    assert "20.6 Mb/s (the paced UDP train)" in verdict.headline
    # Without the trains (a starved UDP sender paces below the bucket): TCP's delivery rate.
    unseen = policed.model_copy(update={"udp_loss": 0.0})
    assert "21.0 Mb/s (TCP's delivery rate" in decide(evidence(single, path=unseen)).headline
    # The same losses behind a queue that filled first are not a policer.
    queued = single.model_copy(update={"srtt_ms": 80.0})
    assert decide(evidence(queued, path=unseen)).limit != "policer"


def test_random_loss_that_follows_mathis_is_not_a_policer():
    mathis = mathis_goodput_bps(1448, 0.04, 1e-3)
    single = tcp(12e6, retransmits=100, loss_rate=1e-3, delivery_rate_p90_bps=16e6,
                 mathis_bps=mathis)  # fmt: skip
    assert [f.limit for f in decide(evidence(single)).ranked] == ["path_loss"]


def test_large_packets_lost_and_small_ones_not_is_a_black_hole():
    hole = path(burst_received=0, burst_lost=2000,
                small_train=TrainEvidence(size_bytes=576, sent=200, received=200))  # fmt: skip
    single = tcp(0.1e6, retransmits=40, segments_sent=50, loss_rate=0.8)
    verdict = decide(evidence(single, path=hole))
    assert verdict.limit == "mtu_black_hole"
    assert "ICMP" in verdict.advice[0]


def test_a_sender_thread_at_a_full_core_is_its_cpu():
    ends = [cpu("client", busiest_thread=0.97, busiest_thread_runnable=0.99), cpu("server")]
    verdict = decide(evidence(tcp(30e6), cpu=ends))
    assert verdict.limit == "cpu"
    assert "sender's (client) CPU" in verdict.headline


def test_a_thread_that_never_sleeps_is_cpu_limited_whoever_holds_the_cpu():
    # Runnable all the time, running only 40% of it: the other programs set its rate.
    ends = [cpu("client", busiest_thread=0.4, most_waiting_thread=0.58,
                busiest_thread_runnable=0.98), cpu("server")]  # fmt: skip
    verdict = decide(evidence(tcp(30e6), cpu=ends))
    assert verdict.limit == "cpu"
    assert "never asleep" in verdict.headline


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


def test_nothing_found_is_said_so_with_the_closest_relation():
    verdict = decide(evidence(tcp(50e6)))
    assert verdict.limit == "unexplained"
    assert "closest: path-capacity limited" in verdict.headline
