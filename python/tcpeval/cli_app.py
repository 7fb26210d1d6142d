"""The typer app every group of `tcpeval` commands is made with (cli.py, probe/cli.py), and the
`--format` option every command that plots takes.

One difference from a plain `typer.Typer`: a flag's help shows no value type. typer 0.29 prints
`--json <bool>`, which reads as if the flag took a value; a flag takes none.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from tcpeval import figure_formats

USAGE_ERROR = 2


def _checked_formats(text: str) -> str:
    """Refuse a bad `--format` while parsing, before anything runs, in one line."""
    from tcpeval.scenario.errors import ScenarioError

    try:
        figure_formats.parse_formats(text)
    except ScenarioError as error:
        typer.echo(f"error: {error}", err=True)
        raise typer.Exit(USAGE_ERROR) from None
    return text


Formats = Annotated[
    str,
    typer.Option(
        figure_formats.OPTION,
        metavar="LIST",
        callback=_checked_formats,
        help="The figures' file formats, comma-separated: png, svg, pdf (text kept as text).",
    ),
]


class _FlagsWithoutType:
    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if getattr(param, "is_flag", False):
                param.metavar = ""
        return params


class _Command(_FlagsWithoutType, TyperCommand):
    pass


class _Group(_FlagsWithoutType, TyperGroup):
    pass


class App(typer.Typer):
    """A typer app whose commands' and own help show flags without a type."""

    def __init__(self, **settings: Any) -> None:
        super().__init__(cls=_Group, **settings)

    def command(self, *args: Any, **settings: Any) -> Any:
        return super().command(*args, cls=_Command, **settings)
