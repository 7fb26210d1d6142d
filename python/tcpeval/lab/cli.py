"""`tcpeval lab clean`: the lab's housekeeping (runs go through `tcpeval run --backend lab`)."""

from __future__ import annotations

from typing import Annotated

import typer

USAGE_ERROR = 2

lab_app = typer.Typer(help="The namespace lab of this host.", no_args_is_help=True)


@lab_app.command("clean")
def clean_command(
    wait: Annotated[
        float, typer.Option("--wait", min=0, help="Seconds to wait for a running lab run.")
    ] = 0.0,
) -> None:
    """Remove what killed lab runs left: namespaces, processes, BPF congestion controls
    registered, changed settings."""
    from tcpeval.lab import LabBusy, clean

    try:
        removed = clean(wait)
    except LabBusy as busy:
        typer.echo(f"error: {busy}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    listed = f": {' '.join(removed)}" if removed else ""
    typer.echo(f"removed {len(removed)} namespaces and registrations{listed}")
