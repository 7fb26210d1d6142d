"""What keeps tcpeval's processes from outliving or trampling on one another: children that
die with their parent, and locks that say who holds them.

A child given `die_with_parent` gets PR_SET_PDEATHSIG(SIGKILL), so that a `kill -9` of the
process that started it (a lab run) takes it along instead of leaving it running for nobody.
A process forked on another's behalf (a pool worker, forked by the fork server for a sweep)
uses `exit_with` that process instead. A `held` lock is an flock on a file that also names
its holder, so the process told to wait can say who it waits for; the kernel drops the lock
when the holder dies, however. Waiters take it in the order they came.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import select
import signal
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

PR_SET_PDEATHSIG = 1


class Locked(Exception):
    """Another process holds the lock; the text names it (pid, host, since when)."""


def die_with_parent() -> None:
    """Ask the kernel to SIGKILL this process when the thread that started it exits (given
    to `subprocess.Popen` as `preexec_fn`)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)


def exit_with(pid: int) -> None:
    """End this process when process `pid` ends, at once if it has: a daemon thread waits on
    a pidfd of it (readable once it exits, reaped or not). PR_SET_PDEATHSIG only names the
    parent, and the fork server that forks pool workers does not exit while they run: they
    hold its liveness pipe."""
    try:
        pidfd = os.pidfd_open(pid)
    except ProcessLookupError:
        os._exit(1)

    def wait() -> None:
        select.select([pidfd], [], [])
        os._exit(1)

    threading.Thread(target=wait, name=f"exit with {pid}", daemon=True).start()


# How often a waiter looks whether its turn has come.
POLL_S = 0.05


@contextmanager
def held(path: Path, wait_s: float = 0.0) -> Iterator[None]:
    """Hold the lock file `path` (made if missing); Locked when another process keeps it past
    `wait_s`. Waiters are served in the order they came: each leaves a ticket in a queue
    beside the lock, and only the earliest ticket of a live process may take it (flock alone
    wakes every waiter at once, and one that polls can starve behind later ones)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    queue = path.with_name(f"{path.name}.queue")
    queue.mkdir(exist_ok=True)
    ticket = queue / f"{time.monotonic_ns():020d}-{os.getpid()}"
    ticket.touch()
    try:
        with path.open("a+") as lock:
            _wait_for_turn(lock, queue, ticket, time.monotonic() + wait_s)
            ticket.unlink()
            _name_holder(lock)
            try:
                yield
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)
    finally:
        ticket.unlink(missing_ok=True)


def _wait_for_turn(lock: IO[str], queue: Path, ticket: Path, deadline: float) -> None:
    """Returns holding the flock once `ticket` is the first in `queue`; Locked at `deadline`."""
    while True:
        if _first_ticket(queue) == ticket.name:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return
            except BlockingIOError:
                pass
        if time.monotonic() >= deadline:
            lock.seek(0)
            raise Locked(lock.read().strip() or "another process")
        time.sleep(POLL_S)


def _first_ticket(queue: Path) -> str | None:
    """The earliest ticket whose process lives; the tickets of dead ones are removed."""
    for ticket in sorted(p.name for p in queue.iterdir()):
        pid = int(ticket.rpartition("-")[2])
        if alive(pid):
            return ticket
        (queue / ticket).unlink(missing_ok=True)
    return None


def alive(pid: int) -> bool:
    """Whether process `pid` exists (another user's included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _name_holder(lock: IO[str]) -> None:
    """The lock file names its holder, for those told to wait."""
    lock.seek(0)
    lock.truncate()
    since = datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lock.write(f"pid {os.getpid()} on {socket.gethostname()} since {since}")
    lock.flush()
