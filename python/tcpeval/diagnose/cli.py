"""`tcpeval diagnose HOST`: one verdict on what limits transfers to HOST, with the evidence.

Bad input is one line, `error: FIELD: 'VALUE' REASON`, exit code 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from tcpeval.probe.cli import DEFAULT_PORT, IPERF3_PORT, Host, _fail, _server

if TYPE_CHECKING:
    from tcpeval.diagnose.verify import Verification

MAX_STREAMS = 128
# The request-response step moves seven responses (64 MB takes 5 s at 100 Mb/s): a bound on
# its time.
MAX_RESPONSE_BYTES = 64 * 10**6


def diagnose_command(
    host: Host,
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
    secret_file: Annotated[
        Path | None, typer.Option("--secret-file", help="Shared secret (not for --iperf3).")
    ] = None,
    iperf3: Annotated[
        bool,
        typer.Option(
            "--iperf3", help="The far end is a stock `iperf3 -s` (port 5201): TCP tests only."
        ),
    ] = False,
    verify: Annotated[
        bool,
        typer.Option(
            "--verify", help="Apply the advice to the test connections and measure again."
        ),
    ] = False,
    apply_host: Annotated[
        bool,
        typer.Option(
            "--apply-host",
            help="With --verify: also set the advised sysctls of this host (printed, with undo).",
        ),
    ] = False,
) -> None:
    """Where is my throughput? UDP capacity and loss, TCP with 1 and N streams, both ends'
    CPUs and the disk: the limit that binds, and what lifts it."""
    from tcpeval.diagnose import Target, diagnose
    from tcpeval.diagnose.host_sysctls import HostSysctlError
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
    if apply_host and not verify:
        _fail("apply-host: '--apply-host' needs --verify")
    if secret_file is None and not iperf3:
        _fail("secret-file: '' is required (except with --iperf3)")
    target = Target(
        server=_server(host, IPERF3_PORT if iperf3 else DEFAULT_PORT),
        secret_file=None if secret_file is None else str(secret_file),
        iperf3=iperf3,
    )
    try:
        diagnosis = diagnose(
            target, out, seconds, streams, path, figures, response_bytes, verify, apply_host
        )
    except (ProbeError, HostSysctlError, FileExistsError) as e:
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
    for line in diagnosis.missing:
        typer.echo(f"  missing: {line}")
    if diagnosis.verification is not None:
        for line in verification_lines(diagnosis.verification):
            typer.echo(f"  verify: {line}")
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


def verification_lines(v: Verification) -> list[str]:
    """Before, after and predicted for each remedy applied, then what was not applied."""
    lines = []
    for c in v.checks:
        predicted = c.basis
        if c.predicted_bps is not None and c.predicted_gain is not None:
            predicted = (
                f"predicted {c.predicted_bps / 1e6:.1f} Mb/s ({c.predicted_gain:.2f}×): {c.basis}"
            )
        lines.append(
            f"{c.setting} {c.value}: {c.before_bps / 1e6:.1f} → {c.after_bps / 1e6:.1f} Mb/s "
            f"({c.measured_gain:.2f}×), {predicted}"
        )
    lines += [f"failed: {line}" for line in v.failed]
    lines += [f"set {c.key}: {c.before} → {c.after} (undo: {c.undo})" for c in v.host_changes]
    return lines + [f"not applied: {line}" for line in v.not_applied]
