"""The model backend: the analytical models (tcpeval.models) answering a scenario.

- `stacks`: what the models know of each algorithm (response function, back-off, regrowth).
- `flows`: a flow as the models see it, its answer in an epoch, the link's state.
- `shares`: each flow's rate while a set of flows is active (limits, then the link's share).
- `aqm`: the link's share under a step marker (DCTCP) or RED (its fixed point).
- `series`: the time series and summaries, in the columns every backend's results carry.
- `backend`: the Backend itself (`BACKEND`): what it refuses, and a run.
"""

from __future__ import annotations

from tcpeval.backends.model.backend import BACKEND

__all__ = ["BACKEND"]
