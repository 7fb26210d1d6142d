"""A process that runs only part of the time: stopped (SIGSTOP) for a share of every period
and continued (SIGCONT) for the rest, by a thread of the test, so that the process itself
needs no hook for it. A stopped process is not short of CPU: it simply does not run, as an
application busy elsewhere does not read.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


@contextmanager
def duty_cycled(pid: int, stopped_s: float, period_s: float) -> Iterator[None]:
    """Stops `pid` for `stopped_s` of every `period_s` while inside; leaves it running."""
    done = threading.Event()

    def cycle() -> None:
        with suppress(ProcessLookupError):  # it ended: nothing left to cycle
            while not done.is_set():
                os.kill(pid, signal.SIGSTOP)
                done.wait(stopped_s)
                os.kill(pid, signal.SIGCONT)
                done.wait(period_s - stopped_s)

    thread = threading.Thread(target=cycle, name=f"duty cycle of {pid}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()
        with suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)
