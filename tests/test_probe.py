"""The probe on real kernel sockets, inside network namespaces each test makes and removes.

Rates are checked against the bottleneck's rate at the level the probe measures: htb counts
whole Ethernet frames, so a TCP payload of MSS bytes rides in MSS + 66 bytes on the wire
(Ethernet 14, IPv4 20, TCP 20, timestamps 12), a UDP payload of S bytes in S + 42.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest

from cgroups import cpu_quota, join
from tcpeval.lab.netns import listening_address
from tcpeval.probe import (
    ProbeError,
    RrSettings,
    TcpSettings,
    UdpSettings,
    probe_binary,
    result_from_raw,
    run_rr,
    run_tcp,
    run_udp,
)
from tcpeval.probe.driver import receiver_flows
from tcpeval.probe.netns import Hosts, Lab, lab, secret_file
from tcpeval.report.plots import write_plots
from tcpeval.result import FLOW_COLUMNS, LINK_COLUMNS, Result, load

RATE_BPS = 100_000_000
QUEUE_BYTES = 150_000
TCP_FRAME_OVERHEAD_BYTES = 66
UDP_FRAME_OVERHEAD_BYTES = 42
TOLERANCE = 0.05
INITIAL_WINDOW_PKTS = 10  # RFC 6928, Linux TCP_INIT_CWND
WINDOW_SCALES = ["snd_wscale", "rcv_wscale"]


def exec_in(ns: str) -> list[str]:
    return ["ip", "netns", "exec", ns]


def payload_rate_bps(payload_bytes: int, overhead_bytes: int) -> float:
    return RATE_BPS * payload_bytes / (payload_bytes + overhead_bytes)


@pytest.fixture
def routed(tmp_path: Path):
    with lab() as the_lab:
        hosts = the_lab.routed(RATE_BPS, QUEUE_BYTES)
        secret = secret_file(tmp_path)
        server = the_lab.server(hosts.server_ns, hosts.server_ip, secret)
        yield the_lab, hosts, server, secret


@pytest.fixture
def paired(tmp_path: Path):
    with lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        server = the_lab.server(hosts.server_ns, hosts.server_ip, secret)
        yield the_lab, hosts, server, secret


def start_client(
    the_lab: Lab, hosts: Hosts, settings: TcpSettings, raw: Path
) -> subprocess.Popen[str]:
    """The binary itself, so the test can read its stderr while it runs."""
    command = [*exec_in(hosts.client_ns), str(probe_binary()), "tcp", *settings.arguments()]
    process = subprocess.Popen([*command, "--out", str(raw)], stderr=subprocess.PIPE, text=True)
    the_lab.processes.append(process)
    assert process.stderr is not None
    return process


def ss_cwnd_of_data_connection(the_lab, hosts: Hosts) -> int:
    """cwnd of the connection that moved the most bytes, as `ss -ti` prints it."""
    text = the_lab.in_ns(hosts.client_ns, "ss", "-tin", "dst", hosts.server_ip)
    best = (-1, -1)
    for block in text.split("\n"):
        acked = re.search(r"bytes_acked:(\d+)", block)
        cwnd = re.search(r"\bcwnd:(\d+)", block)
        if acked and cwnd:
            best = max(best, (int(acked.group(1)), int(cwnd.group(1))))
    return best[1]


def test_single_stream_history_rate_and_ss(routed, tmp_path: Path) -> None:
    """10 s, one stream: goodput at the bottleneck, a full 10 ms history, and a last cwnd
    equal to what `ss -ti` reads on the open socket."""
    the_lab, hosts, server, secret = routed
    settings = TcpSettings(
        server=server, secret_file=str(secret), duration="10s", cc="cubic", hold_open="3s"
    )
    raw = tmp_path / "raw"
    process = start_client(the_lab, hosts, settings, raw)
    held = process.stderr.readline()
    assert "holding sockets open" in held, held
    ss_cwnd = ss_cwnd_of_data_connection(the_lab, hosts)
    assert process.wait(timeout=30) == 0, process.stderr.read()
    result = result_from_raw(raw, settings, wall_seconds=0.0)

    flow = result.summary["flows"][0]
    mss = result.summary["backend"]["details"]["granted"][0]["mss_bytes"]
    expected = payload_rate_bps(mss, TCP_FRAME_OVERHEAD_BYTES) / 1e6
    assert abs(flow["goodput_mbps"] - expected) <= TOLERANCE * expected, (flow, expected)

    flows = result.flows
    assert list(flows.columns[: len(FLOW_COLUMNS)]) == list(FLOW_COLUMNS)
    details = result.summary["backend"]["details"]
    assert details["samples_per_stream"]["0"] >= 0.95 * details["expected_samples_per_stream"]
    assert details["expected_samples_per_stream"] >= 990
    for column in ("delivered_bytes", "retransmits", "bytes_sent", "busy_time_s", "segs_out"):
        assert flows[column].is_monotonic_increasing, column
    assert flows["t_s"].is_monotonic_increasing
    assert flows["retransmits"].iloc[-1] > 0, "a 150 kB bfifo at 100 Mb/s must drop"
    assert ss_cwnd == int(flows["cwnd_pkts"].iloc[-1])

    out = tmp_path / "result"
    result.save(out)
    assert {p.name for p in write_plots(load(out), out)} == {"cwnd.png", "goodput.png", "queue.png"}
    assert list(load(out).links.columns) == list(LINK_COLUMNS)


def test_eight_streams_share_the_bottleneck(routed) -> None:
    _, hosts, server, secret = routed
    settings = TcpSettings(server=server, secret_file=str(secret), duration="8s", streams=8)
    result = run_tcp(settings, wrapper=exec_in(hosts.client_ns))
    flows = result.summary["flows"]
    assert len(flows) == 8
    mss = result.summary["backend"]["details"]["granted"][0]["mss_bytes"]
    expected = payload_rate_bps(mss, TCP_FRAME_OVERHEAD_BYTES) / 1e6
    total = sum(f["goodput_mbps"] for f in flows)
    assert abs(total - expected) <= TOLERANCE * expected, (total, expected)
    assert 0 < result.summary["jain_index"] <= 1


def test_a_forward_test_keeps_the_receivers_history_and_both_ends_cpus(
    routed, tmp_path: Path
) -> None:
    _, hosts, server, secret = routed
    settings = TcpSettings(server=server, secret_file=str(secret), duration="3s", streams=2)
    result = run_tcp(settings, wrapper=exec_in(hosts.client_ns), keep_raw=tmp_path / "raw")
    receiver = receiver_flows(tmp_path / "raw")
    expected = result.summary["backend"]["details"]["expected_samples_per_stream"]
    assert receiver.groupby("flow").size().min() >= 0.9 * expected
    # The receiver offers a window and sends ACKs; it acknowledges no data of its own.
    assert (receiver["rcv_wnd_bytes"] > 0).all()
    assert receiver.groupby("flow")["segs_out"].last().min() > 0
    assert (receiver["delivered_bytes"] == 0).all()
    cpu = result.summary["backend"]["details"]["cpu"]
    for end in ("client", "server"):
        intervals = cpu[end]["intervals"]
        assert len(intervals) >= 8, end  # 3 s at one per 250 ms
        assert all(0 <= i["busiest_thread"] <= 1 for i in intervals)


def test_window_scales_path_mtu_and_cpu_evidence_reach_the_result(paired, tmp_path: Path) -> None:
    """Both ends' histories carry the window scales, path MTU, advertised MSS, D-SACKs and
    receive space; each end names the busiest other processes. Turning window scaling off in
    the receiver's namespace leaves both ends at shift 0 (RFC 7323 §2.2). Two 1 s runs."""
    the_lab, hosts, server, secret = paired
    settings = TcpSettings(server=server, secret_file=str(secret), duration="1s")

    def both_ends(raw: Path) -> tuple[Result, pd.DataFrame]:
        result = run_tcp(settings, wrapper=exec_in(hosts.client_ns), keep_raw=raw)
        return result, receiver_flows(raw)

    result, receiver = both_ends(tmp_path / "scaled")
    sender = result.flows
    # A veth pair's MTU is 1500: the path MTU; the MSS advertised is 1500 - 40 (IPv4 + TCP),
    # less the 12 of the timestamp option Linux negotiates by default.
    plain = {"pmtu_bytes": 1500, "advmss_bytes": 1448}
    for end in (sender, receiver):
        assert (end[WINDOW_SCALES] > 0).all().all()
        assert (end[list(plain)] == pd.Series(plain)).all().all()
    # A D-SACK reports a retransmission that was not needed (on a busy machine, a tail loss
    # probe sent before a late ACK): never more than were sent. The receiver sends no data.
    assert sender["dsack_dups"].is_monotonic_increasing
    assert sender["dsack_dups"].iloc[-1] <= sender["retransmits"].iloc[-1]
    assert (receiver["dsack_dups"] == 0).all()
    assert (receiver["rcv_space_bytes"] > 0).all()
    cpu = result.summary["backend"]["details"]["cpu"]
    for end in ("client", "server"):
        others = cpu[end]["others"]
        assert len(others) <= 5, others
        assert all(p["cores"] > 0 and p["command"] for p in others), others
        # `ip netns exec` hides the cgroup's files, and no quota applies here.
        for interval in cpu[end]["intervals"]:
            assert interval["quota_cores"] is None, interval
            assert interval["quota_used"] is None, interval
            assert 0 <= interval["busiest_thread_runnable"] <= 1, interval
        assert cpu[end]["whole_test_quota"]["quota_used"] is None

    the_lab.in_ns(hosts.server_ns, "sysctl", "-q", "-w", "net.ipv4.tcp_window_scaling=0")
    result, receiver = both_ends(tmp_path / "unscaled")
    for end in (result.flows, receiver):
        assert (end[WINDOW_SCALES] == 0).all().all()


def test_a_server_held_to_a_cpu_quota_reports_it_used_up(tmp_path: Path) -> None:
    """The server in a cgroup allowed 5% of a core in 1 s periods, entered into its network
    namespace alone (`ip netns exec` would hide its cgroup files): receiving at a veth pair's
    rate, it uses its whole quota and is throttled in its periods. One 3 s run."""
    with cpu_quota("probe-server-cpu", 0.05) as procs, lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(tmp_path)
        serve = [str(probe_binary()), "serve", "--listen", f"{hosts.server_ip}:0",
                 "--secret-file", str(secret)]  # fmt: skip
        enter = ["nsenter", f"--net=/run/netns/{hosts.server_ns}"]
        server = subprocess.Popen(
            [*join(procs), *enter, *serve], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True,
        )  # fmt: skip
        the_lab.processes.append(server)
        address = listening_address(server, "the probe server")
        settings = TcpSettings(server=address, secret_file=str(secret), duration="3s")
        result = run_tcp(settings, wrapper=exec_in(hosts.client_ns))
    cpu = result.summary["backend"]["details"]["cpu"]["server"]
    quota = cpu["whole_test_quota"]
    assert quota["quota_cores"] == pytest.approx(0.05), cpu
    # The test spans three whole periods and parts of one or two more: at least 3 × 50 ms
    # of the ~160 ms its ~3.2 s allow, less up to one period's worth the exiting streams
    # take with them (0.6); at most five periods' quota (1.6).
    assert 0.6 <= quota["quota_used"] <= 1.6, cpu
    # Every period the receiver runs in, it runs out; the last may end first.
    assert quota["throttled_periods"] >= 0.75, cpu
    assert all(i["quota_cores"] == pytest.approx(0.05) for i in cpu["intervals"]), cpu


def test_reverse_runs_the_server_as_sender(routed) -> None:
    _, hosts, server, secret = routed
    settings = TcpSettings(
        server=server, secret_file=str(secret), duration="3s", reverse=True, cc="reno"
    )
    result = run_tcp(settings, wrapper=exec_in(hosts.client_ns))
    details = result.summary["backend"]["details"]
    assert details["sender"] == "server"
    assert result.summary["flows"][0]["cc"] == "reno"
    assert details["samples_per_stream"]["0"] >= 0.95 * details["expected_samples_per_stream"]
    expected = payload_rate_bps(1448, TCP_FRAME_OVERHEAD_BYTES) / 1e6
    # 3 s include slow start; the rate must still be the bottleneck's, not more.
    assert result.summary["flows"][0]["goodput_mbps"] <= expected * (1 + TOLERANCE)


def test_buffers_and_cc_are_applied_and_read_back(paired) -> None:
    _, hosts, server, secret = paired
    wmem_max = int(Path("/proc/sys/net/core/wmem_max").read_text())
    settings = TcpSettings(
        server=server, secret_file=str(secret), duration="1s", cc="reno", window="1MB"
    )
    result = run_tcp(settings, wrapper=exec_in(hosts.client_ns))
    details = result.summary["backend"]["details"]
    assert details["granted"][0]["cc"] == "reno"
    assert details["granted"][0]["sndbuf_bytes"] == 1_000_000
    assert details["granted"][0]["rcvbuf_bytes"] == 1_000_000
    assert details["server_granted"][0]["rcvbuf_bytes"] == 1_000_000
    assert details["warnings"] == []

    capped = TcpSettings(
        server=server, secret_file=str(secret), duration="1s", window=f"{2 * wmem_max}B"
    )
    result = run_tcp(capped, wrapper=exec_in(hosts.client_ns))
    details = result.summary["backend"]["details"]
    assert details["granted"][0]["sndbuf_bytes"] == wmem_max
    assert any("wmem_max" in w for w in details["warnings"]), details["warnings"]


def test_missing_cc_names_it_and_the_available_ones(tmp_path: Path) -> None:
    available = Path("/proc/sys/net/ipv4/tcp_available_congestion_control").read_text().split()
    secret = str(secret_file(tmp_path))
    settings = TcpSettings(server="127.0.0.1:9", secret_file=secret, cc="no-such-cc")
    with pytest.raises(ProbeError) as error:
        run_tcp(settings)
    message = str(error.value)
    assert "'no-such-cc'" in message
    assert all(cc in message for cc in available), message


def test_udp_trains_show_the_bottleneck(routed, tmp_path: Path) -> None:
    _, hosts, server, secret = routed
    # 20 µs spacing is ~590 Mb/s: six times the bottleneck. 500 µs is ~24 Mb/s.
    settings = UdpSettings(
        server=server, secret_file=str(secret), size=1472, count=3000, spacing="20us,500us"
    )
    report = run_udp(settings, tmp_path / "udp", wrapper=exec_in(hosts.client_ns))
    fast, slow = report["trains"]
    expected = payload_rate_bps(1472, UDP_FRAME_OVERHEAD_BYTES)
    assert fast["lost"] > 0
    assert abs(fast["received_rate_bps"] - expected) <= TOLERANCE * expected, fast
    assert slow["lost"] == 0, slow
    assert slow["received"] == slow["sent"] == 3000


def rr_cwnds(the_lab, hosts: Hosts, server: str, secret: Path, out: Path, ssai: int) -> list:
    # Per namespace (net.ipv4 sysctls are per netns): only this test's server sees it.
    the_lab.in_ns(hosts.server_ns, "sysctl", "-qw", f"net.ipv4.tcp_slow_start_after_idle={ssai}")
    # Linux's restart (tcp_cwnd_restart, RFC 2861) halves cwnd once per RTO of idle until it
    # reaches the initial window; the RTO here is ~204 ms (TCP_RTO_MIN + a tiny RTT), and a
    # 1 MB response on this path grows cwnd to ~700 packets, so 2 s of thinking (9 RTOs)
    # brings it all the way down. CUBIC, because Linux skips the restart for a CC with its own
    # control loop (BBR's `cong_control`), and BBR may be the system default.
    settings = RrSettings(
        server=server,
        secret_file=str(secret),
        response="1MB",
        count=3,
        think="2s",
        cc="cubic",
    )
    report = run_rr(settings, out, wrapper=exec_in(hosts.client_ns))
    assert len(report["exchanges"]) == 3
    assert all(e["latency_ns"] > 0 for e in report["exchanges"])
    return [e["cwnd_at_start_pkts"] for e in report["exchanges"]]


def test_rr_shows_slow_start_restart_after_idle(paired, tmp_path: Path) -> None:
    the_lab, hosts, server, secret = paired
    restarted = rr_cwnds(the_lab, hosts, server, secret, tmp_path / "on", ssai=1)
    kept = rr_cwnds(the_lab, hosts, server, secret, tmp_path / "off", ssai=0)
    # With restart, every response begins from the initial window (one ACK may already
    # have grown it by a packet by the time TCP_INFO is read).
    assert all(cwnd <= INITIAL_WINDOW_PKTS + 1 for cwnd in restarted), restarted
    # Without, responses after the first start from the window the previous one grew.
    assert all(cwnd > 2 * INITIAL_WINDOW_PKTS for cwnd in kept[1:]), kept
    assert json.loads((tmp_path / "on" / "rr.json").read_text())["latency_percentiles_ns"]


def test_interrupted_run_keeps_what_was_measured(routed, tmp_path: Path) -> None:
    the_lab, hosts, server, secret = routed
    settings = TcpSettings(server=server, secret_file=str(secret), duration="20s", progress=True)
    raw = tmp_path / "raw"
    process = start_client(the_lab, hosts, settings, raw)
    for _ in range(2):  # two progress lines: two seconds in
        line = process.stderr.readline()
        assert "Mb/s" in line, line
    process.send_signal(2)  # SIGINT, as Ctrl-C
    assert process.wait(timeout=15) == 130
    result = result_from_raw(raw, settings, wall_seconds=0.0)
    assert result.summary["backend"]["details"]["interrupted"] is True
    assert 1.5 < result.summary["backend"]["duration_s"] < 5
    assert result.summary["flows"][0]["bytes_delivered"] > 0
    assert len(result.flows) > 150


def test_cli_bad_input_is_one_line_naming_the_field(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from tcpeval.cli import app

    secret = str(secret_file(tmp_path))
    runner = CliRunner()
    done = runner.invoke(
        app, ["probe", "tcp", "10.0.0.1", "--secret-file", secret, "--out", str(tmp_path / "o"),
              "--streams", "200"],
    )  # fmt: skip
    assert done.exit_code == 2
    assert done.output.strip().splitlines() == [
        "error: streams: '200' Input should be less than or equal to 128"
    ]
    done = runner.invoke(
        app, ["probe", "tcp", "10.0.0.1", "--secret-file", secret, "--out", str(tmp_path / "o"),
              "--window", "lots"],
    )  # fmt: skip
    assert done.exit_code == 2
    assert done.output.strip().startswith("error: window: 'lots'")


def test_interrupted_reverse_run_stops_the_server_and_keeps_its_history(
    routed, tmp_path: Path
) -> None:
    the_lab, hosts, server, secret = routed
    settings = TcpSettings(
        server=server, secret_file=str(secret), duration="20s", reverse=True, progress=True
    )
    process = start_client(the_lab, hosts, settings, tmp_path / "raw")
    for _ in range(2):
        assert "Mb/s" in process.stderr.readline()
    process.send_signal(2)
    assert process.wait(timeout=15) == 130
    result = result_from_raw(tmp_path / "raw", settings, wall_seconds=0.0)
    summary = result.summary
    assert summary["backend"]["details"]["interrupted"] is True
    assert summary["backend"]["details"]["sender"] == "server"
    assert 1.5 < summary["backend"]["duration_s"] < 5
    # The server's own 10 ms history came back, and stops when the client said stop.
    assert len(result.flows) > 150
    assert result.flows["t_s"].max() < 5
    # The server is free again.
    again = TcpSettings(server=server, secret_file=str(secret), duration="500ms")
    assert run_tcp(again, wrapper=exec_in(hosts.client_ns)).summary["flows"][0]["bytes_delivered"]
