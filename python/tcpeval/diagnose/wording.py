"""How a diagnosis writes rates and sizes in its headlines, evidence and advice."""

from __future__ import annotations


def mbps(bps: float) -> str:
    return f"{bps / 1e6:.1f} Mb/s"


def size_text(n_bytes: float) -> str:
    return f"{n_bytes / (1 << 20):.2f} MiB" if n_bytes >= 1 << 20 else f"{n_bytes / 1024:.0f} KiB"
