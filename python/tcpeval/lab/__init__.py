"""The lab: real Linux TCP stacks in network namespaces on this host, behind a link emulator
that checks what it delivered (docs/lab.md). `tcpeval.backends.lab` is its backend;
`run_lab` one run; `clean` undoes what killed runs left behind.

The names are imported when first used (lazy.py), so that `tcpeval --help`, which lists
`tcpeval lab`, does not import the ledger.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcpeval.lazy import exports

if TYPE_CHECKING:
    from tcpeval.lab.ledger import LabBusy as LabBusy
    from tcpeval.lab.ledger import clean as clean

__getattr__, __all__ = exports(__name__, {"tcpeval.lab.ledger": ("LabBusy", "clean")})
