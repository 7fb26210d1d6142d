"""Where the project's binaries are: $TCPEVAL_<NAME> (e.g. TCPEVAL_PROBE), then beside this
Python (`make` copies them there), then the build."""

from __future__ import annotations

import os
import sys
from pathlib import Path

PROBE = "tcpeval-probe"
_REPO = Path(__file__).resolve().parents[3]


def env_var(name: str) -> str:
    """tcpeval-probe → TCPEVAL_PROBE."""
    return name.upper().replace("-", "_")


def find_binary(name: str) -> Path:
    """The binary to run; FileNotFoundError names every place looked in."""
    candidates = []
    if os.environ.get(env_var(name)):
        candidates.append(Path(os.environ[env_var(name)]))
    candidates += [Path(sys.prefix) / "bin" / name, _REPO / "target" / "release" / name]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"{name} not found (looked in {looked}); run `make test`")


def probe_binary() -> Path:
    return find_binary(PROBE)
