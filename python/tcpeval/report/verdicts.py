"""Verdict rules: judgements on a sweep's numbers, written as data (docs/sweeps.md, `[[rule]]`).

A rule names a metric (a column of the tidy DataFrame), optionally the suite test whose rows it
judges (without one, it judges every test that has the metric), and one condition: `below = x`
or `above = x` fails a grid point whose value is below (above) x; `worse_than_baseline_by = m`
fails a point whose value is worse than the baseline
stack's value at the same point by more than the fraction m, in the direction the metric's
declaration gives (tcpeval.metrics.declarations): below (1 − m) times the baseline where higher
is better, above (1 + m) times it where lower is better. A point's value is the mean over its
repeats of each run's value (the mean over the run's rows, one per flow).

One verdict per (test, metric, stack): two rules may not judge the same metric of the same test,
and the baseline is not judged (it is what the others are judged against) unless it is the only
stack. A verdict fails when any point fails, and quotes the worst point in the rule's message
(`{threshold}`, `{where}`, `{value}`, `{baseline}`, and `{factor}`: how many times worse than
the baseline the value is). Thresholds and their sources: docs/methodology.md §5.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from tcpeval.metrics import declared

CONDITIONS = ("below", "above", "worse_than_baseline_by")

_QUANTITY = re.compile(r"^\s*([-+]?[\d.]+(?:[eE][-+]?\d+)?)\s*(\S*)\s*$")
_UNIT_NAMES = {
    "bps": "b/s",
    "kbps": "kb/s",
    "Kbps": "kb/s",
    "Mbps": "Mb/s",
    "Gbps": "Gb/s",
    "Tbps": "Tb/s",
    "%bdp": "% BDP",
    "pkt": "pkt",
    "pkts": "pkt",
}


@dataclass(frozen=True)
class Rule:
    """One `[[rule]]` table: a metric, a condition on it and the message of a failure."""

    metric: str
    condition: str
    threshold: float
    message: str
    test: str | None = None

    def __post_init__(self) -> None:
        if self.condition == "worse_than_baseline_by":
            self._improving_sign()  # a metric without a direction fails here

    @classmethod
    def from_dict(cls, table: Mapping[str, Any]) -> Rule:
        """A rule from its TOML table; a malformed one raises ValueError naming what is wrong."""
        unknown = set(table) - {"metric", "message", "test", *CONDITIONS}
        if unknown:
            raise ValueError(f"rule: unknown key {sorted(unknown)[0]!r}")
        given = [c for c in CONDITIONS if c in table]
        if len(given) != 1:
            raise ValueError(f"rule on {table.get('metric')!r}: give exactly one of {CONDITIONS}")
        if "metric" not in table or "message" not in table:
            raise ValueError("rule: 'metric' and 'message' are required")
        rule = cls(
            metric=str(table["metric"]),
            condition=given[0],
            threshold=float(table[given[0]]),
            message=str(table["message"]),
            test=table.get("test"),
        )
        rule.format_message(where="", value=1.0, baseline=1.0)  # a bad placeholder fails here
        return rule

    @property
    def text(self) -> str:
        """What passes, in words: "throughput ratio (min/max) at least 0.8",
        "standard flows' mean goodput at least 50% of the baseline's"."""
        metric = declared(self.metric)
        unit = f" {metric.unit}" if metric is not None and metric.unit else ""
        if self.condition == "below":
            bound = f"at least {self.threshold:g}{unit}"
        elif self.condition == "above":
            bound = f"at most {self.threshold:g}{unit}"
        else:
            higher = self._improving_sign() > 0
            share = 1 - self.threshold if higher else 1 + self.threshold
            bound = f"{'at least' if higher else 'at most'} {share:.0%} of the baseline's"
        name = metric.label if metric is not None else self.metric.replace("_", " ")
        return f"{name} {bound}"

    def format_message(self, *, where: str, value: float, baseline: float | None) -> str:
        """The message with its placeholders filled; ValueError if it has an unknown one."""
        try:
            return self.message.format(
                threshold=self.threshold,
                where=where,
                value=value,
                baseline=baseline,
                factor=self.factor(value, baseline),
            )
        except (KeyError, IndexError, ValueError) as error:
            raise ValueError(f"rule on {self.metric!r}: bad message placeholder {error}") from error

    def factor(self, value: float, baseline: float | None) -> float:
        """How many times worse than the baseline a value is (baseline/value where higher is
        better: the BW impact of standard_mean_mbps); NaN without a baseline or a direction."""
        metric = declared(self.metric)
        if baseline is None or metric is None or metric.better is None:
            return math.nan
        worse, better = (baseline, value) if metric.better == "higher" else (value, baseline)
        return worse / better if better > 0 else math.inf

    def fails(self, value: float, baseline: float | None) -> bool:
        """Whether a point's value breaks the rule (the baseline's value at the same point)."""
        if self.condition == "below":
            return value < self.threshold
        if self.condition == "above":
            return value > self.threshold
        if baseline is None:
            return False
        sign = self._improving_sign()
        return sign * value < sign * baseline * (1 - sign * self.threshold)

    def badness(self, value: float, baseline: float | None) -> float:
        """How far a value is on the failing side: larger is worse, used to pick the worst."""
        if self.condition == "below":
            return -value
        if self.condition == "above":
            return value
        return -self._improving_sign() * value / baseline if baseline else -math.inf

    def _improving_sign(self) -> int:
        """+1 where higher is better, −1 where lower is: sign·value grows as a stack improves."""
        metric = declared(self.metric)
        if metric is None or metric.better is None:
            raise ValueError(
                f"rule on {self.metric!r}: worse_than_baseline_by needs a metric declared "
                "with a better direction (tcpeval.metrics.declarations)"
            )
        return 1 if metric.better == "higher" else -1


@dataclass(frozen=True)
class Verdict:
    """A rule applied to one stack: passed (True/False), or None when there was nothing to judge.

    `where`, `value` and `baseline` describe the worst point (the first failing one decides the
    message); `failing` lists every failing point, `points` counts the points judged.
    """

    stack: str
    rule: Rule
    test: str | None
    """The suite test judged; None for a plain sweep."""
    passed: bool | None
    where: str
    value: float | None
    baseline: float | None
    message: str
    failing: tuple[str, ...] = ()
    points: int = 0


def parse_rules(tables: Sequence[Mapping[str, Any]]) -> list[Rule]:
    """The rules of a suite file's `[[rule]]` tables; ValueError when two judge one metric of
    one test (a rule without `test` judges them all), which would give a point two verdicts."""
    rules = [Rule.from_dict(table) for table in tables]
    for index, rule in enumerate(rules):
        for other in rules[:index]:
            same_test = None in (rule.test, other.test) or rule.test == other.test
            if rule.metric == other.metric and same_test:
                where = f" of test {rule.test or other.test!r}" if rule.test or other.test else ""
                raise ValueError(
                    f"two rules judge {rule.metric!r}{where}: one rule per test and metric"
                )
    return rules


def evaluate(
    frame: pd.DataFrame,
    rules: Sequence[Rule],
    *,
    axes: Sequence[str],
    baseline: str | None,
    stack_column: str = "cc",
) -> list[Verdict]:
    """Every rule applied to every test it names and every stack of `frame` but the baseline:
    one verdict per (test, metric, stack), in rule order.

    `axes` are the columns that make a grid point; those without a value in a test's rows
    (another test's axes) are left out.
    """
    verdicts: list[Verdict] = []
    for rule in rules:
        for test, rows in _rule_rows(frame, rule):
            rule_axes = [a for a in axes if a in rows.columns and rows[a].notna().any()]
            values = point_values(rows, rule.metric, axes=rule_axes, stack_column=stack_column)
            for stack in _stacks_judged(frame[stack_column], baseline):
                verdicts.append(_judge(rule, test, values, stack, baseline, rule_axes))
    return verdicts


def run_values(
    frame: pd.DataFrame, metric: str, *, axes: Sequence[str], stack_column: str = "cc"
) -> pd.DataFrame:
    """A metric per run: the mean over the run's rows (one per flow), NaN left out.

    Columns: `stack`, the axes, `run_id`, `value`; runs without a value are dropped.
    """
    columns = ["stack", *axes, "run_id", "value"]
    if frame.empty:
        return pd.DataFrame(columns=columns)
    keys = [stack_column, *axes, "run_id"]
    runs = frame.groupby(keys, sort=False, dropna=False)[metric].mean().dropna()
    return runs.rename("value").reset_index().rename(columns={stack_column: "stack"})[columns]


def point_values(
    frame: pd.DataFrame, metric: str, *, axes: Sequence[str], stack_column: str = "cc"
) -> pd.DataFrame:
    """A metric per stack and grid point: run_values averaged over the repeats.

    Columns: `stack`, the axes, `value`.
    """
    runs = run_values(frame, metric, axes=axes, stack_column=stack_column)
    if runs.empty:
        return runs.drop(columns="run_id")
    points = runs.groupby(["stack", *axes], sort=False, dropna=False)["value"].mean()
    return points.reset_index()


def format_where(point: Mapping[str, Any] | pd.Series, axes: Sequence[str]) -> str:
    """A grid point as a reader says it: "250 Mb/s, 324 ms"; bare numbers get the axis name."""
    return ", ".join(format_axis_value(axis, point[axis]) for axis in axes) or "every point"


def format_axis_value(axis: str, value: object) -> str:
    """One axis value: "250Mbps" → "250 Mb/s", "20%bdp" → "20% BDP", 0.001 → "loss 0.001"."""
    text = f"{value:g}" if isinstance(value, float) else str(value)
    match = _QUANTITY.match(text)
    if match is None:
        return text
    number, unit = match.groups()
    if not unit:
        return f"{axis.rsplit('.', 1)[-1]} {number}"
    separator = "" if unit == "%bdp" else " "
    return f"{number}{separator}{_UNIT_NAMES.get(unit, unit)}"


def _stacks_judged(stacks: pd.Series, baseline: str | None) -> list[str]:
    """Every stack but the baseline; the baseline only when it is the one stack there is."""
    names = [str(s) for s in pd.unique(stacks.dropna())]
    others = [s for s in names if s != baseline]
    return others or names


def _judge(
    rule: Rule,
    test: str | None,
    values: pd.DataFrame,
    stack: str,
    baseline: str | None,
    axes: Sequence[str],
) -> Verdict:
    """One rule on one stack's points."""
    mine = values[values["stack"].astype(str) == stack]
    reference = _baseline_values(values, baseline, axes)
    judged = [(row, reference.get(tuple(row[a] for a in axes))) for _, row in mine.iterrows()]
    if rule.condition == "worse_than_baseline_by":
        judged = [(row, base) for row, base in judged if base is not None and base > 0]
    if not judged:
        reason = "no baseline to compare with" if mine.size else "no data"
        return Verdict(stack, rule, test, None, "", None, None, reason)
    failing = [(row, base) for row, base in judged if rule.fails(row["value"], base)]
    worst, base = max(failing or judged, key=lambda pair: rule.badness(pair[0]["value"], pair[1]))
    where = format_where(worst, axes)
    return Verdict(
        stack=stack,
        rule=rule,
        test=test,
        passed=not failing,
        where=where,
        value=float(worst["value"]),
        baseline=base,
        message=rule.format_message(where=where, value=float(worst["value"]), baseline=base),
        failing=tuple(format_where(row, axes) for row, _ in failing),
        points=len(judged),
    )


def _rule_rows(frame: pd.DataFrame, rule: Rule) -> list[tuple[str | None, pd.DataFrame]]:
    """The rows a rule judges, per test: its test's, else those of every test with a value of
    its metric; a frame without a `test` column is one plain sweep (test None)."""
    if rule.metric not in frame.columns:
        return [(rule.test, frame.iloc[0:0])]
    if "test" not in frame.columns:
        return [(None, frame if rule.test is None else frame.iloc[0:0])]
    if rule.test is not None:
        return [(rule.test, frame[frame["test"] == rule.test])]
    measured = frame[frame[rule.metric].notna()]
    tests: list[str | None] = [str(t) for t in pd.unique(measured["test"])] or [None]
    return [(test, frame[frame["test"] == test]) for test in tests]


def _baseline_values(
    values: pd.DataFrame, baseline: str | None, axes: Sequence[str]
) -> dict[tuple[Any, ...], float]:
    """The baseline stack's value per grid point (shown beside every verdict)."""
    if baseline is None:
        return {}
    rows = values[values["stack"].astype(str) == baseline]
    return {tuple(row[a] for a in axes): float(row["value"]) for _, row in rows.iterrows()}
