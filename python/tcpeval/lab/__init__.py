"""The lab: real Linux TCP stacks in network namespaces on this host, behind a link emulator
that checks what it delivered (docs/lab.md). `tcpeval.backends.lab` is its backend;
`run_lab` one run; `clean` undoes what killed runs left behind."""

from __future__ import annotations

from tcpeval.lab.ledger import LabBusy, clean_stale, host_lock


def clean(wait_s: float = 0.0) -> list[str]:
    """Removes every namespace, process and setting of lab runs that are no longer running;
    returns the namespaces removed. LabBusy when a run is in progress."""
    with host_lock(wait_s):
        return clean_stale()


__all__ = ["LabBusy", "clean"]
