"""A scenario through a backend: checked first, so a run never starts that cannot be honoured."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from tcpeval.backends.protocol import Backend
from tcpeval.backends.registry import DEFAULT, get
from tcpeval.measurement import measured
from tcpeval.provenance import stamped
from tcpeval.queues import stated
from tcpeval.result import Result
from tcpeval.scenario import Scenario, ScenarioError, load_scenario, parse_scenario


def run(
    scenario: Scenario | dict[str, Any] | str | Path, backend: str | Backend = DEFAULT
) -> Result:
    """Run a scenario (a Scenario, a dict in the TOML layout, or a TOML file's path) on a
    backend (its name, or the object). Raises ScenarioError, before anything runs, when the
    backend is unknown, unavailable here, or cannot run this scenario."""
    chosen = get(backend)
    parsed = as_scenario(scenario)
    check(chosen, parsed)
    return run_on(chosen, parsed)


def run_on(backend: Backend, scenario: Scenario) -> Result:
    """Run a checked scenario: the backend's result with how each queue counted (queues.py),
    over the scenario's measurement window (measurement.py), with the tool's version and the
    scenario's hash (provenance.py). Every caller that runs a backend goes through here, so
    every result has the one shape. The summary is checked twice, as the backend made it and
    as it leaves, not after each step: for 100,000 flows each check takes half a second."""
    result = backend.run(scenario)
    summary = stated(result.summary, scenario)
    summary = measured(summary, result.flows, result.links, scenario)
    return replace(result, summary=stamped(summary))


def simulate(scenario: Scenario | dict[str, Any] | str | Path) -> Result:
    """`run` on the simulator: the short form notebooks and `tcpeval sim` use."""
    return run(scenario, "sim")


def interactive(backend: Backend, max_memory_bytes: int | None) -> Backend:
    """The backend as a command line runs it: with a progress bar and the memory budget
    given (None: its default), for a backend that has them (`interactive` method); else as
    it is."""
    made = getattr(backend, "interactive", None)
    return backend if made is None else made(max_memory_bytes)


def check(backend: Backend, scenario: Scenario) -> None:
    """Raise the first reason `backend` cannot run `scenario` here, naming the field."""
    why_not = backend.available()
    if why_not is not None:
        raise ScenarioError("--backend", backend.name, f"is not available here: {why_not}")
    problems = backend.supports(scenario)
    if problems:
        raise problems[0].error(backend.name)


def as_scenario(scenario: Scenario | dict[str, Any] | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return parse_scenario(scenario)
    return load_scenario(scenario)
