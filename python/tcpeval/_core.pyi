"""The Rust simulator core (crates/py). The boundary is specified in docs/contract.md."""

from typing import Any

import numpy as np

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

def simulate(
    resolved_json: str,
) -> tuple[str, dict[str, np.ndarray], dict[str, Any], bytes | None]:
    """Run a resolved scenario; returns (summary JSON, flow columns, link columns, pcap).

    The link columns also carry `link_names`, the names the `link` column indexes (a link's
    reverse direction is named like "bottleneck:reverse"). `pcap` is the capture of the
    scenario's `pcap_link` as a classic pcap file, or None when nothing was captured.
    Raises ScenarioRejected for a scenario the core rejects.
    """

def cc_algorithms() -> str:
    """JSON list of {"name", "source", "params": {name: default}} for every algorithm."""
