"""`tcpeval probe tcp` from options to printed report: runs the test (one direction, or both
at once with --bidir), saves the result directory as before, and has `tcp_output` print the
intervals as they come and the totals at the end.

iperf3's omit is kept: the first `omit_s` seconds are added to the test, marked in the
interval reports and left out of the totals; the result directory keeps the whole run.
"""

from __future__ import annotations

import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Literal, TextIO

from pydantic import BaseModel, ConfigDict

from tcpeval.probe.driver import run_tcp, run_tcp_both_ways
from tcpeval.probe.intervals import BinaryInterval, Direction, figures
from tcpeval.probe.settings import TcpSettings
from tcpeval.probe.tcp_output import Form, TcpOutput
from tcpeval.probe.totals import totals
from tcpeval.result import Result
from tcpeval.units import parse_duration

# How often the progress line comes when no interval rows are asked.
PROGRESS_INTERVAL = "1s"


class TcpRunOptions(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    settings: TcpSettings
    out: Path
    bidir: bool = False
    omit_s: float = 0.0
    form: Form = "text"
    logfile: Path | None = None
    progress: Literal["never", "auto", "always"] = "auto"
    figures: tuple[str, ...] = ("png",)
    """The plots' file formats (figure_formats.py); none: no plots."""


def shows_progress(options: TcpRunOptions, sink: TextIO, rows: bool) -> bool:
    """`auto` shows progress unless stdout is a terminal already showing the interval rows."""
    if options.progress != "auto":
        return options.progress == "always"
    rows_on_terminal = rows and options.form == "text" and sink is sys.stdout and sink.isatty()
    return not rows_on_terminal


def _binary_settings(options: TcpRunOptions, rows: bool, progress: bool) -> TcpSettings:
    """The settings the binary runs: longer by the omit, reporting as often as shown."""
    settings = options.settings
    update: dict[str, Any] = {}
    if options.omit_s > 0:
        duration_s = (settings.duration_ns() or 0) / 1e9 + options.omit_s
        update["duration"] = f"{duration_s:g}s"
    if not rows:
        update["interval"] = PROGRESS_INTERVAL if progress else "0s"
    return settings.model_copy(update=update)


def _start_info(options: TcpRunOptions, settings: TcpSettings) -> dict[str, Any]:
    direction = "bidir" if options.bidir else "reverse" if settings.reverse else "forward"
    length = f"{settings.bytes}" if settings.bytes else f"{(settings.duration_ns() or 0) / 1e9:g} s"
    omitted = f" after {options.omit_s:g} s omitted" if options.omit_s else ""
    headline = f"{settings.server}: {settings.streams} stream(s), {direction}, {length}{omitted}"
    return {
        "headline": headline,
        "server": settings.server,
        "streams": settings.streams,
        "direction": direction,
        "duration_s": (settings.duration_ns() or 0) / 1e9 if not settings.bytes else None,
        "bytes": settings.bytes,
        "interval_s": parse_duration(options.settings.interval).ns / 1e9,
        "omit_s": options.omit_s,
        "cc": settings.cc,
        "result_dir": str(options.out),
    }


def _save(result: Result, out: Path, figures: tuple[str, ...]) -> None:
    from tcpeval.report.plots import write_plots

    result.save(out)
    if figures and len(result.flows):
        write_plots(result, out, figures)
    for warning in result.summary["backend"]["details"]["warnings"]:
        sys.stderr.write(f"warning: {warning}\n")


def _run(options: TcpRunOptions, settings: TcpSettings, output: TcpOutput) -> None:
    def shown(direction: Direction, raw: BinaryInterval) -> None:
        output.interval(figures(raw, direction, options.omit_s))

    if options.bidir:
        forward, reverse = run_tcp_both_ways(
            settings,
            on_interval=lambda is_reverse, raw: shown("reverse" if is_reverse else "forward", raw),
        )
        done: list[tuple[Direction, Result, Path]] = [
            ("forward", forward, options.out / "forward"),
            ("reverse", reverse, options.out / "reverse"),
        ]
    else:
        direction: Direction = "reverse" if settings.reverse else "forward"
        result = run_tcp(settings, on_interval=lambda raw: shown(direction, raw))
        done = [(direction, result, options.out)]
    for _, result, out in done:
        _save(result, out, options.figures)
    output.end([totals(r, d, options.omit_s) for d, r, _ in done], str(options.out))


def run_tcp_command(options: TcpRunOptions) -> None:
    """Runs the test and prints it; raises ProbeError when the binary refused or failed."""
    rows = parse_duration(options.settings.interval).ns > 0
    with ExitStack() as stack:
        sink: TextIO = (
            stack.enter_context(options.logfile.open("a")) if options.logfile else sys.stdout
        )
        progress = shows_progress(options, sink, rows)
        settings = _binary_settings(options, rows, progress)
        output = TcpOutput(options.form, sink, progress, rows, options.bidir)
        output.start(_start_info(options, options.settings))
        _run(options, settings, output)
