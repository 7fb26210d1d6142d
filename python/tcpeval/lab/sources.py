"""Constant-bit-rate background traffic in the lab: a `tcpeval-probe cbr` sender in the
source's own namespace and a `cbr-sink` at the far end (the receiver namespace, or the
source's for a reverse source), both the probe's, so the lab has one traffic generator."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcpeval.lab.netns import LabError, listening_address, spawn, stop
from tcpeval.lab.topology import KERNEL_CPU, Topology
from tcpeval.probe.binary import probe_binary

# IPv4 and UDP headers: the payload of a `packet_bytes` datagram is that much smaller.
UDP_IP_HEADER_BYTES = 28
MIN_MTU_BYTES = 1500


@dataclass
class Source:
    index: int
    rate_bps: int
    packet_bytes: int
    start_ns: int
    stop_ns: int
    reverse: bool
    directory: Path | None = None
    sink_address: str = ""

    @property
    def mtu_bytes(self) -> int:
        return max(MIN_MTU_BYTES, self.packet_bytes)


@dataclass
class Sink:
    source: Source
    process: subprocess.Popen[str]


def plan(resolved_sources: list[dict[str, Any]], duration_ns: int) -> list[Source]:
    """The resolved [[cbr]] tables ([[onoff]] is refused before a lab run)."""
    return [
        Source(
            index=index,
            rate_bps=entry["rate_bps"],
            packet_bytes=entry["packet_bytes"],
            start_ns=entry["start_ns"],
            stop_ns=duration_ns if entry["stop_ns"] is None else entry["stop_ns"],
            reverse=entry["reverse"],
        )
        for index, entry in enumerate(resolved_sources)
    ]


def _ends(source: Source, topology: Topology) -> tuple[str, str, str]:
    """(sender namespace, sink namespace, sink IP)."""
    own = topology.sources[source.index]
    if source.reverse:
        return topology.receiver.ns, own.ns, own.ip
    return own.ns, topology.receiver.ns, topology.receiver.ip


def start_sinks(sources: list[Source], topology: Topology, directory: Path) -> list[Sink]:
    sinks = []
    for source in sources:
        source.directory = directory / f"cbr{source.index}"
        source.directory.mkdir()
        _, sink_ns, sink_ip = _ends(source, topology)
        command = [
            str(probe_binary()), "cbr-sink", "--listen", f"{sink_ip}:0",
            "--duration-ms", str((source.stop_ns - source.start_ns) // 10**6),
            "--out", str(source.directory / "sink.json"),
        ]  # fmt: skip
        process = spawn(sink_ns, command, cpu=KERNEL_CPU)
        sinks.append(Sink(source, process))
        source.sink_address = listening_address(process, f"cbr[{source.index}]: the sink")
    return sinks


def start_sender(source: Source, topology: Topology) -> subprocess.Popen[str]:
    assert source.directory is not None
    sender_ns, _, _ = _ends(source, topology)
    command = [
        str(probe_binary()), "cbr", "--to", source.sink_address,
        "--rate-bps", str(source.rate_bps),
        "--size-bytes", str(source.packet_bytes - UDP_IP_HEADER_BYTES),
        "--duration-ms", str((source.stop_ns - source.start_ns) // 10**6),
        "--out", str(source.directory / "sender.json"),
    ]  # fmt: skip
    return spawn(sender_ns, command, cpu=KERNEL_CPU)


def collect(sinks: list[Sink]) -> list[dict[str, Any]]:
    """Stops the sinks; each source's summary as the simulator writes it."""
    reports = []
    for sink in sinks:
        stop(sink.process)
        directory = sink.source.directory
        assert directory is not None
        try:
            sent = json.loads((directory / "sender.json").read_text())
            received = json.loads((directory / "sink.json").read_text())
        except (OSError, ValueError) as error:
            raise LabError(f"cbr[{sink.source.index}]: no report ({error})") from None
        span_s = (sink.source.stop_ns - sink.source.start_ns) / 1e9
        # Whole IP packets, as the simulator counts a source's goodput.
        delivered_bits = received["received_pkts"] * sink.source.packet_bytes * 8
        reports.append(
            {
                "id": sink.source.index,
                "kind": "cbr",
                "packets_sent": sent["sent_pkts"],
                "packets_delivered": received["received_pkts"],
                "packets_dropped": sent["sent_pkts"] - received["received_pkts"],
                "goodput_mbps": delivered_bits / span_s / 1e6,
            }
        )
    return reports
