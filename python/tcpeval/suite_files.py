"""The built-in suites' files (suites/NAME.toml), listed and read without importing the suites
package: the command's help lists them, and `tcpeval --help` must not pay for pandas."""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

SUFFIX = ".toml"


def _folder() -> Traversable:
    return resources.files("tcpeval").joinpath("suites")


def suite_names() -> list[str]:
    """Names of the built-in suites."""
    return sorted(
        f.name.removesuffix(SUFFIX) for f in _folder().iterdir() if f.name.endswith(SUFFIX)
    )


def suite_text(name: str) -> str:
    """A built-in suite's file as written."""
    return _folder().joinpath(name + SUFFIX).read_text()
