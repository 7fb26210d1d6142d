"""Names a package exports, imported when first used (PEP 562), so that importing the package
(as `tcpeval --help` does) costs nothing until a name is needed."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def exports(
    package: str, modules: dict[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], list[str]]:
    """The package's `__getattr__` and `__all__`: `modules` maps each module to the names the
    package exports from it."""
    homes = {name: module for module, names in modules.items() for name in names}

    def attribute(name: str) -> Any:
        if name not in homes:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(homes[name]), name)

    return attribute, sorted(homes)
