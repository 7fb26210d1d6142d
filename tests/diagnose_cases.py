"""The six limits `tcpeval diagnose` must tell apart, each induced on purpose on a lab path
(tests/test_diagnose.py asserts them; bench/bench_diagnose.py prints their confusion table).

A case is a path (the lab's emulator: rate, RTT 40 ms, queue, random loss) plus one change
that makes its limit bind: a sysctl in the receiver's or sender's namespace, a CPU quota on
the server's cgroup, or a read-rate cap on the client's. Everything is removed afterwards:
the lab removes its namespaces, the cgroups are removed here.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from tcpeval.diagnose import Diagnosis, Target, diagnose
from tcpeval.lab.netns import listening_address, ns_sh, spawn, stop
from tcpeval.lab.run import emulated_path
from tcpeval.probe.binary import probe_binary
from tcpeval.probe.netns import secret_file
from tcpeval.scenario import parse_scenario

DURATION_S = 20
CGROUP_V1 = Path("/sys/fs/cgroup")
# Long enough for the diagnosis and the lab's set-up around it.
PATH_SECONDS = 300


@dataclass(frozen=True)
class Case:
    limit: str
    rate: str = "100Mbps"
    loss: float = 0.0
    receiver_sysctls: dict[str, str] = field(default_factory=dict)
    sender_sysctls: dict[str, str] = field(default_factory=dict)
    # The server's cgroup may use this share of one CPU.
    server_cpu_share: float | None = None
    # The client's reads from the disk are capped at this many bytes per second.
    client_read_bytes_per_s: int | None = None


CASES = {
    "receiver_window": Case(
        "receiver_window", receiver_sysctls={"net.ipv4.tcp_rmem": "4096 32768 131072"}
    ),
    "send_buffer": Case("send_buffer", sender_sysctls={"net.ipv4.tcp_wmem": "4096 16384 65536"}),
    "path_loss": Case("path_loss", loss=1e-3),
    "path_capacity": Case("path_capacity"),
    # The receiving process's own work is small (the kernel receives in softirq; the process
    # only copies, in large reads): 1 ms of CPU per second binds at 100 Mb/s.
    "cpu": Case("cpu", server_cpu_share=0.001),
    "disk": Case("disk", client_read_bytes_per_s=4 << 20),
}


def run_case(case: Case, out: Path) -> Diagnosis:
    with case_target(case) as (target, disk_dir):
        return diagnose(target, out, DURATION_S, 4, disk_dir, formats=("svg",))


@contextmanager
def case_target(case: Case) -> Iterator[tuple[Target, Path | None]]:
    """The case's lab path with a probe server on its far end: the target, and the
    directory whose disk is capped (None when the case caps none)."""
    scenario = parse_scenario(
        {
            "name": f"diagnose-{case.limit}",
            "duration": f"{PATH_SECONDS}s",
            "bottleneck": {"rate": case.rate, "queue": "100%bdp", "loss": case.loss},
            "flow": [{"cc": "cubic", "rtt": "40ms"}],
        }
    )
    with tempfile.TemporaryDirectory(prefix="tcpeval-diag-") as tmp, ExitStack() as stack:
        ends = stack.enter_context(emulated_path(scenario))
        _sysctls(ends.receiver_ns, case.receiver_sysctls)
        _sysctls(ends.sender_ns, case.sender_sysctls)
        secret = secret_file(Path(tmp))
        serve = [str(probe_binary()), "serve", "--listen", f"{ends.receiver_ip}:0",
                 "--secret-file", str(secret)]  # fmt: skip
        if case.server_cpu_share is None:
            server = spawn(ends.receiver_ns, serve)
        else:
            # Joined before it starts, and entered into the network namespace alone: `ip netns
            # exec` mounts its own /sys, which would hide the cgroup's cpu.stat from the server
            # (its throttled time is the evidence), where a real host's server sees it.
            procs = stack.enter_context(cpu_cgroup(case.server_cpu_share))
            enter = ["nsenter", f"--net=/run/netns/{ends.receiver_ns}"]
            server = subprocess.Popen(
                [*_join(procs), *enter, *serve], stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
        stack.callback(stop, server)
        address = listening_address(server, "the probe server")
        wrapper: tuple[str, ...] = ("ip", "netns", "exec", ends.sender_ns)
        disk_dir = None
        if case.client_read_bytes_per_s is not None:
            disk_dir = Path(tmp)
            group = stack.enter_context(read_capped_cgroup(disk_dir, case.client_read_bytes_per_s))
            # Joined before entering the namespace: `ip netns exec` hides /sys/fs/cgroup.
            wrapper = (*_join(group), *wrapper)
        yield Target(address, str(secret), wrapper), disk_dir


def _sysctls(ns: str, values: dict[str, str]) -> None:
    for key, value in values.items():
        ns_sh(ns, "sysctl", "-q", "-w", f"{key}={value}")


def _join(procs_file: Path) -> list[str]:
    """A prefix that moves the command into a cgroup before it starts."""
    return ["sh", "-c", f'echo $$ > {procs_file} && exec "$@"', "sh"]


@contextmanager
def cpu_cgroup(share: float) -> Iterator[Path]:
    """A cgroup whose processes together get `share` of one CPU; yields its procs file."""
    period_us = 1_000_000
    quota_us = max(1000, int(share * period_us))
    v1 = CGROUP_V1 / "cpu"
    if (v1 / "cpu.cfs_quota_us").exists():
        with _cgroup(v1) as group:
            (group / "cpu.cfs_period_us").write_text(str(period_us))
            (group / "cpu.cfs_quota_us").write_text(str(quota_us))
            yield group / "cgroup.procs"
    else:
        with _cgroup(CGROUP_V1) as group:
            (group / "cpu.max").write_text(f"{quota_us} {period_us}")
            yield group / "cgroup.procs"


@contextmanager
def read_capped_cgroup(directory: Path, bytes_per_s: int) -> Iterator[Path]:
    """A cgroup whose reads from the disk holding `directory` are capped."""
    device = _disk_device(directory)
    v1 = CGROUP_V1 / "blkio"
    if (v1 / "blkio.throttle.read_bps_device").exists():
        with _cgroup(v1) as group:
            (group / "blkio.throttle.read_bps_device").write_text(f"{device} {bytes_per_s}")
            yield group / "cgroup.procs"
    else:
        with _cgroup(CGROUP_V1) as group:
            (group / "io.max").write_text(f"{device} rbps={bytes_per_s}")
            yield group / "cgroup.procs"


def _disk_device(directory: Path) -> str:
    """MAJOR:MINOR of the whole disk under `directory` (throttles apply to disks)."""
    dev = os.stat(directory).st_dev
    sys_dev = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if (sys_dev / "partition").exists():
        return (sys_dev.resolve().parent / "dev").read_text().strip()
    return f"{os.major(dev)}:{os.minor(dev)}"


@contextmanager
def _cgroup(hierarchy: Path) -> Iterator[Path]:
    group = hierarchy / f"tcpeval-diagnose-{os.getpid()}"
    group.mkdir()
    try:
        yield group
    finally:
        _remove_cgroup(group)


def _remove_cgroup(group: Path) -> None:
    """Moves any process still inside to the parent, then removes the group."""
    for pid in (group / "cgroup.procs").read_text().split():
        with suppress(OSError):
            (group.parent / "cgroup.procs").write_text(pid)
    with suppress(OSError):
        group.rmdir()
