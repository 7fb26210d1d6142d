"""Where the `tcpeval-probe` binary is: $TCPEVAL_PROBE, then beside this Python, then the build."""

from __future__ import annotations

import os
import sys
from pathlib import Path

BINARY_NAME = "tcpeval-probe"
ENV_VAR = "TCPEVAL_PROBE"
_REPO = Path(__file__).resolve().parents[3]


def probe_binary() -> Path:
    """The binary to run; FileNotFoundError names every place looked in."""
    candidates = []
    if os.environ.get(ENV_VAR):
        candidates.append(Path(os.environ[ENV_VAR]))
    candidates += [
        Path(sys.prefix) / "bin" / BINARY_NAME,
        _REPO / "target" / "release" / BINARY_NAME,
    ]
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    looked = ", ".join(str(c) for c in candidates)
    raise FileNotFoundError(f"{BINARY_NAME} not found (looked in {looked}); run `make test`")
