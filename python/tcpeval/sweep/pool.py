"""Where runs execute on this machine: a pool of worker processes (Dask's are in dask.py).
Each run calls the same `work(spec, sweep_dir)` and outcomes come back as runs finish. A worker
that dies takes no other run with it: its run is recorded as failed and the rest go on.
"""

from __future__ import annotations

import gc
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from tcpeval.interrupts import INTERRUPTED, ctrl_c_deferred
from tcpeval.processes import exit_with
from tcpeval.sweep.grid import RunSpec
from tcpeval.sweep.rundir import Outcome, one_line, record_error

Work = Callable[[RunSpec, str], Outcome]
WORKER_IMPORTS = ["tcpeval.sweep.rundir"]
"""What a run imports (the backends, pandas), loaded once by the fork server."""
ABANDON_GRACE_S = 3.0
"""How long a stopped run may take to unwind (a lab run removes its namespaces: well under a
second) before its worker is killed; with the rest, a Ctrl-C'd sweep ends within 5 s."""


class LocalPool:
    """`jobs` worker processes, started at the first run and kept until closed, so that the
    sweeps of a suite share them instead of each starting its own. When a worker dies, the
    pool is replaced and the runs that were in flight are retried one at a time, so the one
    that kills its worker is found and recorded as failed."""

    def __init__(self, jobs: int) -> None:
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None

    def __enter__(self) -> LocalPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *_: object) -> None:
        if kind is None:
            self.close()
        else:  # Ctrl-C, or the caller failed: nobody waits for the runs in flight
            self.abandon()

    def close(self) -> None:
        """Wait for the runs in flight (each is then written whole), then stop the workers."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def abandon(self) -> None:
        """Start no more runs and stop the ones in flight: each worker is asked to stop
        (SIGTERM: its run unwinds, so a lab run removes what it made) and killed if it has
        not within ABANDON_GRACE_S. A run stopped so is simply missing (never half-written),
        and runs again on resume."""
        if self._pool is None:
            return
        workers = list(self._pool._processes.values())  # the executor offers no other handle
        self._pool.shutdown(wait=False, cancel_futures=True)
        self._pool = None
        for worker in workers:
            worker.terminate()
        deadline = time.monotonic() + ABANDON_GRACE_S
        for worker in workers:
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join()

    def run(self, work: Work, specs: Iterable[RunSpec], sweep_dir: Path) -> Iterator[Outcome]:
        """Run `specs` into `sweep_dir`, at most `jobs` in flight, yielding outcomes as runs
        finish."""
        queue, suspects = deque(specs), deque[RunSpec]()
        while queue or suspects:
            if suspects:
                spec = suspects.popleft()
                if (yield from self._in_flight(work, deque([spec]), sweep_dir, 1)):
                    yield record_error(sweep_dir, spec, "the worker process died")
            else:
                suspects.extend((yield from self._in_flight(work, queue, sweep_dir, self.jobs)))

    def _in_flight(
        self, work: Work, queue: deque[RunSpec], sweep_dir: Path, width: int
    ) -> Generator[Outcome, None, list[RunSpec]]:
        """Keep `width` runs of `queue` in flight until it is empty. Returns (to `yield from`)
        the runs lost when the pool broke, empty if it did not; a broken pool is let go, and
        the next run starts a fresh one."""
        if self._pool is None:
            self._pool = _process_pool(self.jobs)
        running: dict[Future[Outcome], RunSpec] = {}
        while queue or running:
            while queue and len(running) < width:
                spec = queue.popleft()
                with ctrl_c_deferred():  # a submit may start a worker
                    running[self._pool.submit(_stoppable, work, spec, str(sweep_dir))] = spec
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            lost = []
            for future in done:
                spec = running.pop(future)
                try:
                    yield future.result()
                except BrokenProcessPool:
                    lost.append(spec)
                except Exception as error:
                    yield record_error(sweep_dir, spec, one_line(error))
            if lost:
                self.close()
                return [*lost, *running.values()]
        return []


def _process_pool(jobs: int) -> ProcessPoolExecutor:
    """Workers forked by a fork server, a fresh interpreter that imported the runs' code once
    (WORKER_IMPORTS): none inherits state from the caller's threads, and none imports pandas
    and the backends again (about 1 s of CPU each, when spawned). Each ends with the sweep,
    even one killed by SIGKILL, and ignores Ctrl-C (below)."""
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(WORKER_IMPORTS)
    # Started here, where Ctrl-C may cut it (it ends with us), not inside a submit, where
    # Ctrl-C waits: its imports take seconds on a busy machine.
    multiprocessing.forkserver.ensure_running()
    return ProcessPoolExecutor(
        jobs, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
    )


def _worker_start(sweep: int) -> None:
    exit_with(sweep)
    _ignore_ctrl_c()
    signal.signal(signal.SIGTERM, _stop)
    # What the fork server imported lives as long as the worker: left out of the cyclic
    # collector's walks, which also keeps them from writing to (copying) the shared pages.
    gc.freeze()


def _ignore_ctrl_c() -> None:
    """Ctrl-C reaches the workers too (one process group): they finish the run they hold, which
    is then written whole, instead of each printing a traceback; the caller stops handing out
    runs and says what was kept."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


_running = False
"""Whether this worker is inside a run (then SIGTERM unwinds it) or waiting for one."""


def _stoppable(work: Work, spec: RunSpec, sweep_dir: str) -> Outcome:
    """`work` in a worker that a SIGTERM stops cleanly (LocalPool.abandon): the run unwinds
    as on Ctrl-C, its `finally` clauses run, then the worker exits."""
    global _running
    _running = True
    try:
        return work(spec, sweep_dir)
    except KeyboardInterrupt:
        os._exit(INTERRUPTED)
    finally:
        _running = False


def _stop(_signum: int, _frame: object) -> None:
    if _running:
        raise KeyboardInterrupt
    os._exit(INTERRUPTED)  # idle: nothing to unwind, and no traceback from the pool's loop
