"""Backends: each turns a scenario into a Result of the one shape (docs/contract.md).

- `protocol`: the Backend protocol, Problem, and the checks every backend shares.
- `registry`: the backends by name; `model` (analytical models) and `sim` (the simulator).
- `run`: a scenario through a backend, refused by name where the backend cannot run it.
"""

from __future__ import annotations

from tcpeval.backends.protocol import Backend, Problem, keys_used, refusals
from tcpeval.backends.registry import DEFAULT, all_backends, get, names, register
from tcpeval.backends.run import as_scenario, check, interactive, run, run_on, simulate

__all__ = [
    "DEFAULT",
    "Backend",
    "Problem",
    "all_backends",
    "as_scenario",
    "check",
    "get",
    "interactive",
    "keys_used",
    "names",
    "refusals",
    "register",
    "run",
    "run_on",
    "simulate",
]
