"""How long a run will take in wall time, said before it starts: the simulator estimates it
from the scenario (sim/wall_estimate.py), a real-time backend (the lab, a probe) takes its
`duration` and its set-up, the models take no time worth saying. The command line asks, or refuses,
before a run longer than its `--max-time`, naming the key that drives the estimate.
"""

from __future__ import annotations

import math

from tcpeval.backends.estimate import Estimate
from tcpeval.scenario import Scenario, ScenarioError

REAL_TIME_SETUP_S = 10.0  # a lab run's namespaces, emulator, checks and result: a few seconds


def said(estimate: Estimate) -> str:
    """The estimate as the command line says it, with the key that drives it."""
    field, value, _ = estimate.largest()
    return f"about {about(estimate.total)} ({field} = {value} drives it)"


def wall_estimate(backend: object, scenario: Scenario) -> Estimate | None:
    """What `backend` will take to run `scenario`, or None when it says nothing (the models)."""
    if getattr(backend, "real_time", False):
        duration = scenario.duration
        return Estimate(
            duration.seconds + REAL_TIME_SETUP_S, {"duration": (duration.given, duration.seconds)}
        )
    estimate = getattr(backend, "estimate_wall", None)
    return None if estimate is None else estimate(scenario)


def over_time(estimate: Estimate, limit_given: str) -> ScenarioError:
    """The error for a run estimated to take longer than --max-time, naming its largest key."""
    field, value, _ = estimate.largest()
    reason = (
        f"makes the run take about {about(estimate.total)} of wall time here, more than "
        f"--max-time {limit_given}; give a larger --max-time to run it"
    )
    return ScenarioError(field, value, reason)


def about(seconds: float) -> str:
    """A duration to two significant figures in the largest unit it is at least one of:
    "290 h", "1.5 min", "0.3 s"."""
    for unit, factor in (("h", 3600.0), ("min", 60.0)):
        if seconds >= factor:
            return _two_figures(seconds / factor, unit)
    return _two_figures(seconds, "s")


def _two_figures(value: float, unit: str) -> str:
    digits = 1 - math.floor(math.log10(value)) if value > 0 else 0
    return f"{round(value, digits):g} {unit}"
