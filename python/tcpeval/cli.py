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
from tcpeval.probe.cli import probe_app
from tcpeval.report.dataset import ReportError
from tcpeval.report.html import write_report
from tcpeval.report.plots import write_plots
from tcpeval.report.tables import summary_tables, verdicts_table
from tcpeval.scenario import ScenarioError, cc_algorithms, load_scenario
from tcpeval.suites.runner import run_suite
from tcpeval.sweep import sweep as run_sweep

USAGE_ERROR = 2
RUNS_FAILED = 1
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
app.add_typer(probe_app, name="probe")

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


@app.command()
def sweep(
    grid: Annotated[Path, typer.Argument(help="Grid TOML file: base scenario, axes, repeats.")],
    out: Annotated[
        Path, typer.Option("--out", help="Sweep directory; a re-run finishes what is missing.")
    ],
    jobs: Annotated[
        int | None, typer.Option("--jobs", min=1, help="Worker processes. Default: one per CPU.")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="Run on Dask: tcp://HOST:PORT of a scheduler, or 'local' for a LocalCluster.",
        ),
    ] = None,
) -> None:
    """Run every point of GRID × repeats into --out (runs/<run_id>/, read with tcpeval.load).

    Exit code 1 when some runs failed (each has an error.json; the others finished).
    """
    try:
        report = run_sweep(grid, out, jobs=jobs, scheduler=scheduler)
    except ScenarioError as error:
        _fail(error)
    console.print(
        f"{report.total} runs: {report.done} done, {report.skipped} already there, "
        f"{report.failed} failed in {report.wall_seconds:.1f} s → {out}/"
    )
    if report.failed:
        typer.echo(f"see tcpeval.load_errors('{out}') or {out}/runs/*/error.json", err=True)
        raise typer.Exit(RUNS_FAILED)


@app.command()
def suite(
    name: Annotated[str, typer.Argument(help="A built-in suite: hamilton, response, impact, …")],
    cc: Annotated[str, typer.Option("--cc", help="The stack to evaluate.")],
    out: Annotated[Path, typer.Option("--out", help="Suite directory; a re-run resumes.")],
    baseline: Annotated[str, typer.Option("--baseline", help="The reference stack.")] = "reno",
    quick: Annotated[bool, typer.Option("--quick", help="The reduced grid: a smoke run.")] = False,
    jobs: Annotated[
        int | None, typer.Option("--jobs", min=1, help="Worker processes. Default: one per CPU.")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option("--scheduler", metavar="ADDRESS", help="As for sweep: Dask tcp://… or local."),
    ] = None,
) -> None:
    """Run suite NAME for --cc against --baseline, then write --out/report.html."""
    try:
        for field, stack in (("--cc", cc), ("--baseline", baseline)):
            _check_stack(field, stack)
        written = run_suite(
            name, cc, out, baseline=baseline, quick=quick, jobs=jobs, scheduler=scheduler
        )
    except (ScenarioError, ReportError) as error:
        _fail(error)
    console.print(verdicts_table(written.verdicts))
    console.print(f"report: {written.path}")


def _check_stack(field: str, stack: str) -> None:
    names = [algorithm["name"] for algorithm in cc_algorithms()]
    if stack not in names:
        reason = f"is not a known algorithm (choose from {', '.join(names)})"
        raise ScenarioError(field, stack, reason)


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="A sweep or suite directory.")],
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="The stack verdicts compare with. Default: the suite's."),
    ] = None,
) -> None:
    """Write DIRECTORY/report.html: metrics per stack, verdicts and figures, in one file."""
    try:
        written = write_report(directory, baseline)
    except ReportError as error:
        _fail(error)
    if written.verdicts:
        console.print(verdicts_table(written.verdicts))
    typer.echo(str(written.path))


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
