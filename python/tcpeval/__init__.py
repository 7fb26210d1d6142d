"""tcpeval: evaluate TCP congestion-control stacks on high-speed long-distance paths.

import tcpeval
result = tcpeval.simulate("examples/reno-100mbps.toml")   # tcpeval.run(…, backend="model")
result.flows        # per-flow time series (pandas)
result.save("out/reno"); tcpeval.load("out/reno")
tcpeval.sweep("examples/grids/rate-rtt.toml", "out/rate-rtt"); tcpeval.load("out/rate-rtt")

The names below are imported when first used (PEP 562), so that `tcpeval --help` and the
command's start do not pay for pandas, DuckDB and matplotlib.
"""

from __future__ import annotations

import sys
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tcpeval.lazy import exports

if TYPE_CHECKING:
    from tcpeval.backends.run import run as run
    from tcpeval.backends.run import simulate as simulate
    from tcpeval.result import Result as Result
    from tcpeval.scenario import (
        Scenario as Scenario,
    )
    from tcpeval.scenario import (
        ScenarioError as ScenarioError,
    )
    from tcpeval.scenario import (
        load_scenario as load_scenario,
    )
    from tcpeval.store import load as load
    from tcpeval.store import load_errors as load_errors
    from tcpeval.sweep import SweepReport as SweepReport
    from tcpeval.sweep import sweep as sweep

__getattr__, __all__ = exports(
    __name__,
    {
        "tcpeval.backends": ("run", "simulate"),
        "tcpeval.result": ("Result",),
        "tcpeval.scenario": ("Scenario", "ScenarioError", "load_scenario"),
        "tcpeval.store": ("load", "load_errors"),
        "tcpeval.sweep": ("SweepReport", "sweep"),
    },
)


class _Package(ModuleType):
    """`tcpeval.sweep` is the function, though a sub-package has the same name: importing the
    sub-package would bind it here, hiding the function, so that binding is not kept."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in __all__ and isinstance(value, ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
