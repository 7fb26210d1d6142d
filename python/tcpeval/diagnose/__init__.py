"""`tcpeval diagnose`: measure every limit of a transfer in one run, name the one that binds,
and say what lifts it (docs/diagnose.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcpeval.lazy import exports

if TYPE_CHECKING:
    from tcpeval.diagnose.diagnosis import Diagnosis as Diagnosis
    from tcpeval.diagnose.diagnosis import diagnose as diagnose
    from tcpeval.diagnose.measure import Target as Target

# Imported when first used: `tcpeval --help` loads this package for the command's help.
__getattr__, __all__ = exports(
    __name__,
    {
        "tcpeval.diagnose.diagnosis": ("Diagnosis", "diagnose"),
        "tcpeval.diagnose.measure": ("Target",),
    },
)
