"""The `tcpeval` command.

A problem with the user's input is one line on stderr, `error: FIELD: 'VALUE' REASON`, and
exit code 2; a traceback means a bug in tcpeval.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.console import Console
from rich.table import Table

from tcpeval.backends.sim import simulate
from tcpeval.demo import run_examples
from tcpeval.report.plots import write_plots
from tcpeval.report.tables import summary_tables
from tcpeval.scenario import ScenarioError, cc_algorithms, load_scenario

USAGE_ERROR = 2
EXAMPLES = Path("examples")
DEMO_OUT = Path("out/demo")

app = typer.Typer(
    help="Evaluate TCP congestion-control stacks on high-speed long-distance paths.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
cc_app = typer.Typer(help="Congestion-control algorithms of the simulator.", no_args_is_help=True)
app.add_typer(cc_app, name="cc")

console = Console()


@app.command()
def sim(
    scenario: Annotated[Path, typer.Argument(help="Scenario TOML file.")],
    out: Annotated[
        Path, typer.Option("--out", help="Result directory; an earlier result there is replaced.")
    ],
    overrides: Annotated[
        list[str] | None,
        typer.Option(
            "--set",
            metavar="KEY=VALUE",
            help="Override a key, e.g. bottleneck.rate=1Gbps or flow.*.cc=cubic. Repeatable.",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print summary.json, no tables.")] = False,
    plots: Annotated[bool, typer.Option(help="Write cwnd, goodput and queue PNGs.")] = True,
) -> None:
    """Simulate SCENARIO and write summary.json, flows.parquet and links.parquet to --out."""
    try:
        result = simulate(load_scenario(scenario, overrides or []))
        result.save(out)
    except (ScenarioError, FileExistsError) as error:
        _fail(error)
    if plots:
        write_plots(result, out)
    if as_json:
        typer.echo(json.dumps(result.summary, indent=2, sort_keys=True))
        return
    console.print(*summary_tables(result.summary, title=result.summary["scenario"]["name"]))
    console.print(f"result: {out}/")


@cc_app.command("list")
def cc_list() -> None:
    """The algorithms the simulator knows, with their parameters and defaults."""
    table = Table("name", "parameters (defaults)", "source")
    for algorithm in cc_algorithms():
        params = ", ".join(f"{name}={value}" for name, value in algorithm["params"].items())
        table.add_row(algorithm["name"], params or "-", algorithm["source"])
    console.print(table)


@app.command()
def demo(
    examples: Annotated[Path, typer.Argument(help="Directory of scenario files.")] = EXAMPLES,
    out: Annotated[Path, typer.Option("--out", help="Where the results go.")] = DEMO_OUT,
) -> None:
    """Run every example scenario, save results and plots, compare with the models."""
    try:
        run_examples(examples, out, console)
    except (ScenarioError, FileExistsError) as error:
        _fail(error)


def _fail(error: Exception) -> NoReturn:
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(USAGE_ERROR)
