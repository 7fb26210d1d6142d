"""What produced a result: the tool's version and a hash of the scenario as run, recorded in
every summary so a number can be traced to the code and the input that made it."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from importlib.metadata import PackageNotFoundError
from importlib.metadata import version as package_version
from typing import Any

PACKAGE = "tcpeval"


@cache
def version() -> str:
    """The installed tcpeval's version; "unknown" when run from a tree never installed."""
    try:
        return package_version(PACKAGE)
    except PackageNotFoundError:
        return "unknown"


def scenario_sha256(described: dict[str, Any]) -> str:
    """SHA-256 of the scenario as run (every default filled in), as canonical JSON: equal
    scenarios hash equal however they were written."""
    canonical = json.dumps(described, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def stamped(summary: dict[str, Any]) -> dict[str, Any]:
    """The summary with `tcpeval_version` and `scenario_sha256`."""
    return summary | {
        "tcpeval_version": version(),
        "scenario_sha256": scenario_sha256(summary["scenario"]),
    }
