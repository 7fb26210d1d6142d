"""The Rust simulator core (crates/py). The boundary is specified in docs/contract.md."""

from typing import Any, final

import numpy as np

__all__ = [
    "FLOW_COLUMNS",
    "HEADER_BYTES",
    "LINK_COLUMNS",
    "SIM_FLOW_COLUMNS",
    "SIM_LINK_COLUMNS",
    "Progress",
    "ScenarioRejected",
    "cc_algorithms",
    "simulate",
]

FLOW_COLUMNS: list[str]
"""The flow time-series columns, in order; every backend's `flows` frame carries them."""
LINK_COLUMNS: list[str]
"""The link time-series columns, in order."""
SIM_FLOW_COLUMNS: list[str]
"""The simulator's own flow columns, after the contract's (its ECN counters)."""
SIM_LINK_COLUMNS: list[str]
"""The simulator's own link columns, after the contract's."""
HEADER_BYTES: int
"""IP + TCP header bytes (timestamps on) of every segment: a packet is mss + HEADER_BYTES."""

class ScenarioRejected(ValueError):
    """A resolved scenario the core rejects. `args` is `(list, index, key, value, reason)`:
    the entry (`"flows"`, 3) the problem is in, or (None, None) for a top-level key; the key
    within it (`"cc"`, `"aqm.max_p"`); the value as the core saw it; what is wrong."""

    args: tuple[str | None, int | None, str, str, str]

@final  # a Rust class: no subclass
class Progress:
    """How far a run got, read from another thread while it goes; `stop()` ends it early."""

    def __init__(self) -> None: ...
    @property
    def now_ns(self) -> int:
        """Simulated time reached, ns."""
    @property
    def events(self) -> int:
        """Events handled so far."""
    def stop(self) -> None:
        """Ask the run to stop; it then raises KeyboardInterrupt."""

def simulate(
    resolved_json: str, progress: Progress | None = None
) -> tuple[str, dict[str, np.ndarray], dict[str, Any], bytes | None]:
    """Run a resolved scenario; returns (summary JSON, flow columns, link columns, pcap).

    The link columns also carry `link_names`, the names the `link` column indexes (a link's
    reverse direction is named like "bottleneck:reverse"). `pcap` is the capture of the
    scenario's `pcap_link` as a classic pcap file, or None when nothing was captured.
    Raises ScenarioRejected for a scenario the core rejects, MemoryError when its time series
    outgrow memory, KeyboardInterrupt when `progress` was stopped.
    """

def cc_algorithms() -> str:
    """JSON list of {"name", "source", "params": {name: default}} for every algorithm."""
