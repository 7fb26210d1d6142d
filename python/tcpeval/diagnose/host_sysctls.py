"""`diagnose --verify --apply-host`: the advised sysctls set on the near end, each change
printed with the command that undoes it. Nothing is asked interactively and nothing is undone
automatically: the point is a host that keeps the better settings once they are shown to work.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence

from pydantic import BaseModel

from tcpeval.diagnose.remedy import HostSysctl


class HostSysctlError(Exception):
    """A sysctl could not be read or written; the message names it."""


class SysctlChange(BaseModel):
    key: str
    before: str
    after: str
    undo: str


def apply_near_sysctls(
    sysctls: Sequence[HostSysctl], wrapper: Sequence[str] = ()
) -> list[SysctlChange]:
    """Sets the near end's sysctls among `sysctls` (through `wrapper`, e.g. `ip netns exec
    NS`); one already at its value is left alone. Prints each change as it is made."""
    changes = []
    for sysctl in (s for s in sysctls if s.end == "near"):
        before = _read(sysctl.key, wrapper)
        if before == _normal(sysctl.value):
            continue
        _run([*wrapper, "sysctl", "-q", "-w", f"{sysctl.key}={sysctl.value}"], sysctl.key)
        change = SysctlChange(
            key=sysctl.key,
            before=before,
            after=_read(sysctl.key, wrapper),
            undo=f"sysctl -w {sysctl.key}='{before}'",
        )
        print(f"set {change.key}: {change.before} → {change.after} (undo: {change.undo})",
              file=sys.stderr, flush=True)  # fmt: skip
        changes.append(change)
    return changes


def _read(key: str, wrapper: Sequence[str]) -> str:
    return _normal(_run([*wrapper, "sysctl", "-n", key], key))


def _normal(value: str) -> str:
    """As the kernel prints it, with the tabs of vector sysctls made single spaces."""
    return " ".join(value.split())


def _run(command: list[str], key: str) -> str:
    try:
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    except OSError as e:
        raise HostSysctlError(f"{key}: {e}") from e
    if done.returncode != 0:
        raise HostSysctlError(f"{key}: {done.stderr.strip() or 'sysctl failed'}")
    return done.stdout
