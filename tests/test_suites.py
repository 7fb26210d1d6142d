"""The built-in suites: every definition loads, its scenarios are valid, its grids are built."""

from __future__ import annotations

from typing import Any

import pytest

from tcpeval import simulate
from tcpeval.scenario import ScenarioError
from tcpeval.scenario.loading import parse_scenario
from tcpeval.suites import Suite, available, grid_of, load_suite
from tcpeval.sweep import SuiteProgress
from tcpeval.sweep.grid import RunSpec, expand, load_grid
from tcpeval.units import parse_duration

ALL = available()


def test_the_issues_suites_are_all_there() -> None:
    assert set(ALL) >= {"hamilton", "response", "impact", "streams", "pacing", "window"}


@pytest.mark.parametrize("name", ALL)
def test_every_suite_loads_and_its_base_scenarios_are_valid(name: str) -> None:
    suite = load_suite(name)
    for test in suite.test:
        parse_scenario(test.base)  # raises ScenarioError naming the field if not


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("quick", [False, True])
def test_every_grid_compares_the_stack_with_the_baseline(name: str, quick: bool) -> None:
    suite = load_suite(name)
    for test in suite.test:
        grid = grid_of(test, suite, ["cubic", "reno"], quick)
        assert grid["axes"][test.stack] == ["cubic", "reno"]
        points = 1
        for values in grid["axes"].values():
            points *= len(values)
        assert points * grid["repeats"] >= 2
        if quick:
            assert grid["repeats"] == test.quick.repeats


@pytest.mark.parametrize("name", ALL)
def test_repeats_are_different_runs(name: str) -> None:
    """A test repeated with other seeds must have a random process (loss, background, start
    jitter), or its repeats are one run several times: the first 20 s of the first two repeats
    of the grid's first point."""
    suite = load_suite(name)
    for test in suite.test:
        grid = grid_of(test, suite, ["reno"], quick=False)
        if grid["repeats"] == 1:
            continue
        first, second = expand(load_grid(grid))[:2]
        flows = [simulate(_first_20s(run.scenario)).summary["flows"] for run in (first, second)]
        assert flows[0] != flows[1], f"{name}/{test.name}: repeats are the same run"


def _first_20s(scenario: dict[str, Any]) -> dict[str, Any]:
    """The scenario cut to 20 s, without the flows and sources that start later (a scenario
    refuses them), measured over the whole of it (a window such as "20s.." would not fit)."""
    cut = scenario | {"duration": "20s", "measure": "whole run"}
    for kind in ("flow", "cbr", "onoff"):
        if kind in scenario:
            cut[kind] = [
                t for t in scenario[kind] if parse_duration(t.get("start", "0s")).seconds < 20
            ]
    return cut


def test_the_quick_hamilton_grid_is_smaller_than_the_full_one() -> None:
    suite = load_suite("hamilton")

    def runs(quick: bool) -> int:
        total = 0
        for test in suite.test:
            grid = grid_of(test, suite, ["htcp", "reno"], quick)
            n = grid["repeats"]
            for values in grid["axes"].values():
                n *= len(values)
            total += n
        return total

    assert runs(quick=True) * 20 < runs(quick=False)


def test_an_unknown_suite_names_the_known_ones() -> None:
    with pytest.raises(ScenarioError, match="hamilton"):
        load_suite("hamiltn")


def test_a_suite_with_a_malformed_rule_is_refused() -> None:
    suite = load_suite("window").model_dump()
    suite["rule"] = [{"metric": "goodput_mbps", "message": "m", "below": 1.0, "above": 2.0}]
    with pytest.raises(ValueError, match="exactly one"):
        Suite.model_validate(suite)


def test_the_quick_variant_changes_the_base_as_it_says() -> None:
    suite = load_suite("hamilton")
    convergence = next(t for t in suite.test if t.name == "convergence")
    grid = grid_of(convergence, suite, ["cubic", "reno"], quick=True)
    assert grid["base"]["duration"] == "240s"
    assert grid["base"]["flow"][1]["start"] == "30s"
    assert convergence.base["duration"] == "600s", "the suite itself is left as it was"


def test_suite_progress_names_the_test_the_stack_and_the_suites_count() -> None:
    spec = RunSpec("r", {"flow.*.cc": "cubic", "bottleneck.rate": "10Mbps"}, 0, 1, {})
    shown = SuiteProgress("symmetric", "flow.*.cc", done_before=100, suite_total=150)
    assert shown.describe(spec, 17) == "symmetric · cubic · suite 117/150"
    assert shown.describe(None, 0) == "symmetric · suite 100/150"
