"""The `tcpeval` command.

A problem with the user's input is one line on stderr, `error: FIELD: 'VALUE' REASON`, and
exit code 2; a traceback means a bug in tcpeval. Each command imports what it needs when it
runs, so that `tcpeval --help` starts without pandas, DuckDB or matplotlib.
"""

from __future__ import annotations

import gc
import json
import sys
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, NoReturn

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from tcpeval.cli_app import App, Formats
from tcpeval.diagnose.cli import diagnose_command
from tcpeval.figure_formats import DEFAULT as DEFAULT_FORMAT
from tcpeval.figure_formats import parse_formats
from tcpeval.interrupts import INTERRUPTED, ctrl_c_deferred, second_ctrl_c_exits
from tcpeval.lab.cli import lab_app
from tcpeval.probe.cli import probe_app
from tcpeval.suite_files import suite_names

if TYPE_CHECKING:
    from tcpeval.backends.protocol import Backend, BackendError
    from tcpeval.result import Result
    from tcpeval.scenario import Scenario

USAGE_ERROR = 2
RUNS_FAILED = 1
WIDE_TABLE_COLUMNS = 160
EXAMPLES = Path("examples")
DEMO_OUT = Path("out/demo")

DEFAULT_MAX_TIME = "10min"
DEFAULT_BACKEND = "sim"  # backends.DEFAULT, named here so that the help needs no import

app = App(
    help="Evaluate TCP congestion-control stacks on high-speed long-distance paths.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
)
cc_app = App(help="Congestion-control algorithms of the simulator.", no_args_is_help=True)
app.add_typer(cc_app, name="cc")
app.add_typer(probe_app, name="probe")
app.add_typer(lab_app, name="lab")
app.command("diagnose")(diagnose_command)

console = Console()


ScenarioFile = Annotated[Path, typer.Argument(help="Scenario TOML file.")]
ResultDir = Annotated[
    Path, typer.Option("--out", help="Result directory; an earlier result there is replaced.")
]
Overrides = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Override a key, e.g. bottleneck.rate=1Gbps or flow.*.cc=cubic. Repeatable.",
    ),
]
Measure = Annotated[
    str | None,
    typer.Option(
        "--measure",
        metavar="WINDOW",
        help="What the summary covers: 'whole run' (the default), 'second half' or "
        "'START..END', e.g. '60s..' (the scenario's `measure`).",
    ),
]
AsJson = Annotated[bool, typer.Option("--json", help="Print summary.json, no tables.")]
Plots = Annotated[bool, typer.Option(help="Write cwnd, goodput and queue figures (--format).")]
BackendName = Annotated[
    str, typer.Option("--backend", help="Where the scenario runs: see `tcpeval backends`.")
]
MaxMemory = Annotated[
    str | None,
    typer.Option(
        "--max-memory",
        metavar="SIZE",
        help="Refuse a simulation estimated to need more, e.g. 4GB. Default: half this "
        "machine's memory.",
    ),
]

MaxTime = Annotated[
    str | None,
    typer.Option(
        "--max-time",
        metavar="DURATION",
        help="Refuse a run estimated to take longer, e.g. 30min. Default: on a terminal, ask "
        f"above {DEFAULT_MAX_TIME}; otherwise no limit.",
    ),
]
ANNOUNCE_AFTER_S = 30.0  # a run estimated to take longer says so on stderr before it starts


def _show_version(shown: bool) -> None:
    if shown:
        from tcpeval.provenance import version

        typer.echo(f"tcpeval {version()}")
        raise typer.Exit()


@app.callback()
def main(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_show_version, is_eager=True, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """The options every command has (--version); the app's help says what tcpeval is."""


@app.command()
def run(
    scenario: ScenarioFile,
    out: ResultDir,
    backend: BackendName = DEFAULT_BACKEND,
    overrides: Overrides = None,
    measure: Measure = None,
    as_json: AsJson = False,
    plots: Plots = True,
    formats: Formats = DEFAULT_FORMAT,
    max_memory: MaxMemory = None,
    max_time: MaxTime = None,
) -> None:
    """Run SCENARIO on --backend; write summary.json, flows.parquet and links.parquet to --out."""
    limits = Limits(max_memory, max_time)
    figures = parse_formats(formats) if plots else ()
    _run_and_show(
        scenario, out, backend, _with_window(overrides, measure), as_json, figures, limits
    )


@app.command()
def sim(
    scenario: ScenarioFile,
    out: ResultDir,
    overrides: Overrides = None,
    measure: Measure = None,
    as_json: AsJson = False,
    plots: Plots = True,
    formats: Formats = DEFAULT_FORMAT,
    max_memory: MaxMemory = None,
    max_time: MaxTime = None,
) -> None:
    """Simulate SCENARIO: the short form of `tcpeval run SCENARIO --backend sim`."""
    limits = Limits(max_memory, max_time)
    figures = parse_formats(formats) if plots else ()
    _run_and_show(scenario, out, "sim", _with_window(overrides, measure), as_json, figures, limits)


def _with_window(overrides: list[str] | None, measure: str | None) -> list[str]:
    """`--measure W` is `--set measure=W`, applied last."""
    return [*(overrides or []), *([f"measure={measure}"] if measure is not None else [])]


def _run_and_show(
    scenario: Path,
    out: Path,
    backend: str,
    overrides: list[str],
    as_json: bool,
    figures: tuple[str, ...],
    limits: Limits,
) -> None:
    """Run, save, plot in each of `figures` (none: no plots) and show the summary."""
    from tcpeval import backends
    from tcpeval.backends.protocol import BackendError
    from tcpeval.report.plots import write_plots
    from tcpeval.report.tables import summary_tables
    from tcpeval.scenario import ScenarioError, load_scenario

    try:
        chosen = _with_budget(backends.get(backend), limits.max_memory)
        loaded = load_scenario(scenario, overrides)
        _within_time(chosen, loaded, limits.max_time)
        result = backends.run(loaded, chosen)
        result.save(out)
    except (ScenarioError, FileExistsError) as error:
        _fail(error)
    except BackendError as error:
        _failed(backend, error)
    except KeyboardInterrupt:
        typer.echo(f"interrupted: nothing written to {out}", err=True)
        raise typer.Exit(INTERRUPTED) from None
    except MemoryError:
        _failed(backend, BackendError(f"out of memory; nothing written to {out} (--max-memory)"))
    if figures:
        try:
            write_plots(result, out, figures)
        except MemoryError:
            _failed(backend, BackendError(f"out of memory while plotting; {out} is complete"))
    if as_json:
        typer.echo(json.dumps(result.summary, indent=2, sort_keys=True))
        return
    console.print(*summary_tables(result.summary, title=result.summary["scenario"]["name"]))
    console.print(f"result: {out}/")


class Limits(NamedTuple):
    """What a single run may take: --max-memory and --max-time as given."""

    max_memory: str | None
    max_time: str | None


def _within_time(backend: Backend, scenario: Scenario, max_time: str | None) -> None:
    """Say a long run's estimated wall time on stderr; above --max-time refuse it, and with no
    --max-time, on a terminal, ask above DEFAULT_MAX_TIME (a script is not asked)."""
    from tcpeval.backends.wall_time import over_time, said, wall_estimate
    from tcpeval.scenario import ScenarioError
    from tcpeval.units import parse_duration

    estimate = wall_estimate(backend, scenario)
    if estimate is None:
        return
    asking = max_time is None and _on_terminal()
    limit = max_time or (DEFAULT_MAX_TIME if asking else None)
    if estimate.total > ANNOUNCE_AFTER_S:
        typer.echo(f"estimated wall time: {said(estimate)}", err=True)
    if limit is None:
        return
    try:
        limit_s = parse_duration(limit).seconds
    except ValueError as error:
        raise ScenarioError("--max-time", limit, str(error)) from None
    if estimate.total <= limit_s:
        return
    refusal = over_time(estimate, limit)
    if asking and typer.confirm(f"{refusal}. Run it anyway?", default=False, err=True):
        return
    raise refusal


def _on_terminal() -> bool:
    """Whether a person is there to answer: input and errors both on a terminal."""
    return sys.stdin.isatty() and sys.stderr.isatty()


def _with_budget(backend: Backend, max_memory: str | None) -> Backend:
    """The backend with the memory budget asked for and a progress bar, if it takes them."""
    from tcpeval import backends
    from tcpeval.scenario import ScenarioError
    from tcpeval.units import parse_size

    try:
        budget = None if max_memory is None else parse_size(max_memory).bytes
    except ValueError as error:
        raise ScenarioError("--max-memory", max_memory, str(error)) from None
    return backends.interactive(backend, max_memory_bytes=budget)


@app.command("backends")
def list_backends(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON, no table.")] = False,
) -> None:
    """The backends: available here or why not, their algorithms, the keys they refuse."""
    from tcpeval import backends

    rows: list[dict[str, Any]] = [
        {
            "name": backend.name,
            "description": backend.description,
            "unavailable": backend.available(),
            "algorithms": backend.algorithms(),
            # Where each comes from, for a backend that says (the lab: built in or BPF).
            "origins": getattr(backend, "algorithm_origins", dict)(),
            "refused_keys": dict(backend.refused_keys()),
        }
        for backend in backends.all_backends()
    ]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    table = Table("backend", "available", "algorithms", "refused keys", show_lines=True)
    for row in rows:
        available = "yes" if row["unavailable"] is None else f"no: {row['unavailable']}"
        refused = "\n".join(escape(f"{key}: {why}") for key, why in row["refused_keys"].items())
        name = f"{row['name']}\n[dim]{row['description']}[/]"
        algorithms = [_origin(a, row["origins"].get(a)) for a in row["algorithms"]]
        table.add_row(name, available, ", ".join(algorithms), refused or "none")
    console.print(table)


def _origin(algorithm: str, origin: str | None) -> str:
    return f"{algorithm} ({origin})" if origin else algorithm


@app.command()
def compare(
    scenario: ScenarioFile,
    backend_names: Annotated[
        str, typer.Option("--backends", help="Comma-separated, e.g. model,sim.")
    ] = "model,sim",
    out: Annotated[
        Path | None, typer.Option("--out", help="Write each result, compare.html and plots here.")
    ] = None,
    overrides: Overrides = None,
    tolerance: Annotated[
        float, typer.Option("--tolerance", min=0, help="Flag ratios beyond 1 ± this.")
    ] = 0.2,
    measured: Annotated[
        list[Path] | None,
        typer.Option(
            "--with",
            metavar="RESULT_DIR",
            help="A saved result to set beside them (e.g. `tcpeval probe tcp --out`). Repeatable.",
        ),
    ] = None,
    formats: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="LIST",
            help="Also write the overlay figures to --out in these formats: png, svg, pdf.",
        ),
    ] = None,
) -> None:
    """Run SCENARIO on several backends and set their answers, and saved ones, side by side."""
    from tcpeval.backends.protocol import BackendError
    from tcpeval.compare import compare_backends, write_comparison
    from tcpeval.report.tables import comparison_table
    from tcpeval.scenario import ScenarioError, load_scenario

    names = [name.strip() for name in backend_names.split(",") if name.strip()]
    try:
        figures = () if formats is None else parse_formats(formats)
        comparison = compare_backends(
            load_scenario(scenario, overrides or []),
            names,
            tolerance=tolerance,
            measured=_saved_results(measured or []),
        )
        page = None if out is None else write_comparison(comparison, out, figures)
    except (ScenarioError, FileExistsError) as error:
        _fail(error)
    except BackendError as error:
        _failed(backend_names, error)
    console.print(comparison_table(comparison))
    if page is not None:
        console.print(f"comparison: {page}")


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
            help="Run on Dask: tcp://HOST:PORT of a scheduler, 'local' for a LocalCluster, "
            "or a cluster file (CLUSTER.toml: SLURM, PBS…, see examples/clusters/).",
        ),
    ] = None,
    backend: Annotated[
        str | None,
        typer.Option("--backend", help="Where the runs go. Default: the grid's, else sim."),
    ] = None,
) -> None:
    """Run every point of GRID × repeats into --out (runs/<run_id>/, read with tcpeval.load).

    Exit code 1 when some runs failed (each has an error.json; the others finished).
    """
    with second_ctrl_c_exits(_kept(out)):
        try:
            # A Ctrl-C inside a C extension's import can surface as another error.
            with ctrl_c_deferred():
                from tcpeval.scenario import ScenarioError
                from tcpeval.sweep import sweep as run_sweep
                from tcpeval.sweep.dask import scheduler_of
                from tcpeval.sweep.runner import checked

            checked(grid, backend)  # a mistake in the grid, before a cluster file submits jobs
            with scheduler_of(scheduler) as address:
                report = run_sweep(grid, out, jobs=jobs, scheduler=address, backend=backend)
        except KeyboardInterrupt:  # first: during the imports, ScenarioError is not bound yet
            _interrupted(out)
        except ScenarioError as error:
            _fail(error)
    repaired = f" ({report.damaged} found damaged, run again)" if report.damaged else ""
    console.print(
        f"{report.total} runs: {report.done} done{repaired}, {report.skipped} already there, "
        f"{report.failed} failed in {report.wall_seconds:.1f} s → {out}/"
    )
    if report.failed:
        typer.echo(f"see tcpeval.load_errors('{out}') or {out}/runs/*/error.json", err=True)
        raise typer.Exit(RUNS_FAILED)


@app.command()
def suite(
    name: Annotated[str, typer.Argument(help=f"A built-in suite: {', '.join(suite_names())}.")],
    cc: Annotated[str, typer.Option("--cc", help="The stack to evaluate.")],
    out: Annotated[Path, typer.Option("--out", help="Suite directory; a re-run resumes.")],
    baseline: Annotated[
        str | None,
        typer.Option(
            "--baseline",
            help="The reference stack. Default: the suite's (reno unless it names one).",
        ),
    ] = None,
    quick: Annotated[bool, typer.Option("--quick", help="The reduced grid: a smoke run.")] = False,
    jobs: Annotated[
        int | None, typer.Option("--jobs", min=1, help="Worker processes. Default: one per CPU.")
    ] = None,
    scheduler: Annotated[
        str | None,
        typer.Option(
            "--scheduler",
            metavar="ADDRESS",
            help="As for sweep: Dask tcp://…, local, or a cluster file (started once for all).",
        ),
    ] = None,
    backend: BackendName = DEFAULT_BACKEND,
) -> None:
    """Run suite NAME for --cc against --baseline, then write --out/report.html."""
    from tcpeval import backends
    from tcpeval.report.dataset import ReportError
    from tcpeval.report.tables import verdicts_table
    from tcpeval.scenario import ScenarioError
    from tcpeval.suites import load_suite
    from tcpeval.suites.runner import run_suite
    from tcpeval.sweep.dask import scheduler_of

    _freeze_imports()
    try:
        chosen = backends.get(backend)
        baseline = baseline or load_suite(name).baseline
        for field, stack in (("--cc", cc), ("--baseline", baseline)):
            _check_stack(field, stack, chosen.algorithms(), chosen.name)
        with second_ctrl_c_exits(_kept(out)), scheduler_of(scheduler) as address:
            written = run_suite(
                name,
                cc,
                out,
                baseline=baseline,
                quick=quick,
                jobs=jobs,
                scheduler=address,
                backend=chosen,
            )
    except (ScenarioError, ReportError) as error:
        _fail(error)
    except KeyboardInterrupt:
        _interrupted(out)
    _wide().print(verdicts_table(written.verdicts))
    console.print(f"report: {written.path}")


def _saved_results(directories: list[Path]) -> dict[str, Result]:
    """Saved results by label: their backend's name, or the directory's where that repeats."""
    from tcpeval.layout import SUMMARY_FILE
    from tcpeval.result import load as load_result
    from tcpeval.scenario import ScenarioError

    saved: dict[str, Result] = {}
    for directory in directories:
        if not (directory / SUMMARY_FILE).is_file():
            raise ScenarioError("--with", str(directory), "is not a result directory")
        result = load_result(directory)
        label = result.backend if result.backend not in saved else directory.name
        saved[label] = result
    return saved


def _check_stack(field: str, stack: str, known: list[str], backend: str) -> None:
    from tcpeval.scenario import ScenarioError

    if stack not in known:
        reason = f"is not an algorithm of backend '{backend}' (choose from {', '.join(known)})"
        raise ScenarioError(field, stack, reason)


@app.command()
def report(
    directory: Annotated[Path, typer.Argument(help="A sweep or suite directory.")],
    baseline: Annotated[
        str | None,
        typer.Option("--baseline", help="The stack verdicts compare with. Default: the suite's."),
    ] = None,
    formats: Annotated[
        str | None,
        typer.Option(
            "--format",
            metavar="LIST",
            help="Also write every figure to DIRECTORY/figures/ in these formats: png, svg, pdf.",
        ),
    ] = None,
) -> None:
    """Write DIRECTORY/report.html: metrics per stack, verdicts and figures, in one file."""
    from tcpeval.report.dataset import ReportError
    from tcpeval.report.html import write_report
    from tcpeval.report.tables import verdicts_table
    from tcpeval.scenario import ScenarioError
    from tcpeval.store import DamagedRuns

    _freeze_imports()
    try:
        figures = () if formats is None else parse_formats(formats)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", DamagedRuns)
            written = write_report(directory, baseline, figures)
    except (ReportError, ScenarioError) as error:
        _fail(error)
    damaged = (str(w.message) for w in caught if issubclass(w.category, DamagedRuns))
    for message in dict.fromkeys(damaged):
        typer.echo(f"warning: {message}", err=True)
    if written.verdicts:
        _wide().print(verdicts_table(written.verdicts))
    typer.echo(str(written.path))


EXPORT_FORMATS = ("csv", "flent")


@app.command()
def export(
    directory: Annotated[Path, typer.Argument(help="A result, sweep or suite directory.")],
    formats: Annotated[
        str,
        typer.Option(
            "--format",
            help="Comma-separated: csv (tidy tables; any directory), flent (Flent's data file, "
            "for `flent -i FILE -p totals`; a single result).",
        ),
    ] = "csv",
    csv: Annotated[bool, typer.Option("--csv", help="Short for --format csv.")] = False,
    out: Annotated[
        Path | None, typer.Option("--out", help="Where the files go. Default: DIRECTORY/export.")
    ] = None,
) -> None:
    """Write DIRECTORY as files other tools read: tidy CSV, or Flent's data file."""
    from tcpeval.export import export_csv, export_flent
    from tcpeval.scenario import ScenarioError

    chosen = ["csv"] if csv else [name.strip() for name in formats.split(",")]
    unknown = [name for name in chosen if name not in EXPORT_FORMATS]
    if unknown:
        _fail(ScenarioError("--format", unknown[0], f"is not one of {', '.join(EXPORT_FORMATS)}"))
    target = out or directory / "export"
    writers = {"csv": export_csv, "flent": lambda d, o: [export_flent(d, o)]}
    try:
        written = [path for name in chosen for path in writers[name](directory, target)]
    except (FileNotFoundError, ValueError) as error:
        _fail(ScenarioError("DIRECTORY", str(directory), _reason(error)))
    for path in written:
        typer.echo(str(path))


def _reason(error: Exception) -> str:
    """An error's text without the path it may start with (the caller names the directory)."""
    text = str(error)
    return text.split(": ", 1)[1] if ": " in text and text.startswith("/") else text


@cc_app.command("list")
def cc_list() -> None:
    """The algorithms the simulator knows: their parameters and defaults, and the congestion
    signals each answers (`flow.ecn`: the ECN settings it runs with, its default first)."""
    from tcpeval.scenario import cc_algorithms

    table = Table("name", "parameters (defaults)", "signals (flow.ecn)", "source", show_lines=True)
    for algorithm in cc_algorithms():
        params = "\n".join(_parameter(name, value) for name, value in algorithm["params"].items())
        table.add_row(
            algorithm["name"], params or "-", _signals(algorithm["ecn"]), algorithm["source"]
        )
    _wide().print(table)


def _signals(ecn_modes: list[str]) -> str:
    """Loss always; CE marks under the ECN settings the stack runs with."""
    marks = [mode for mode in ecn_modes if mode != "off"]
    signals = ["loss", *(f"ECN ({mode})" for mode in marks)]
    default = f"default: {ecn_modes[0]}"
    return "\n".join([*signals, default])


@app.command("hosts")
def list_hosts() -> None:
    """The host profiles (`flow.host`): each loss-recovery switch they set, and its meaning."""
    from tcpeval.scenario.hosts import PROFILES, SWITCH_MEANINGS, SWITCHES

    table = Table("switch", *PROFILES, "meaning", show_lines=True)
    for switch in SWITCHES:
        values = [str(getattr(host, switch)).lower() for host in PROFILES.values()]
        table.add_row(switch, *values, SWITCH_MEANINGS[switch])
    _wide().print(table)


def _freeze_imports() -> None:
    """Leave what the command imported (pandas, matplotlib, pydantic's models: about 300,000
    objects) out of the cyclic collector's work: it lives as long as the process, yet each
    full collection walked all of it, 0.1 s each, a quarter of a second in a quick suite's
    report (docs/sweeps.md)."""
    gc.freeze()


def _wide() -> Console:
    """The console for a wide table: piped, rich would lay it out in 80 columns and cut it."""
    return Console(width=max(console.width, WIDE_TABLE_COLUMNS))


def _parameter(name: str, value: object) -> str:
    """`beta=0.7`; a time in nanoseconds also as a duration: `min_rtt_window_ns=10000000000
    (10 s)`."""
    from tcpeval.units import format_duration_ns

    shown = f"{name}={value}"
    if name.endswith("_ns") and isinstance(value, int):
        shown += f" ({format_duration_ns(value)})"
    return escape(shown)


@app.command()
def demo(
    examples: Annotated[Path, typer.Argument(help="Directory of scenario files.")] = EXAMPLES,
    out: Annotated[Path, typer.Option("--out", help="Where the results go.")] = DEMO_OUT,
) -> None:
    """Run every example scenario, save results and plots, compare with the models."""
    from tcpeval.demo import run_examples
    from tcpeval.scenario import ScenarioError

    try:
        run_examples(examples, out, console)
    except (ScenarioError, FileExistsError) as error:
        _fail(error)


def _fail(error: Exception) -> NoReturn:
    typer.echo(f"error: {error}", err=True)
    raise typer.Exit(USAGE_ERROR)


def _failed(backend: str, error: BackendError) -> NoReturn:
    """A run the backend accepted and could not finish: not a usage error."""
    typer.echo(f"error: the {backend} run failed: {error}", err=True)
    raise typer.Exit(RUNS_FAILED)


def _interrupted(out: Path) -> NoReturn:
    """Ctrl-C during a sweep or suite: what is kept, and how to go on."""
    from tcpeval.layout import RUNS_DIR, SUMMARY_TABLE

    kept = sum(1 for _ in out.glob(f"**/{RUNS_DIR}/*/{SUMMARY_TABLE}"))
    typer.echo(f"\ninterrupted: {kept} {_kept(out)}", err=True)
    raise typer.Exit(INTERRUPTED)


def _kept(out: Path) -> str:
    return (
        f"finished runs are kept in {out}/ (a run is written whole or not at all); "
        "run the same command again to resume where it stopped"
    )
