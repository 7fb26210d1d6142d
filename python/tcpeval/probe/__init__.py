"""Real paths: drive the `tcpeval-probe` binary and turn what it measured into a Result.

The binary (crates/probe) does every packet; this package builds its command line, runs it,
and converts its output directory (docs/probe.md, "Output") into the result every backend
returns, so metrics and reports work on real paths unchanged.
"""

from __future__ import annotations

from tcpeval.probe.binary import probe_binary
from tcpeval.probe.driver import ProbeError, result_from_raw, run_rr, run_tcp, run_udp
from tcpeval.probe.settings import RrSettings, TcpSettings, UdpSettings

__all__ = [
    "ProbeError",
    "RrSettings",
    "TcpSettings",
    "UdpSettings",
    "probe_binary",
    "result_from_raw",
    "run_rr",
    "run_tcp",
    "run_udp",
]
