"""What a lab run has made on this host, written down before it is made, so that nothing
outlives the run: a run killed at any point (SIGKILL included) is cleaned up by the next lab
command or `tcpeval lab clean`.

One lab run at a time per host: the processes of two runs would share the CPUs and void both
self-checks. The host lock is an flock, released by the kernel when its holder dies, so a
killed run never blocks the next one. Each run keeps a ledger (JSON) in the lab directory:
its owner's PID, the namespaces it creates, and the global settings it changed with their
previous values. Holding the lock proves no other run is live, so every ledger found then
belongs to a dead run and is undone: processes in its namespaces killed, namespaces deleted
(which removes their veths and qdiscs), settings restored, and the processes that hold its BPF
congestion controls registered (lab/bpf.py) killed, which unregisters them.
"""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from pathlib import Path

from tcpeval.processes import Locked, held

LAB_DIR_VAR = "TCPEVAL_LAB_DIR"
DEFAULT_LAB_DIR = Path("/run/tcpeval-lab")
LOCK_FILE = "lock"
# Namespace and interface names start with this and a run-unique tag (≤ 15 bytes in all).
NAME_PREFIX = "tl"
# The process that holds a BPF congestion control registered (lab/bpf.py).
HOLDER = "tcpeval-bpf"


class LabBusy(Exception):
    """Another lab run holds the host."""


def lab_dir() -> Path:
    return Path(os.environ.get(LAB_DIR_VAR, DEFAULT_LAB_DIR))


@dataclass
class Ledger:
    """What one run has made; saved at every change."""

    prefix: str
    owner_pid: int = field(default_factory=os.getpid)
    namespaces: list[str] = field(default_factory=list)
    # Global (host-wide) sysctls this run changed → their values before.
    sysctls: dict[str, str] = field(default_factory=dict)
    # Threads moved off the emulator's CPU → the CPUs they were allowed before.
    affinities: dict[str, list[int]] = field(default_factory=dict)
    # BPF congestion controls registered → the PID of the process holding each.
    holders: dict[str, int] = field(default_factory=dict)

    @property
    def path(self) -> Path:
        return lab_dir() / f"{self.prefix}.json"

    def save(self) -> None:
        staging = self.path.with_suffix(".tmp")
        staging.write_text(json.dumps(asdict(self), indent=1))
        staging.replace(self.path)

    def add_namespace(self, name: str) -> None:
        self.namespaces.append(name)
        self.save()

    def add_holder(self, pid: int, name: str) -> None:
        self.holders[name] = pid
        self.save()

    def set_global_sysctl(self, key: str, value: str) -> None:
        """Changes a host-wide setting, remembering its value before the first change."""
        if key not in self.sysctls:
            self.sysctls[key] = read_sysctl(key)
            self.save()
        write_sysctl(key, value)

    def clear_cpu(self, cpu: int) -> int:
        """Moves every thread that may run elsewhere off `cpu`, so that what runs there
        next has it to itself; returns how many moved. Per-CPU kernel threads stay (they
        can run nowhere else), as do threads the kernel will not move."""
        for task in Path("/proc").glob("[0-9]*/task/[0-9]*"):
            tid = int(task.name)
            try:
                allowed = os.sched_getaffinity(tid)
                if cpu in allowed and len(allowed) > 1:
                    os.sched_setaffinity(tid, allowed - {cpu})
                    self.affinities[str(tid)] = sorted(allowed)
            except OSError:
                continue  # gone, or a kernel thread bound by the kernel
        self.save()
        return len(self.affinities)

    def undo(self) -> None:
        """Kills what runs in the namespaces and what holds its congestion controls, deletes
        the namespaces, restores the settings and the threads' CPUs."""
        for name, pid in self.holders.items():
            _kill_holder(pid, name)
        for ns in self.namespaces:
            _kill_all_in(ns)
            subprocess.run(["ip", "netns", "del", ns], capture_output=True, check=False)
        for key, value in self.sysctls.items():
            write_sysctl(key, value)
        for tid, allowed in self.affinities.items():
            with suppress(OSError):
                os.sched_setaffinity(int(tid), allowed)
        self.path.unlink(missing_ok=True)

    @classmethod
    def read(cls, path: Path) -> Ledger:
        return cls(**json.loads(path.read_text()))


def new_prefix() -> str:
    return f"{NAME_PREFIX}{secrets.token_hex(2)}"


@contextmanager
def host_lock(wait_s: float = 0.0) -> Iterator[None]:
    """Holds this host's lab; LabBusy when another run keeps it past `wait_s`."""
    try:
        with held(lab_dir() / LOCK_FILE, wait_s):
            yield
    except Locked as holder:
        raise LabBusy(f"a lab run holds this host ({holder})") from None


def clean_stale() -> list[str]:
    """Undoes every ledger left on this host; call with the host lock held. Returns the
    namespaces and the congestion-control registrations removed."""
    removed: list[str] = []
    for path in sorted(lab_dir().glob(f"{NAME_PREFIX}*.json")):
        try:
            ledger = Ledger.read(path)
        except (OSError, ValueError, TypeError):
            path.unlink(missing_ok=True)
            continue
        ledger.undo()
        removed += ledger.namespaces + list(ledger.holders)
    return removed


def clean(wait_s: float = 0.0) -> list[str]:
    """Removes every namespace, process, registration and setting of lab runs that are no
    longer running; returns the namespaces and registrations removed. LabBusy when a run is
    in progress."""
    with host_lock(wait_s):
        return clean_stale()


def read_sysctl(key: str) -> str:
    return Path("/proc/sys", key.replace(".", "/")).read_text().strip()


def write_sysctl(key: str, value: str) -> None:
    Path("/proc/sys", key.replace(".", "/")).write_text(value)


def _kill_holder(pid: int, name: str) -> None:
    """Kills the process holding registration `name`, if it is still that process (a PID
    read from an old ledger may since belong to another)."""
    try:
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return
    if HOLDER in command[0].decode(errors="replace") and name.encode() in command:
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def _kill_all_in(ns: str) -> None:
    """Kills every process in a namespace: `ip netns del` alone leaves them, and a process
    keeps its namespace alive."""
    listed = subprocess.run(["ip", "netns", "pids", ns], capture_output=True, text=True)
    for pid in listed.stdout.split():
        with suppress(ProcessLookupError, ValueError):
            os.kill(int(pid), signal.SIGKILL)
