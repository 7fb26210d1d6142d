"""Reading scenarios: TOML files, dicts and `--set` overrides, with pydantic's errors turned
into one-line ScenarioErrors."""

from __future__ import annotations

import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from tcpeval.scenario.errors import ScenarioError, from_validation_error
from tcpeval.scenario.model import Scenario


def load_scenario(path: str | Path, overrides: Iterable[str] = ()) -> Scenario:
    """Read a TOML scenario and apply `--set` overrides such as `flow.*.cc=cubic`."""
    data = _read_toml(Path(path))
    for assignment in overrides:
        _apply_override(data, assignment)
    return parse_scenario(data)


NESTED_TOO_DEEPLY = "is nested too deeply (no scenario has tables or lists more than a few deep)"


def parse_scenario(data: dict[str, Any]) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise from_validation_error(error) from None
    except RecursionError:
        raise ScenarioError("scenario", None, NESTED_TOO_DEEPLY) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as error:
        raise ScenarioError(str(path), None, f"cannot be read ({error.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ScenarioError(str(path), None, f"is not valid TOML: {one_line(error)}") from None
    except RecursionError:
        raise ScenarioError(str(path), None, NESTED_TOO_DEEPLY) from None


def one_line(error: Exception) -> str:
    return " ".join(str(error).split())


def _apply_override(data: dict[str, Any], assignment: str) -> None:
    """`KEY.PATH=VALUE`: list items by index or `*`; VALUE is TOML if it parses, else text."""
    path, equals, text = assignment.partition("=")
    if not equals or not path:
        raise ScenarioError("--set", assignment, "is not of the form KEY=VALUE")
    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        value = text  # unquoted text such as 1Gbps or 42ms
    except RecursionError:
        raise ScenarioError("--set", path, NESTED_TOO_DEEPLY) from None
    _assign(data, path.split("."), value, assignment)


def set_field(data: dict[str, Any], path: str, value: object) -> None:
    """Set the key at `path` (the `--set` syntax: `flow.0.rtt`, `flow.*.cc`) to `value`."""
    _assign(data, path.split("."), value, f"{path}={value}")


def _assign(
    node: dict[str, Any] | list[Any], keys: list[str], value: object, assignment: str
) -> None:
    key, *rest = keys
    if isinstance(node, dict):
        if rest and key not in node:
            raise ScenarioError("--set", assignment, f"names '{key}', which is not in the scenario")
        children: list[Any] = [key]
    elif key == "*":
        children = list(range(len(node)))
    elif key.isdigit() and int(key) < len(node):
        children = [int(key)]
    else:
        reason = f"names item '{key}' of a list of {len(node)} (use an index or *)"
        raise ScenarioError("--set", assignment, reason)
    for child in children:
        if not rest:
            node[child] = value
        elif isinstance(node[child], dict | list):
            _assign(node[child], rest, value, assignment)
        else:
            raise ScenarioError("--set", assignment, f"goes into '{key}', which is not a table")
