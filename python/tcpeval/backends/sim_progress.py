"""A simulation watched while it runs: the core works in a thread of its own (it releases the
GIL), this thread polls how far it got, draws a progress bar once the run has taken a few
seconds, and turns Ctrl-C into a clean stop of the core (which then returns nothing, so
nothing half-made is ever written)."""

from __future__ import annotations

import threading
import time
from typing import Any

from tcpeval import _core

SHOW_AFTER_S = 3.0  # shorter runs finish before a bar would tell anything
POLL_S = 0.2


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
        done.wait()
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
