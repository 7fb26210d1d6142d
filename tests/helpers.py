"""Shared test helpers: small scenarios and the invariants every simulation must keep."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from tcpeval import backends
from tcpeval.backends import Problem, refusals
from tcpeval.result import Result
from tcpeval.scenario import Scenario

# A scenario small enough to simulate in a blink: 3 s at 10 Mb/s, two Reno flows.
SMALL_TOML = """\
name = "small"
duration = "3s"

[bottleneck]
rate = "10Mbps"
queue = "50%bdp"

[[flow]]
cc = "reno"
rtt = "20ms"
count = 2
"""

_SMALL: dict[str, Any] = {
    "name": "small",
    "duration": "3s",
    "bottleneck": {"rate": "10Mbps", "queue": "50%bdp"},
    "flow": [{"cc": "reno", "rtt": "20ms", "count": 2}],
}


def small_scenario() -> dict[str, Any]:
    """SMALL_TOML as a dict, a fresh copy each time so tests may change it."""
    return copy.deepcopy(_SMALL)


def assert_packets_conserved(sim: dict[str, Any]) -> None:
    """Every data packet sent was delivered, dropped or is still on its way: `sim` is the
    simulator's counters (the core's `sim`, a result's `backend.details`)."""
    accounted = sim["packets_delivered"] + sim["packets_dropped"] + sim["packets_in_flight"]
    assert sim["packets_sent"] == accounted, sim
    assert sim["packets_delivered"] > 0, sim


class ModelUnderAnotherName:
    """A test backend: the model backend registered under another name; subclasses change what
    it refuses or answers."""

    name = "model-under-another-name"
    description = "the model (a test)"
    runs_per_host = None
    real_time = False

    def available(self) -> str | None:
        return None

    def algorithms(self) -> list[str]:
        return ["reno", "cubic"]

    def refused_keys(self) -> Mapping[str, str]:
        return {}

    def supports(self, scenario: Scenario) -> list[Problem]:
        return refusals(self, scenario)

    def run(self, scenario: Scenario) -> Result:
        result = backends.get("model").run(scenario)
        result.summary["backend"]["name"] = self.name
        return result
