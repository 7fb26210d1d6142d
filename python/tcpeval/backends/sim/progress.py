"""A simulation watched while it runs: the core works in a thread of its own (it releases the
GIL), this thread polls how far it got, draws a progress bar once the run has taken a few
seconds (without a terminal, a plain line now and then), and turns Ctrl-C into a clean stop of
the core (which then returns nothing, so nothing half-made is ever written)."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

from tcpeval import _core

SHOW_AFTER_S = 3.0  # shorter runs finish before a bar would tell anything
POLL_S = 0.2
LINE_EVERY_S = 30.0  # without a terminal: often enough to see a run move, rare in a log


def simulate_watched(resolved_json: str, duration_ns: int, show: bool) -> Any:
    """`_core.simulate(resolved_json)`, with a bar on stderr when `show` and the run is long;
    raises KeyboardInterrupt, after the core has stopped, on Ctrl-C."""
    progress = _core.Progress()
    outcome: dict[str, Any] = {}
    done = threading.Event()  # waited on, not join(): an interrupted join() can misreport

    def work() -> None:
        try:
            outcome["result"] = _core.simulate(resolved_json, progress)
        except BaseException as error:  # handed to the caller's thread, raised there
            outcome["error"] = error
        finally:
            done.set()

    threading.Thread(target=work, name="tcpeval-core", daemon=True).start()
    try:
        _watch(done, progress, duration_ns, show)
    except KeyboardInterrupt:
        progress.stop()
        done.wait()
        raise
    if "error" in outcome:
        raise outcome["error"]
    return outcome["result"]


def _watch(done: threading.Event, progress: Any, duration_ns: int, show: bool) -> None:
    started = time.monotonic()
    if done.wait(SHOW_AFTER_S) or not show:
        done.wait()
        return
    # Imported only to draw: a sweep's workers never do, and need not load rich.
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

    console = Console(stderr=True)
    if not console.is_terminal:
        _say_now_and_then(done, progress, duration_ns, started)
        return
    columns = (
        TextColumn("simulated {task.completed:.1f} of {task.total:.1f} s"),
        BarColumn(),
        TextColumn("{task.fields[rate]}"),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("run", total=duration_ns / 1e9, rate="")
        while not done.wait(POLL_S):
            events_per_s = progress.events / max(time.monotonic() - started, 1e-9)
            bar.update(task, completed=progress.now_ns / 1e9, rate=f"{events_per_s:,.0f} events/s")


def _say_now_and_then(
    done: threading.Event, progress: Any, duration_ns: int, started: float
) -> None:
    """Without a terminal (a log, a pipe), a plain line every LINE_EVERY_S: how far the run
    got and the time left at the pace so far."""
    from tcpeval.backends.wall_time import about

    while not done.wait(LINE_EVERY_S):
        share = progress.now_ns / duration_ns
        spent_s = time.monotonic() - started
        left = about(spent_s * (1 - share) / share) if share > 0 else "unknown"
        line = f"simulated {progress.now_ns / 1e9:.1f} of {duration_ns / 1e9:.1f} s ({share:.0%})"
        print(f"{line}, {left} left", file=sys.stderr, flush=True)
