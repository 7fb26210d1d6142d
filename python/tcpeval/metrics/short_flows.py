"""Short flows: how much longer each took than an ideal transfer would on an empty path
(docs/methodology.md §3.14).

The ideal is one round trip and the data's serialisation at the bottleneck rate: a sender
with an unlimited window on an empty path, the completion time counted as the backends count
it, from the flow's first data to the acknowledgement of its last byte (the handshake's round
trip is not in it) [proposal; the flow-completion-time "slowdown" of data-centre transport
studies]. No flow can do better, so a slowdown is at least 1; slow start alone makes it larger
for flows of more than an initial window, queueing and losses larger still.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np


def ideal_completion_s(size_bytes: float, rtt_s: float, rate_bps: float) -> float:
    return rtt_s + size_bytes * 8 / rate_bps


def slowdowns(flows: Iterable[Mapping[str, Any]], rate_bps: float) -> np.ndarray:
    """Each completed flow's completion time over its ideal (`completion_s` is the time from
    its start to its last byte's delivery, `rtt_ms` its base RTT); flows that did not complete
    are left out — count them apart."""
    return np.array(
        [
            f["completion_s"]
            / ideal_completion_s(f["bytes_delivered"], f["rtt_ms"] / 1e3, rate_bps)
            for f in flows
            if f.get("completion_s") is not None and f.get("rtt_ms")
        ],
        dtype=float,
    )
