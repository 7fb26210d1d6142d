"""The simulator backend: the Rust core answering a scenario.

- `backend`: the Backend itself (`BACKEND`): a scenario resolved to JSON, the core's columns
  back as a Result.
- `memory`: what a run will take in memory, refused above the budget (`--max-memory`).
- `wall_estimate`: what a run will take in wall time (`--max-time`).
- `progress`: the core run in a thread, watched: a progress bar, Ctrl-C as a clean stop.
"""

from __future__ import annotations

from tcpeval.backends.sim.backend import BACKEND

__all__ = ["BACKEND"]
