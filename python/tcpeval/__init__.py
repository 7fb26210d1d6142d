"""tcpeval: evaluate TCP congestion-control stacks on high-speed long-distance paths.

import tcpeval
result = tcpeval.simulate("examples/reno-100mbps.toml")
result.flows        # per-flow time series (pandas)
result.save("out/reno"); tcpeval.load("out/reno")
"""

from __future__ import annotations

from tcpeval.backends.sim import simulate
from tcpeval.result import Result, load
from tcpeval.scenario import Scenario, ScenarioError, load_scenario

__all__ = ["Result", "Scenario", "ScenarioError", "load", "load_scenario", "simulate"]
