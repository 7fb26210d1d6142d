"""Ctrl-C for the commands that run many things (sweeps, suites): the first one stops cleanly —
no new run starts, the runs in flight are given a moment and then stopped, and the command says
what was kept and how to resume — and a second one, for a user who will not wait even that long,
ends the process at once, still without a traceback.

Ending at once loses nothing finished: a run is written whole or not at all (its directory is
published by a rename), the pool's workers end with the process that started them
(`processes.exit_with`), and what a killed run left half-made is cleared when the command runs
again.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

INTERRUPTED = 130  # the shell's code for a command stopped by SIGINT


@contextmanager
def second_ctrl_c_exits(message: str) -> Iterator[None]:
    """Within the block, the first SIGINT raises KeyboardInterrupt as usual and the next one
    writes `message` to stderr and exits with INTERRUPTED, whatever the process is doing, until
    it exits (a block left by an exception keeps the handler)."""

    def at_once(_signum: int, _frame: FrameType | None) -> None:
        os.write(2, f"\ninterrupted again: {message}\n".encode())
        os._exit(INTERRUPTED)

    def first(_signum: int, _frame: FrameType | None) -> None:
        signal.signal(signal.SIGINT, at_once)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, first)
    yield
    # Only when the block ended without a Ctrl-C: after one, the process is on its way out,
    # and a second must still end it at once, not interrupt its exit with a traceback.
    signal.signal(signal.SIGINT, previous)


@contextmanager
def ctrl_c_deferred() -> Iterator[None]:
    """Within the block, a SIGINT waits for its end (then acts as it would have), for work that
    must not be cut in half: starting a pool's worker, say, which a cut leaves half-spawned
    and complaining on stderr after its parent is gone. Outside the main thread, where signals
    are not handled, it changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, _frame: pending.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
        if pending and callable(previous):
            previous(signal.SIGINT, None)
