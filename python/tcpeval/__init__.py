"""tcpeval: evaluate TCP congestion-control stacks on high-speed long-distance paths.

import tcpeval
result = tcpeval.simulate("examples/reno-100mbps.toml")   # tcpeval.run(…, backend="model")
result.flows        # per-flow time series (pandas)
result.save("out/reno"); tcpeval.load("out/reno")
tcpeval.sweep("examples/grids/rate-rtt.toml", "out/rate-rtt"); tcpeval.load("out/rate-rtt")
"""

from __future__ import annotations

from tcpeval.backends import run, simulate
from tcpeval.result import Result
from tcpeval.scenario import Scenario, ScenarioError, load_scenario
from tcpeval.store import load, load_errors
from tcpeval.sweep import SweepReport, sweep

__all__ = [
    "Result",
    "Scenario",
    "ScenarioError",
    "SweepReport",
    "load",
    "load_errors",
    "load_scenario",
    "run",
    "simulate",
    "sweep",
]
