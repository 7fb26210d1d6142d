"""The Rust simulator core (crates/py). The boundary is specified in docs/contract.md."""

from typing import Any

import numpy as np

def simulate(
    resolved_json: str,
) -> tuple[str, dict[str, np.ndarray], dict[str, Any], bytes | None]:
    """Run a resolved scenario; returns (summary JSON, flow columns, link columns, pcap).

    The link columns also carry `link_names`, the names the `link` column indexes (a link's
    reverse direction is named like "bottleneck:reverse"). `pcap` is the capture of the
    scenario's `pcap_link` as a classic pcap file, or None when nothing was captured.
    Raises ValueError, starting with the field path, for a scenario the core rejects.
    """

def cc_algorithms() -> str:
    """JSON list of {"name", "source", "params": {name: default}} for every algorithm."""
