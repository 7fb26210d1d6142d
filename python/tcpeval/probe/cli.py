"""`tcpeval probe serve|tcp|udp|rr|copy`: measure real paths with the tcpeval-probe binary.

Bad input is one line, `error: FIELD: 'VALUE' REASON`, exit code 2; Ctrl-C stops the run and
keeps what was measured. The driver and the plots are imported when a command runs, not for
`tcpeval --help`.
"""

from __future__ import annotations

import os
import re
import typing
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Annotated, Literal, NoReturn, TypeVar

import typer

from tcpeval.cli_app import App, Formats
from tcpeval.figure_formats import DEFAULT as DEFAULT_FORMAT
from tcpeval.figure_formats import parse_formats
from tcpeval.probe.binary import probe_binary

if TYPE_CHECKING:
    from pydantic import BaseModel

USAGE_ERROR = 2
FAILED = 1
INTERRUPTED = 130
SettingsT = TypeVar("SettingsT", bound="BaseModel")
DEFAULT_PORT = 5301
IPERF3_PORT = 5201

probe_app = App(
    help="Measure real paths: TCP with 10 ms TCP_INFO histories, UDP trains, request-response.",
    no_args_is_help=True,
)

Secret = Annotated[Path, typer.Option("--secret-file", help="File with the shared secret.")]
Out = Annotated[Path, typer.Option("--out", help="Result directory.")]
Host = Annotated[str, typer.Argument(help=f"Server as HOST or HOST:PORT (port {DEFAULT_PORT}).")]


def _fail(message: str) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(USAGE_ERROR)


def _server(host: str, port: int = DEFAULT_PORT) -> str:
    if host.startswith("[") or host.count(":") == 1:
        return host
    return f"{host}:{port}"


def _settings(model: type[SettingsT], **values: object) -> SettingsT:
    from pydantic import ValidationError

    try:
        return model(**{k: v for k, v in values.items() if v is not None})
    except ValidationError as e:
        first = e.errors()[0]
        field = ".".join(str(part) for part in first["loc"]) or "settings"
        value = first.get("input")
        _fail(f"{field}: '{value}' {first['msg'].removeprefix('Value error, ')}")


@probe_app.command(
    context_settings={
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "help_option_names": [],
    }
)
def serve(ctx: typer.Context) -> None:
    """Run the authenticated, bounded server until stopped (--help lists its options)."""
    # `tcpeval-probe serve` itself, every option its own; this process becomes the server,
    # so a SIGTERM (systemd's stop) reaches it and nothing is left listening.
    binary = str(probe_binary())
    os.execv(binary, [binary, "serve", *ctx.args])


def iperf3_seconds(value: str | None) -> str | None:
    """A duration as iperf3 takes it (bare seconds, "10") or as tcpeval writes it ("10s")."""
    if value is None:
        return None
    try:
        return f"{float(value):g}s"
    except ValueError:
        return value


Progress = Literal["never", "auto", "always"]


@probe_app.command()
def tcp(
    host: Host,
    out: Out,
    secret_file: Annotated[
        Path | None, typer.Option("--secret-file", help="Shared secret (not for --iperf3).")
    ] = None,
    iperf3: Annotated[bool, typer.Option(help="The server is a stock `iperf3 -s`.")] = False,
    streams: Annotated[int, typer.Option("--streams", "-P", help="Parallel streams, 1–128.")] = 1,
    cc: Annotated[
        str | None, typer.Option("--cc", "-C", help="Congestion control (TCP_CONGESTION).")
    ] = None,
    window: Annotated[
        str | None, typer.Option("--window", "-w", help="Socket buffers, e.g. 64MB.")
    ] = None,
    mss: Annotated[int | None, typer.Option("--mss", "-M", help="TCP_MAXSEG in bytes.")] = None,
    pacing: Annotated[
        str | None,
        typer.Option("--pacing", "--fq-rate", help="Pacing rate per stream, e.g. 2Gbps."),
    ] = None,
    duration: Annotated[
        str | None, typer.Option("--duration", "-t", help="e.g. 30s or 30 (default 10s).")
    ] = None,
    size: Annotated[
        str | None, typer.Option("--bytes", "-n", help="Total bytes, e.g. 10GB.")
    ] = None,
    reverse: Annotated[bool, typer.Option("--reverse", "-R", help="The server sends.")] = False,
    bidir: Annotated[
        bool,
        typer.Option(help="Both directions at once, reported apart (OUT/forward, OUT/reverse)."),
    ] = False,
    interval: Annotated[
        str,
        typer.Option("--interval", "-i", help="Report every N seconds (e.g. 1 or 500ms); 0: none."),
    ] = "1s",
    omit: Annotated[
        str,
        typer.Option("--omit", "-O", help="Leave the first N seconds out of reports and totals."),
    ] = "0s",
    json_document: Annotated[
        bool, typer.Option("--json", "-J", help="Print one JSON document at the end.")
    ] = False,
    json_stream: Annotated[
        bool, typer.Option("--json-stream", help="Print one JSON object per line as it runs.")
    ] = False,
    logfile: Annotated[
        Path | None, typer.Option("--logfile", help="Append what would go to stdout to this file.")
    ] = None,
    progress: Annotated[
        str,
        typer.Option(help="A progress line per interval on stderr: never, auto or always."),
    ] = "auto",
    sample_interval: Annotated[str, typer.Option(help="TCP_INFO sampling.")] = "10ms",
    plots: Annotated[bool, typer.Option(help="Write cwnd and goodput figures.")] = True,
    formats: Formats = DEFAULT_FORMAT,
) -> None:
    """Memory-to-memory TCP with every stream's TCP_INFO history, reported as iperf3 does."""
    from tcpeval.probe.driver import ProbeError
    from tcpeval.probe.tcp_run import TcpRunOptions, run_tcp_command

    if progress not in typing.get_args(Progress):
        _fail(f"progress: '{progress}' must be never, auto or always")
    if json_document and json_stream:
        _fail("json: '--json --json-stream' give one of them")
    if bidir and (reverse or iperf3):
        _fail(f"bidir: '{'--reverse' if reverse else '--iperf3'}' cannot be combined with --bidir")
    from tcpeval.probe.settings import TcpSettings
    from tcpeval.units import parse_duration

    omit = iperf3_seconds(omit) or "0s"
    duration = iperf3_seconds(duration)
    try:
        omit_s = parse_duration(omit).ns / 1e9
    except ValueError as e:
        _fail(f"omit: '{omit}' {e}")
    if omit_s < 0:
        _fail(f"omit: '{omit}' must not be negative")
    if omit_s > 0 and size is not None:
        _fail("omit: '--bytes' counts what it sends from the start; give --duration with --omit")
    settings = _settings(
        TcpSettings,
        server=_server(host, IPERF3_PORT if iperf3 else DEFAULT_PORT),
        secret_file=str(secret_file) if secret_file else None,
        iperf3=iperf3,
        streams=streams,
        cc=cc,
        window=window,
        mss=mss,
        pacing=pacing,
        duration=duration,
        bytes=size,
        reverse=reverse,
        sample_interval=sample_interval,
        interval=iperf3_seconds(interval),
    )
    options = TcpRunOptions(
        settings=settings,
        out=out,
        bidir=bidir,
        omit_s=omit_s,
        form="json" if json_document else "json-stream" if json_stream else "text",
        logfile=logfile,
        progress=progress,
        figures=parse_formats(formats) if plots else (),
    )
    try:
        run_tcp_command(options)
    except ProbeError as e:
        _fail(str(e))


@probe_app.command()
def udp(
    host: Host,
    secret_file: Secret,
    out: Out,
    size: Annotated[int, typer.Option(help="UDP payload bytes.")] = 1472,
    spacing: Annotated[
        str, typer.Option(help="LOW..HIGH or a list, e.g. 0us..100us.")
    ] = "0us..100us",
    steps: Annotated[int, typer.Option(help="Trains across a LOW..HIGH range.")] = 11,
    count: Annotated[int, typer.Option(help="Datagrams per train.")] = 1000,
    formats: Formats = DEFAULT_FORMAT,
) -> None:
    """UDPmon-style trains: received rate, loss, reordering, jitter vs spacing."""
    from tcpeval.probe.driver import ProbeError, run_udp
    from tcpeval.probe.plots import write_udp_plot
    from tcpeval.probe.settings import UdpSettings

    settings = _settings(
        UdpSettings,
        server=_server(host),
        secret_file=str(secret_file),
        size=size,
        spacing=spacing,
        steps=steps,
        count=count,
    )
    try:
        report = run_udp(settings, out)
    except ProbeError as e:
        _fail(str(e))
    write_udp_plot(report, out, parse_formats(formats))
    for t in report["trains"]:
        typer.echo(
            f"spacing {t['spacing_ns'] / 1e3:8.1f} µs: received {t['received_rate_bps'] / 1e6:9.1f}"
            f" Mb/s, loss {t['lost']}/{t['sent']}, reordered {t['reordered']},"
            f" jitter {t['jitter_ns'] / 1e3:.1f} µs"
        )


@probe_app.command()
def rr(
    host: Host,
    secret_file: Secret,
    out: Out,
    request: Annotated[str, typer.Option(help="Request size, e.g. 64B.")] = "64B",
    response: Annotated[str, typer.Option(help="Response size, e.g. 1MB.")] = "1MB",
    count: Annotated[int, typer.Option(help="Exchanges.")] = 100,
    think: Annotated[str, typer.Option(help="Think time, e.g. 0s..1s or 500ms.")] = "0s",
    cc: Annotated[str | None, typer.Option(help="Congestion control.")] = None,
    formats: Formats = DEFAULT_FORMAT,
) -> None:
    """TCPmon-style request-response: latency and the cwnd each response starts with."""
    from tcpeval.probe.driver import ProbeError, percentile_table, run_rr
    from tcpeval.probe.plots import write_rr_plot
    from tcpeval.probe.settings import RrSettings

    settings = _settings(
        RrSettings,
        server=_server(host),
        secret_file=str(secret_file),
        request=request,
        response=response,
        count=count,
        think=think,
        cc=cc,
    )
    try:
        report = run_rr(settings, out)
    except ProbeError as e:
        _fail(str(e))
    write_rr_plot(report, out, parse_formats(formats))
    table = ", ".join(f"p{p:g} {ms:.2f} ms" for p, ms in percentile_table(report))
    typer.echo(f"{len(report['exchanges'])} exchanges: {table} → {out}")


@probe_app.command()
def disk(
    out: Out,
    path: Annotated[
        Path | None, typer.Argument(help="A directory on the file system to measure.")
    ] = None,
    server: Annotated[
        str | None, typer.Option(help="Measure this server's --root instead (HOST[:PORT]).")
    ] = None,
    secret_file: Annotated[
        Path | None, typer.Option("--secret-file", help="Shared secret, with --server.")
    ] = None,
    size: Annotated[str, typer.Option(help="Written and read per pass, e.g. 4GB.")] = "4GB",
    block: Annotated[
        str, typer.Option(help="Block size or a list, e.g. 64KiB,1MiB,16MiB.")
    ] = "1MiB",
    direct: Annotated[bool, typer.Option(help="Also measure with O_DIRECT.")] = False,
    formats: Formats = DEFAULT_FORMAT,
) -> None:
    """Sequential write (with sync) and read rates, page cache dropped or bypassed."""
    from tcpeval.probe.driver import ProbeError, run_disk
    from tcpeval.probe.plots import write_disk_plot
    from tcpeval.probe.settings import DiskSettings

    settings = _settings(
        DiskSettings,
        path=str(path) if path else None,
        server=_server(server) if server else None,
        secret_file=str(secret_file) if secret_file else None,
        size=size,
        block=block,
        direct=direct,
    )
    try:
        report = run_disk(settings, out)
    except ProbeError as e:
        _fail(str(e))
    write_disk_plot(report, out, parse_formats(formats))
    for p in report["passes"]:
        mode = "direct" if p["direct"] else "buffered"
        typer.echo(
            f"block {p['block_bytes'] / 1024:8.0f} KiB {mode:8}: write {p['write_bps'] / 1e6:9.1f}"
            f" Mb/s, read {p['read_bps'] / 1e6:9.1f} Mb/s"
        )


# HOST:PATH as scp writes it: a colon before any slash; an IPv6 host goes in brackets.
REMOTE = re.compile(r"^(\[[^\]/]+\]|[^/:\[\]]+):(.*)$", re.DOTALL)


def copy_ends(source: str, destination: str) -> tuple[str, str, Path, bool]:
    """(host, name under the server's root, local file, get?) of `copy SOURCE DESTINATION`.

    A put goes to DIR/FILE (the root itself for an empty DIR or "."); a get into LOCAL, or
    into LOCAL/FILE when LOCAL is a directory. Names are passed on as given: the server
    judges them."""
    remote_source, remote_destination = REMOTE.match(source), REMOTE.match(destination)
    if bool(remote_source) == bool(remote_destination):
        raise ValueError("exactly one of SOURCE and DESTINATION must be HOST:PATH")
    if remote_source:
        host, remote = remote_source.groups()
        local = Path(destination)
        if local.is_dir():
            local = local / PurePosixPath(remote).name
        return host, remote, local, True
    assert remote_destination is not None
    host, directory = remote_destination.groups()
    local = Path(source)
    remote = local.name if directory in ("", ".") else f"{directory.rstrip('/')}/{local.name}"
    return host, remote, local, False


@probe_app.command()
def copy(
    source: Annotated[str, typer.Argument(help="A local FILE, or HOST:DIR/FILE to fetch.")],
    destination: Annotated[str, typer.Argument(help="HOST:DIR, or a local file or directory.")],
    secret_file: Secret,
    out: Out,
    streams: Annotated[int, typer.Option(help="Parallel streams, 1–128.")] = 1,
    overwrite: Annotated[bool, typer.Option(help="Replace an existing file.")] = False,
    resume: Annotated[
        bool, typer.Option(help="Continue an interrupted copy from what arrived.")
    ] = False,
    port: Annotated[int, typer.Option(help="The server's port.")] = DEFAULT_PORT,
    tcp_duration: Annotated[
        str, typer.Option(help="Memory-to-memory TCP afterwards, to compare; 0s skips it.")
    ] = "5s",
    disk_size: Annotated[
        str, typer.Option(help="Both ends' disks measured afterwards with this much; 0B skips.")
    ] = "256MB",
) -> None:
    """Disk to disk through the probe server, every byte verified, beside memory to memory."""
    from tcpeval.probe.copy_table import copy_lines
    from tcpeval.probe.driver import ProbeError, run_copy
    from tcpeval.probe.settings import CopySettings

    try:
        host, remote, local, get = copy_ends(source, destination)
    except ValueError as e:
        _fail(f"source: '{source}' {e}")
    settings = _settings(
        CopySettings,
        server=f"{host}:{port}",
        secret_file=str(secret_file),
        local=str(local),
        remote=remote,
        get=get,
        streams=streams,
        overwrite=overwrite,
        resume=resume,
        progress=os.isatty(2),
        tcp_duration=tcp_duration,
        disk_size=disk_size,
    )
    try:
        report = run_copy(settings, out)
    except ProbeError as e:
        _fail(str(e))
    for line in copy_lines(report):
        typer.echo(line)
    if report["interrupted"]:
        raise typer.Exit(INTERRUPTED)
    if not report["committed"]:
        typer.echo(f"error: copy not committed: {report['problem']}", err=True)
        raise typer.Exit(FAILED)
