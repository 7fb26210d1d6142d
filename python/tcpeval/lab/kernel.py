"""Counters of the kernel's packet path outside the bottleneck: where a packet can be lost
without the emulator deciding it (a per-CPU backlog overflowing, a veth refusing a frame),
and what a namespace's IP layer received (the CE marks among it)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tcpeval.lab.netns import ns_sh

SOFTNET_STAT = Path("/proc/net/softnet_stat")
STAT = Path("/proc/stat")
ALGORITHMS = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")


def backlog_drops() -> int:
    """Packets dropped because a CPU's input backlog was full (second column, all CPUs).
    Host-wide: other traffic on the machine counts too, which errs on the side of caution."""
    return sum(int(line.split()[1], 16) for line in SOFTNET_STAT.read_text().splitlines())


def steal_ms(cpu: int) -> float:
    """Time the hypervisor gave this virtual CPU to someone else (8th field of its line in
    /proc/stat, in clock ticks): the emulator stalls then, whatever it does."""
    for line in STAT.read_text().splitlines():
        fields = line.split()
        if fields[0] == f"cpu{cpu}":
            return int(fields[8]) * 1000 / os.sysconf("SC_CLK_TCK")
    return 0.0


def link_drops(veths: list[tuple[str, str]]) -> dict[str, int]:
    """rx/tx drops of each veth end, by device."""
    drops: dict[str, int] = {}
    for ns, dev in veths:
        shown = json.loads(ns_sh(ns, "ip", "-s", "-j", "link", "show", dev))[0]["stats64"]
        drops[dev] = shown["rx"]["dropped"] + shown["tx"]["dropped"]
    return drops


def ip_counters(ns: str) -> dict[str, int]:
    """The IP layer's extended counters of a namespace (`IpExt` of its /proc/net/netstat, a
    header line of names then one of values): `InCEPkts` counts the packets it received with
    CE (per segment, before any other check), `InCsumErrors` the IPv4 headers it dropped for
    a wrong checksum."""
    rows = [line.split()[1:] for line in ns_sh(ns, "cat", "/proc/net/netstat").splitlines()
            if line.startswith("IpExt:")]  # fmt: skip
    names, values = rows[0], rows[1]
    return {name: int(value) for name, value in zip(names, values, strict=True)}


def algorithms() -> list[str]:
    try:
        return ALGORITHMS.read_text().split()
    except OSError:
        return []
