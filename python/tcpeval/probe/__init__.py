"""Real paths: drive the `tcpeval-probe` binary and turn what it measured into a Result.

The binary (crates/probe) does every packet; this package builds its command line, runs it,
and converts its output directory (docs/probe.md, "Output") into the result every backend
returns, so metrics and reports work on real paths unchanged.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcpeval.lazy import exports

if TYPE_CHECKING:
    from tcpeval.probe.binary import probe_binary as probe_binary
    from tcpeval.probe.driver import (
        ProbeError as ProbeError,
    )
    from tcpeval.probe.driver import (
        result_from_raw as result_from_raw,
    )
    from tcpeval.probe.driver import (
        run_rr as run_rr,
    )
    from tcpeval.probe.driver import (
        run_tcp as run_tcp,
    )
    from tcpeval.probe.driver import (
        run_udp as run_udp,
    )
    from tcpeval.probe.settings import (
        RrSettings as RrSettings,
    )
    from tcpeval.probe.settings import (
        TcpSettings as TcpSettings,
    )
    from tcpeval.probe.settings import (
        UdpSettings as UdpSettings,
    )

# Imported when first used: `tcpeval --help` loads this package for its commands' help.
__getattr__, __all__ = exports(
    __name__,
    {
        "tcpeval.probe.binary": ("probe_binary",),
        "tcpeval.probe.driver": ("ProbeError", "result_from_raw", "run_rr", "run_tcp", "run_udp"),
        "tcpeval.probe.settings": ("RrSettings", "TcpSettings", "UdpSettings"),
    },
)
