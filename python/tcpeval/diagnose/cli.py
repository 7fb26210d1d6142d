"""`tcpeval diagnose HOST`: one verdict on what limits transfers to HOST, with the evidence.

Bad input is one line, `error: FIELD: 'VALUE' REASON`, exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tcpeval.probe.cli import DEFAULT_PORT, Host, Secret, _fail, _server

if TYPE_CHECKING:
    pass

MAX_STREAMS = 128
# The request-response step moves seven responses (64 MB takes 5 s at 100 Mb/s): a bound on
# its time.
MAX_RESPONSE_BYTES = 64 * 10**6


def diagnose_command(
    host: Host,
    secret_file: Secret,
    out: Annotated[Path, typer.Option("--out", help="Directory for the diagnosis.")],
    duration: Annotated[str, typer.Option(help="The whole diagnosis, about.")] = "20s",
    streams: Annotated[int, typer.Option(help="Streams of the parallel test, 2–128.")] = 4,
    path: Annotated[
        Path | None, typer.Option(help="A directory whose disk rates are measured too.")
    ] = None,
    response_size: Annotated[
        str | None,
        typer.Option(
            help="Also time responses of this size (what your application sends, e.g. 1MB) "
            "on one connection after idle gaps: slow start after idle.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json.")] = False,
    formats: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="LIST",
            help="Also write the page's figures to --out in these formats: png, svg, pdf.",
        ),
    ] = None,
) -> None:
    """Where is my throughput? UDP capacity and loss, TCP with 1 and N streams, both ends'
    CPUs and the disk: the limit that binds, and what lifts it."""
    from tcpeval.diagnose import Target, diagnose
    from tcpeval.figure_formats import parse_formats
    from tcpeval.probe.driver import ProbeError
    from tcpeval.scenario import ScenarioError

    try:
        figures = () if formats is None else parse_formats(formats)
    except ScenarioError as e:
        _fail(str(e))

    seconds = _duration_s(duration)
    if not 2 <= streams <= MAX_STREAMS:
        _fail(f"streams: '{streams}' must be 2..{MAX_STREAMS}")
    if path is not None and not path.is_dir():
        _fail(f"path: '{path}' is not a directory")
    response_bytes = None if response_size is None else _response_bytes(response_size)
    target = Target(server=_server(host, DEFAULT_PORT), secret_file=str(secret_file))
    try:
        diagnosis = diagnose(target, out, seconds, streams, path, figures, response_bytes)
    except (ProbeError, FileExistsError) as e:
        _fail(str(e))
    except KeyboardInterrupt:
        typer.echo("interrupted: no diagnosis (each step's raw output is kept in --out)", err=True)
        raise typer.Exit(130) from None
    if as_json:
        typer.echo(json.dumps(diagnosis.model_dump(), indent=2))
        return
    typer.echo(diagnosis.verdict.headline)
    for line in diagnosis.verdict.contention:
        typer.echo(f"  contention: {line}")
    for line in diagnosis.verdict.evidence:
        typer.echo(f"  evidence: {line}")
    for line in diagnosis.verdict.advice:
        typer.echo(f"  advice: {line}")
    typer.echo(f"→ {out / 'diagnosis.html'} ({diagnosis.wall_seconds:.0f} s)")


def _duration_s(text: str) -> float:
    from tcpeval.units import parse_duration

    try:
        seconds = parse_duration(text).ns / 1e9
    except ValueError as e:
        _fail(f"duration: '{text}' {e}")
    if not 5 <= seconds <= 600:
        _fail(f"duration: '{text}' must be 5s to 600s")
    return seconds


def _response_bytes(text: str) -> int:
    from tcpeval.units import parse_size

    try:
        size = parse_size(text).bytes
    except ValueError as e:
        _fail(f"response-size: '{text}' {e}")
    if not 1 <= size <= MAX_RESPONSE_BYTES:
        _fail(f"response-size: '{text}' must be 1B to 64MB")
    return size
