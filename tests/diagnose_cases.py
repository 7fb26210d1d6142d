"""The limits `tcpeval diagnose` must tell apart, each induced on purpose on a lab path
(tests/test_diagnose.py asserts them, quiet and loaded; bench/bench_diagnose.py prints their
confusion table).

A case is a path (the lab's emulator: 100 Mb/s, RTT 40 ms, one BDP of queue, and any of its
conditions: random loss, a policer, reordering, a path-MTU black hole, a delay split unevenly
between the directions) plus what makes its limit bind on the hosts: a sysctl in the
receiver's or sender's namespace, a CPU quota on the server's or the client's cgroup, a
read-rate cap on the client's, or a server that runs only part of the time. `loaded` adds an
unrelated CPU hog on every core (tests/cpu_hog.py): the verdict must not change. Everything is
removed afterwards: the lab removes its namespaces, the cgroups and the hog are removed here.
"""

from __future__ import annotations

import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cgroups import cpu_quota, join, read_capped
from cpu_hog import cpu_hog
from duty_cycle import duty_cycled
from tcpeval.backends.lab import Lab
from tcpeval.diagnose import Diagnosis, Target, diagnose
from tcpeval.lab.netns import listening_address, ns_sh, spawn, stop
from tcpeval.lab.run import emulated_path
from tcpeval.probe.binary import probe_binary
from tcpeval.probe.netns import secret_file, wait_listening
from tcpeval.scenario import ScenarioError, parse_scenario

# The shortest diagnosis `tcpeval diagnose` allows: each TCP test then lasts 2 s, twenty
# round trips past a slow start of about ten at 100 Mb/s and 40 ms.
DURATION_S = 5
STREAMS = 4
# Long enough for the diagnosis and the lab's set-up around it.
PATH_SECONDS = 300
IPERF3_PORT = 5201


@dataclass(frozen=True)
class Case:
    # The limit the diagnosis must name.
    limit: str
    # Keys of the lab path's [bottleneck] and [[flow]] tables beyond the common ones.
    bottleneck: dict[str, Any] = field(default_factory=dict)
    flow: dict[str, Any] = field(default_factory=dict)
    receiver_sysctls: dict[str, str] = field(default_factory=dict)
    sender_sysctls: dict[str, str] = field(default_factory=dict)
    # The server's or the client's cgroup may use this share of one CPU.
    server_cpu_share: float | None = None
    client_cpu_share: float | None = None
    # The client's reads from the disk are capped at this many bytes per second.
    client_read_bytes_per_s: int | None = None
    # The server is stopped for the first of these seconds of every second one.
    server_stopped_s: tuple[float, float] | None = None
    # The verdict when the kernel absorbed the path's condition (a limit in some runs and
    # not in others, the kernel's choice): the diagnosis must name the condition in its
    # evidence then.
    when_absorbed: str | None = None


CASES = {
    "receiver_window": Case(
        "receiver_window", receiver_sysctls={"net.ipv4.tcp_rmem": "4096 32768 131072"}
    ),
    # The whole RTT on the data direction, none on the ACKs'.
    "receiver_window_one_way_delay": Case(
        "receiver_window",
        flow={"forward_delay": "40ms"},
        receiver_sysctls={"net.ipv4.tcp_rmem": "4096 32768 131072"},
    ),
    # No window scaling: 64 KiB at most, 13 Mb/s at 40 ms.
    "window_scaling": Case("window_scaling", receiver_sysctls={"net.ipv4.tcp_window_scaling": "0"}),
    # Stopped 400 ms of every 500 ms, so that it reads slower than the path delivers: a
    # buffer of 2 MB (a window of twice the BDP while it reads) fills in 160 ms of a stop,
    # and the window stays closed for the rest of it; no quota or other program holds its
    # threads back. (100 ms of every 200 ms never closed the window: the lab's 10 MiB one
    # takes in more than a stop's 1.25 MB.)
    "receiver_application": Case(
        "receiver_application",
        receiver_sysctls={"net.ipv4.tcp_rmem": "4096 131072 2097152"},
        server_stopped_s=(0.4, 0.5),
    ),
    "send_buffer": Case("send_buffer", sender_sysctls={"net.ipv4.tcp_wmem": "4096 16384 65536"}),
    # 30 ms one way, 10 ms the other.
    "send_buffer_uneven_delays": Case(
        "send_buffer",
        flow={"forward_delay": "30ms"},
        sender_sysctls={"net.ipv4.tcp_wmem": "4096 16384 65536"},
    ),
    "path_loss": Case("path_loss", bottleneck={"loss": 1e-3}),
    "path_capacity": Case("path_capacity"),
    # A fifth of the link's rate; a burst of 64 KB (a few packets' worth of a 40 ms path).
    "policer": Case("policer", bottleneck={"policer": {"rate": "20Mbps", "burst": "64KB"}}),
    # 5% of the packets held back 20 ms, half the RTT: beyond RACK's first reordering window
    # (a quarter of the minimum RTT). In four runs of five one stream got 10–17 Mb/s (four
    # got 57–93); in the fifth Linux learnt from early DSACKs and widened its window (RFC
    # 8985 §6.2) and one stream filled the link — then the reordering must still be named.
    "reordering": Case(
        "reordering",
        bottleneck={"reorder": {"share": 0.05, "delay": "20ms"}},
        when_absorbed="path_capacity",
    ),
    # Full-sized packets (1500 B) vanish, smaller ones pass.
    "mtu_black_hole": Case("mtu_black_hole", bottleneck={"mtu_black_hole": 1400}),
    # The receiving process's own work is small (the kernel receives in softirq; the process
    # only copies, in large reads): 1 ms of CPU per second binds at 100 Mb/s.
    "cpu_receiver": Case("cpu", server_cpu_share=0.001),
    # The sending process: 3 ms a second holds it to about 17 Mb/s (10 ms did not bind, 87
    # of 90 Mb/s; 1 ms held it under 1 Mb/s, and its spin-paced UDP trains took a minute).
    "cpu_sender": Case("cpu", client_cpu_share=0.003),
    "disk": Case("disk", client_read_bytes_per_s=4 << 20),
}


def lab_path(case: Case, name: str) -> dict[str, Any]:
    """The scenario of the case's lab path (its traffic is the diagnosis's own)."""
    return {
        "name": f"diagnose-{name}",
        "duration": f"{PATH_SECONDS}s",
        "bottleneck": {"rate": "100Mbps", "queue": "100%bdp", **case.bottleneck},
        "flow": [{"cc": "cubic", "rtt": "40ms", **case.flow}],
    }


def unsupported(case: Case) -> str | None:
    """Why this host's lab cannot make the case's path (a key it does not have yet), or
    None."""
    try:
        scenario = parse_scenario(lab_path(case, "check"))
    except ScenarioError as error:
        return f"the scenario has no such key yet: {error}"
    problems = Lab().supports(scenario)
    return "; ".join(str(p.error("lab")) for p in problems) or None


def run_case(
    name: str,
    out: Path,
    loaded: bool = False,
    duration_s: float = DURATION_S,
    verify_advice: bool = False,
    iperf3: bool = False,
) -> Diagnosis:
    """Induces case `name`, with the CPU hog when `loaded`, and diagnoses the path (against
    a stock `iperf3 -s` with `iperf3`; checking the advice too with `verify_advice`)."""
    with case_target(CASES[name], name, loaded, iperf3) as (target, disk_dir):
        return diagnose(
            target, out, duration_s, STREAMS, disk_dir, ("svg",), verify_advice=verify_advice
        )


@contextmanager
def case_target(
    case: Case, name: str = "case", loaded: bool = False, iperf3: bool = False
) -> Iterator[tuple[Target, Path | None]]:
    """The case's lab path with a probe server (or a stock `iperf3 -s`) on its far end, and
    the CPU hog when `loaded`: the target, and the directory whose disk is capped (None when
    none is)."""
    scenario = parse_scenario(lab_path(case, name))
    with tempfile.TemporaryDirectory(prefix="tcpeval-diag-") as tmp, ExitStack() as stack:
        ends = stack.enter_context(emulated_path(scenario))
        # Started once the lab is ours (emulated_path waits for other runs of this host to
        # end): the hog is this case's, not theirs.
        if loaded:
            stack.enter_context(cpu_hog())
        _sysctls(ends.receiver_ns, case.receiver_sysctls)
        _sysctls(ends.sender_ns, case.sender_sysctls)
        if iperf3:
            yield _iperf3_target(ends.receiver_ns, ends.receiver_ip, ends.sender_ns, stack), None
            return
        secret = secret_file(Path(tmp))
        server = _server(case, ends.receiver_ns, ends.receiver_ip, secret, stack)
        address = listening_address(server, "the probe server")
        if case.server_stopped_s is not None:
            stack.enter_context(duty_cycled(server.pid, *case.server_stopped_s))
        client: list[str] = []
        disk_dir = None
        if case.client_read_bytes_per_s is not None:
            disk_dir = Path(tmp)
            group = read_capped("client-reads", disk_dir, case.client_read_bytes_per_s)
            client += join(stack.enter_context(group))
        enter = ["ip", "netns", "exec", ends.sender_ns]
        if case.client_cpu_share is not None:
            client += join(stack.enter_context(cpu_quota("client-cpu", case.client_cpu_share)))
            enter = _net_namespace_only(ends.sender_ns)
        # Cgroups are joined before entering the namespace: `ip netns exec` hides
        # /sys/fs/cgroup.
        yield Target(address, str(secret), (*client, *enter)), disk_dir


def _iperf3_target(ns: str, ip: str, client_ns: str, stack: ExitStack) -> Target:
    """A stock `iperf3 -s` in `ns`, stopped when `stack` closes, as the target."""
    server = spawn(ns, ["iperf3", "-s", "-B", ip, "-p", str(IPERF3_PORT)])
    stack.callback(stop, server)
    wait_listening(server, ns, IPERF3_PORT)
    wrapper = ("ip", "netns", "exec", client_ns)
    return Target(f"{ip}:{IPERF3_PORT}", None, wrapper, iperf3=True)


def _server(case: Case, ns: str, ip: str, secret: Path, stack: ExitStack) -> subprocess.Popen[str]:
    serve = [str(probe_binary()), "serve", "--listen", f"{ip}:0", "--secret-file", str(secret)]
    if case.server_cpu_share is None:
        server = spawn(ns, serve)
    else:
        # Joined before it starts.
        procs = stack.enter_context(cpu_quota("server-cpu", case.server_cpu_share))
        server = subprocess.Popen(
            [*join(procs), *_net_namespace_only(ns), *serve],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
    stack.callback(stop, server)
    return server


def _net_namespace_only(ns: str) -> list[str]:
    """A prefix that enters the network namespace alone: `ip netns exec` mounts its own
    /sys, which would hide a cgroup's cpu.stat from the probe (its throttled time is the
    evidence), where a real host's probe sees it."""
    return ["nsenter", f"--net=/run/netns/{ns}"]


def _sysctls(ns: str, values: dict[str, str]) -> None:
    for key, value in values.items():
        ns_sh(ns, "sysctl", "-q", "-w", f"{key}={value}")
