"""Names a package exports, imported when first used (PEP 562), so that importing the package
(as `tcpeval --help` does) costs nothing until a name is needed."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def exports(package: str, homes: dict[str, str]) -> Callable[[str], Any]:
    """The package's `__getattr__`: each name of `homes` comes from the module named there."""

    def attribute(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(homes[name]), name)

    return attribute
