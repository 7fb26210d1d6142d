"""What a report is made of: the sweeps of a directory as tidy DataFrames, and the suite's rules.

A report directory is either one sweep (it holds `grid.toml`) or a suite's output: the suite
file as run in `suite.toml`, the stack and baseline in `run.json`, and one sweep per test in
`DIR/<test>/` with the test's measures in `measures.parquet` (suites/runner.py). Each sweep
becomes a Section: its rows of `tcpeval.load` (one per flow per run), a `stack` column and, for
a suite, a `test` column and the measures of each run.

`stack` is what a run is judged and tabled as: the value of the axis that sets the congestion
control, else the run's algorithms ("cubic+reno" for a run that mixes them). It is never a
flow's own algorithm: run-level figures (Jain's index, utilisation, the queue) belong to the
whole run and must not be split by algorithm. Where runs mix algorithms, per-group measures sit
beside them: `algorithm_share` on each flow's row (its algorithm's share of the run's goodput)
and `algorithms_jain` on every row of the run (docs/methodology.md §3.4).
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import tcpeval
from tcpeval import metrics
from tcpeval.layout import GRID_FILE, MEASURES_FILE, RUN_FILE, RUNS_DIR, SUITE_FILE
from tcpeval.report.verdicts import Rule, parse_rules
from tcpeval.scenario.window import WHOLE_RUN
from tcpeval.store import load_sweep, with_measures

DEFAULT_BASELINE = "reno"
WINDOW_COLUMN = "measure_window"  # sweep/rundir.summary_table
_STACK_AXIS = re.compile(r"^flow\.(\*|\d+)\.cc$")


class ReportError(Exception):
    """A directory that cannot be reported on; the text is one line naming it and why."""


@dataclass(frozen=True)
class Section:
    """One sweep of the report: a suite test, or the whole directory."""

    name: str
    path: Path
    frame: pd.DataFrame
    axes: list[str]
    """The grid axes other than the stack, in the grid's order."""
    description: str = ""
    test: str | None = None
    """The suite test this sweep ran, which rules name; None for a plain sweep."""
    invalid: dict[str, str] = field(default_factory=dict)
    """Runs their backend voided (the lab's self-check), by run id → why; not in `frame`."""

    def run_dir(self, run_id: str) -> Path:
        return self.path / RUNS_DIR / run_id

    @property
    def stacks(self) -> list[str]:
        return [str(s) for s in pd.unique(self.frame["stack"])]

    @property
    def windows_text(self) -> str:
        """The measurement windows of its runs (docs/methodology.md §3.1), e.g. "second half";
        "whole run" for runs made before windows."""
        windows = self.frame.get(WINDOW_COLUMN, pd.Series([WHOLE_RUN]))
        return ", ".join(str(w) for w in pd.unique(windows.fillna(WHOLE_RUN)))


@dataclass(frozen=True)
class ReportData:
    directory: Path
    sections: list[Section]
    rules: list[Rule] = field(default_factory=list)
    baseline: str | None = None
    suite: dict[str, Any] = field(default_factory=dict)
    empty: list[str] = field(default_factory=list)
    """Sweeps of the directory without a successful run (their tests are left out)."""

    @property
    def title(self) -> str:
        return str(self.suite.get("name", self.directory.resolve().name))

    def frame(self) -> pd.DataFrame:
        """Every section's rows in one frame."""
        return pd.concat([s.frame for s in self.sections], ignore_index=True)

    def axes(self) -> list[str]:
        """Every section's axes, each once."""
        return list(dict.fromkeys(a for s in self.sections for a in s.axes))


def load_report_data(directory: str | Path, baseline: str | None = None) -> ReportData:
    """The sweeps of `directory` and the suite's rules; ReportError if there is nothing to show.

    The baseline is `baseline` (an error if it did not run), else the suite run's (run.json),
    else reno, if it ran.
    """
    directory = Path(directory)
    if not directory.is_dir():
        raise ReportError(f"{directory}: is not a directory")
    suite = _read_toml(directory / SUITE_FILE)
    run = directory / RUN_FILE
    recorded = json.loads(run.read_text()).get("baseline") if run.is_file() else None
    try:
        rules = parse_rules(suite.get("rule", []))
    except ValueError as error:
        raise ReportError(f"{directory / SUITE_FILE}: {error}") from error
    tests = {t.get("name"): t for t in suite.get("test", [])}
    found = {path: _section(path, tests.get(path.name)) for path in _sweep_dirs(directory, tests)}
    sections = [section for section in found.values() if section is not None]
    if not sections:
        voided = sum(len(_invalid_runs(load_sweep(path))) for path in found if _has_runs(path))
        why = f" ({voided} runs voided by the backend's self-check)" if voided else ""
        raise ReportError(f"{directory}: has no successful runs to report on{why}")
    empty = [path.name for path, section in found.items() if section is None]
    stacks = sorted({s for section in sections for s in section.stacks})
    if baseline is not None and baseline not in stacks:
        raise ReportError(
            f"--baseline: '{baseline}' did not run here (stacks: {', '.join(stacks)})"
        )
    chosen = baseline or recorded or DEFAULT_BASELINE
    baseline = chosen if chosen in stacks else None
    return ReportData(directory, sections, rules, baseline, suite, empty)


def _sweep_dirs(directory: Path, tests: dict[str, Any]) -> list[Path]:
    """The directory itself if it is a sweep, else its sub-directories that are (tests first)."""
    if (directory / GRID_FILE).is_file():
        return [directory]
    found = sorted(path.parent for path in directory.glob(f"*/{GRID_FILE}"))
    order = list(tests)
    found.sort(key=lambda p: order.index(p.name) if p.name in order else len(order))
    if not found:
        raise ReportError(f"{directory}: is not a sweep directory (no {GRID_FILE} in it or below)")
    return found


def _section(path: Path, test: dict[str, Any] | None) -> Section | None:
    """One sweep directory as a Section, with its measures when a suite took them; None when
    no run of it succeeded. Runs their backend voided are counted, not shown."""
    frame = tcpeval.load(path)
    if not isinstance(frame, pd.DataFrame) or frame.empty:
        return None
    invalid = _invalid_runs(frame)
    frame = frame[~frame["run_id"].isin(invalid)]
    if frame.empty:
        return None
    grid_axes = list(_read_toml(path / GRID_FILE).get("axes", {}))
    stack_axis = _stack_axis(grid_axes, test)
    frame = frame.assign(stack=(frame[stack_axis] if stack_axis else _mix(frame)).astype(str))
    frame = _with_groups(_with_rates(frame))
    name = path.name if test is None else str(test["name"])
    if test is not None:
        frame = with_measures(frame.assign(test=name), path / MEASURES_FILE)
    axes = [a for a in grid_axes if a != stack_axis]
    description = "" if test is None else str(test.get("description", ""))
    test_name = None if test is None else name
    return Section(name, path, frame, axes, description, test_name, invalid)


def _has_runs(path: Path) -> bool:
    frame = tcpeval.load(path)
    return isinstance(frame, pd.DataFrame) and not frame.empty


def _invalid_runs(frame: pd.DataFrame) -> dict[str, str]:
    if "valid" not in frame:
        return {}
    voided = frame[frame["valid"] == False]  # noqa: E712 (a column, not a bool)
    reasons = voided.get("invalid_reason", pd.Series("", index=voided.index)).fillna("")
    return dict(zip(voided["run_id"], reasons, strict=True))


def _stack_axis(axes: Sequence[str], test: dict[str, Any] | None) -> str | None:
    """The axis that sets the stack: the test's `stack`, else an axis `flow.N.cc`/`flow.*.cc`."""
    if test is not None and test.get("stack") in axes:
        return str(test["stack"])
    return next((a for a in axes if _STACK_AXIS.match(a)), None)


def _mix(frame: pd.DataFrame) -> pd.Series:
    """Each row's run's algorithms, in flow order, joined: "reno", "cubic+reno"."""
    return frame.groupby("run_id")["cc"].transform(lambda ccs: "+".join(dict.fromkeys(ccs)))


def mixes_algorithms(frame: pd.DataFrame) -> bool:
    """Whether some run has flows of more than one algorithm."""
    return bool((frame.groupby("run_id")["cc"].nunique() > 1).any())


def _with_groups(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-group measures of the runs that mix algorithms (NaN in the others); the frame as it
    is when no run does."""
    if not mixes_algorithms(frame):
        return frame
    shares, jains = [], []
    for _, rows in frame.groupby("run_id", sort=False):
        goodputs = {str(cc): group["goodput_mbps"].to_list() for cc, group in rows.groupby("cc")}
        mixed = len(goodputs) > 1 and not rows["goodput_mbps"].isna().any()
        share = metrics.algorithm_shares(goodputs) if mixed else {}
        shares.append(rows["cc"].map(share).astype(float))
        jain = metrics.between_algorithms_jain(goodputs) if mixed else math.nan
        jains.append(pd.Series(jain, index=rows.index))
    return frame.assign(algorithm_share=pd.concat(shares), algorithms_jain=pd.concat(jains))


def _with_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """Per-flow retransmission and congestion-event rates, NaN for a flow that sent nothing."""
    if not {"retransmits", "congestion_events", "packets_sent"} <= set(frame.columns):
        return frame
    rows = frame[frame["packets_sent"] > 0]
    if rows.empty:
        return frame
    return frame.assign(
        retransmission_rate=rows.apply(metrics.retransmission_rate, axis=1),
        congestion_event_rate=rows.apply(metrics.congestion_event_rate, axis=1),
    )


def _read_toml(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as error:
        raise ReportError(f"{path}: is not valid TOML ({error})") from error
