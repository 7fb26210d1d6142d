"""What a backend is: something that turns a scenario into a Result of the one shape.

A backend says whether it can run on this machine (`available`), which algorithms it knows,
which scenario keys it cannot honour (`refused_keys`) and, for a given scenario, every problem
that stops it (`supports`). A scenario it cannot run is refused by name before anything runs,
never run with a key silently ignored.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from pydantic import BaseModel

from tcpeval.result import Result
from tcpeval.scenario import Scenario, ScenarioError


class BackendError(Exception):
    """A backend could not finish a run it accepted (a tool failed, a process hung); the
    message is one line naming what failed. Not the scenario's fault: that is ScenarioError."""


@dataclass(frozen=True)
class Problem:
    """Something in a scenario that a backend cannot do: the field, its value, and why."""

    field: str
    value: object
    reason: str

    def error(self, backend: str) -> ScenarioError:
        return ScenarioError(self.field, self.value, f"{self.reason} (backend '{backend}')")


@runtime_checkable
class Backend(Protocol):
    name: str
    description: str
    # How many runs one host may hold at once; None: as many as it has CPUs. Real traffic
    # says 1: two runs would share the CPUs and the path, and measure each other.
    runs_per_host: int | None
    # Whether a run takes the scenario's duration in wall-clock time (suites then take their
    # `realtime` grid with --quick).
    real_time: bool

    def available(self) -> str | None:
        """None when the backend can run here, else why not ("needs root")."""
        ...

    def algorithms(self) -> list[str]:
        """The congestion controls it can run (or model)."""
        ...

    def refused_keys(self) -> Mapping[str, str]:
        """Scenario keys it cannot honour, as `table.key` (or a table) → why."""
        ...

    def supports(self, scenario: Scenario) -> list[Problem]:
        """Every problem that stops it running `scenario`; empty when it can."""
        ...

    def run(self, scenario: Scenario) -> Result:
        """Run a scenario `supports` found no problem with."""
        ...


def keys_used(scenario: Scenario) -> Iterator[tuple[str, str, object]]:
    """Every key the user wrote, as (`table.key`, its path in the file, its value): tables and
    their keys, e.g. ("flow.delayed_ack", "flow[1].delayed_ack", False) and ("web", "web[0]",
    …). Defaults the user did not write are not listed."""
    for name in sorted(scenario.model_fields_set):
        value = getattr(scenario, name)
        entries = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
        for index, entry in entries:
            path = name if index is None else f"{name}[{index}]"
            yield name, path, entry
            if isinstance(entry, BaseModel):
                for key in sorted(entry.model_fields_set):
                    yield f"{name}.{key}", f"{path}.{key}", getattr(entry, key)


def refusals(backend: Backend, scenario: Scenario) -> list[Problem]:
    """The problems every backend shares: keys it refuses, algorithms it does not know."""
    refused = backend.refused_keys()
    problems = [
        Problem(path, _shown(value), f"is not supported: {refused[key]}")
        for key, path, value in keys_used(scenario)
        if key in refused
    ]
    known = backend.algorithms()
    for path, table in scenario.tcp_tables():
        if table.cc.name not in known:
            reason = f"is not an algorithm of this backend (choose from {', '.join(known)})"
            problems.append(Problem(f"{path}.cc", table.cc.name, reason))
    return problems


def rate_changes(scenario: Scenario, why: str) -> list[Problem]:
    """A link whose rate changes during the run, for a backend that holds each rate fixed."""
    return [
        Problem(f"{path}.rate", link.rate.given, f"is not supported: {why}")
        for path, _, link in scenario.links()
        if link.rate.changes
    ]


def _shown(value: object) -> object:
    """A value as the error shows it: a whole table is named, not printed."""
    return None if isinstance(value, BaseModel) else getattr(value, "given", value)
