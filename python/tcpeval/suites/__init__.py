"""Built-in evaluation suites, as data: each `NAME.toml` beside this file is a set of tests
(grids of scenarios, docs/sweeps.md) and verdict rules. Measurement is kept apart from
judgement: a test names the measure taken from each run (`measures.py`), a rule judges those
numbers against a threshold or against the baseline stack.
"""

from __future__ import annotations

import copy
import tomllib
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from tcpeval.report.verdicts import parse_rules
from tcpeval.scenario import ScenarioError
from tcpeval.scenario.loading import set_field
from tcpeval.suite_files import suite_names, suite_text
from tcpeval.suites.measures import MEASURES


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class QuickVariant(_Strict):
    """The reduced grid of `--quick`."""

    repeats: int = Field(default=1, ge=1)
    set: dict[str, Any] = Field(default_factory=dict, description="Base fields to change.")
    axes: dict[str, list[Any]] = Field(default_factory=dict, description="Axes replacing the full.")


class SuiteTest(_Strict):
    name: str
    description: str
    measure: str = Field(description="The name of a measure in suites/measures.py.")
    stack: str = Field(description="The scenario path that takes the stack, e.g. 'flow.*.cc'.")
    base: dict[str, Any] = Field(description="The scenario every grid point starts from.")
    axes: dict[str, list[Any]]
    repeats: int | None = Field(default=None, ge=1, description="Default: the suite's.")
    quick: QuickVariant = Field(default_factory=QuickVariant)
    realtime: QuickVariant | None = Field(
        default=None, description="The --quick grid on a real-time backend (the lab)."
    )

    @model_validator(mode="after")
    def _known_measure(self) -> SuiteTest:
        if self.measure not in MEASURES:
            raise ValueError(f"unknown measure '{self.measure}' (known: {', '.join(MEASURES)})")
        return self


class Suite(_Strict):
    name: str
    description: str
    repeats: int = Field(default=5, ge=1)
    baseline: str = Field(
        default="reno",
        description="The stack the others are judged against unless `--baseline` names one.",
    )
    test: list[SuiteTest] = Field(min_length=1)
    rule: list[dict[str, Any]] = Field(default_factory=list, description="Verdict rules.")

    @model_validator(mode="after")
    def _rules_are_valid_and_name_tests(self) -> Suite:
        names = {t.name for t in self.test}
        for rule in parse_rules(self.rule):
            if rule.test is not None and rule.test not in names:
                raise ValueError(f"rule on '{rule.metric}' names an unknown test '{rule.test}'")
        return self


available = suite_names


def load_suite(name: str) -> Suite:
    """A built-in suite by name; an unknown name is a `ScenarioError` listing the known ones."""
    if name not in available():
        raise ScenarioError("suite", name, f"is not a suite (available: {', '.join(available())})")
    text = suite_text(name)
    try:
        return Suite.model_validate(tomllib.loads(text))
    except ValidationError as e:
        raise ScenarioError(f"suites/{name}.toml", name, str(e).splitlines()[-1].strip()) from e


def grid_of(
    test: SuiteTest, suite: Suite, stacks: list[str], quick: bool, real_time: bool = False
) -> dict[str, Any]:
    """The grid (docs/sweeps.md) of one test for the stacks compared: the stack is one more
    axis, at the test's `stack` path; `quick` takes the reduced variant, the `realtime` one
    on a backend that runs in wall-clock time."""
    base = copy.deepcopy(test.base)
    axes = dict(test.axes)
    repeats = test.repeats or suite.repeats
    if quick:
        variant = (test.realtime if real_time else None) or test.quick
        for path, value in variant.set.items():
            set_field(base, path, value)
        axes.update(variant.axes)
        repeats = variant.repeats
    axes[test.stack] = list(stacks)
    return {"repeats": repeats, "base": base, "axes": axes}
