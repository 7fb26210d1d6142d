"""The grid: a base scenario, axes over any of its fields, repeats; expanded into runs.

Axes use the `--set` path syntax (`bottleneck.rate`, `flow.0.rtt`, `flow.*.cc`) and combine as
a Cartesian product; each point is run `repeats` times with seeds `seed + repeat`. Every value
and every point is validated and resolved before anything runs (docs/sweeps.md).
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tcpeval.backends import DEFAULT as DEFAULT_BACKEND
from tcpeval.scenario import ScenarioError, parse_scenario, resolution
from tcpeval.scenario.loading import _read_toml, set_field
from tcpeval.sweep.tomlwriter import value_text

GRID_KEYS = ("repeats", "backend", "base", "axes")
_UNSAFE = re.compile(r"[^A-Za-z0-9._%+=-]")
_READABLE_CHARS = 160  # keeps a run id well inside the 255 bytes of a file name


@dataclass(frozen=True)
class Grid:
    """A grid with its base inlined: what `grid.toml` of a sweep directory holds."""

    base: dict[str, Any]
    axes: dict[str, list[Any]]
    repeats: int = 1
    backend: str = DEFAULT_BACKEND

    def as_dict(self) -> dict[str, Any]:
        return {
            "repeats": self.repeats,
            "backend": self.backend,
            "base": self.base,
            "axes": self.axes,
        }


@dataclass(frozen=True)
class RunSpec:
    """One run of the grid: the point's axis values, the repeat, and the scenario to run."""

    run_id: str
    axes: dict[str, Any]
    repeat: int
    seed: int
    scenario: dict[str, Any]

    def params(self) -> dict[str, Any]:
        """What `params.json` holds."""
        return {"run_id": self.run_id, "axes": self.axes, "repeat": self.repeat, "seed": self.seed}


def load_grid(grid: str | Path | dict[str, Any]) -> Grid:
    """A grid from a TOML file or a dict in the same layout; a base given as a path is read
    (relative to the grid file) and inlined."""
    if isinstance(grid, dict):
        return _parse_grid(copy.deepcopy(grid), Path.cwd())
    path = Path(grid)
    return _parse_grid(_read_toml(path), path.parent)


def expand(grid: Grid) -> list[RunSpec]:
    """Every run of the grid, each scenario validated and resolved; the first problem raises a
    ScenarioError naming the axis (or the point) and the value."""
    for path, values in grid.axes.items():
        for value in values:
            _checked(grid.base, {path: value}, f"axes.{path}", value)
    runs = []
    for combination in itertools.product(*grid.axes.values()):
        axes = dict(zip(grid.axes, combination, strict=True))
        point = _checked(grid.base, axes, "grid point", _point_text(axes))
        for repeat in range(grid.repeats):
            seed = point["seed"] + repeat
            scenario = point | {"seed": seed}
            runs.append(RunSpec(run_id(axes, repeat), axes, repeat, seed, scenario))
    return runs


def run_id(axes: dict[str, Any], repeat: int) -> str:
    """`bottleneck.rate=10Mbps__flow.0.rtt=16ms__rep=0__3f2a9c`: readable and filesystem-safe,
    with a short hash of the exact overrides to tell apart values made alike by the cleaning."""
    exact = json.dumps({"axes": axes, "repeat": repeat}, sort_keys=True)
    digest = hashlib.sha256(exact.encode()).hexdigest()[:6]
    readable = "__".join(f"{path}={_plain(value)}" for path, value in axes.items())
    readable = _UNSAFE.sub("_", readable)[:_READABLE_CHARS]
    return "__".join(part for part in (readable, f"rep={repeat}", digest) if part)


def _parse_grid(data: dict[str, Any], folder: Path) -> Grid:
    unknown = sorted(set(data) - set(GRID_KEYS))
    if unknown:
        raise ScenarioError(f"grid.{unknown[0]}", None, "unknown key")
    repeats = data.get("repeats", 1)
    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ScenarioError("grid.repeats", repeats, "must be a whole number, at least 1")
    backend = data.get("backend", DEFAULT_BACKEND)
    if not isinstance(backend, str):
        raise ScenarioError("grid.backend", backend, "must be the name of a backend")
    return Grid(_base(data.get("base"), folder), _axes(data.get("axes", {})), repeats, backend)


def _base(base: object, folder: Path) -> dict[str, Any]:
    if isinstance(base, str):
        return _read_toml(folder / base)
    if not isinstance(base, dict):
        raise ScenarioError("grid.base", None, "missing: a [base] table or a scenario file")
    return base


def _axes(axes: object) -> dict[str, list[Any]]:
    if not isinstance(axes, dict):
        raise ScenarioError("grid.axes", None, "must be a table of field = [values]")
    for path, values in axes.items():
        if not isinstance(values, list) or not values:
            raise ScenarioError(f"axes.{path}", None, "must be a non-empty list of values")
        texts = [value_text(value) for value in values]
        if len(set(texts)) < len(texts):
            raise ScenarioError(f"axes.{path}", None, "lists a value twice")
    return axes


def _checked(base: dict[str, Any], axes: dict[str, Any], field: str, value: object) -> dict:
    """The base with the axes set, validated and resolved: the scenario of a run (no seed
    offset yet), with every default filled in."""
    data = copy.deepcopy(base)
    try:
        for path, axis_value in axes.items():
            set_field(data, path, axis_value)
        scenario = parse_scenario(data)
        resolution(scenario)
    except ScenarioError as error:
        reason = error.reason if error.field == "--set" else f"is invalid: {error}"
        raise ScenarioError(field, value, reason) from None
    return data | {"seed": scenario.seed}


def _point_text(axes: dict[str, Any]) -> str:
    return ", ".join(f"{path}={_plain(value)}" for path, value in axes.items())


def _plain(value: object) -> str:
    return value if isinstance(value, str) else value_text(value)
