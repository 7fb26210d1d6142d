"""Hostile scenarios, generated: `tcpeval sim` either runs one or refuses it with
one line naming a real field (exit 2) — never a traceback, an abort, a hang, the core's
JSON, nonsense run as if it were fine, or memory beyond the budget it is given.
bench/fuzz_scenarios.py runs the same engine on 10^5 cases in capped worker processes and
counts the outcomes."""

from __future__ import annotations

import random
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hostile import GOOD, run_case, scenario_case

TIME_LIMIT_S = 20.0  # a guard, not a measurement: cases that run longer are stopped
MAX_MEMORY = "256MB"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(min_value=0, max_value=2**32 - 1), mutations=st.integers(0, 3))
def test_hostile_scenarios_run_or_are_refused_in_one_line(seed: int, mutations: int) -> None:
    case = scenario_case(random.Random(seed), mutations)
    with tempfile.TemporaryDirectory() as directory:
        outcome = run_case(case, Path(directory), TIME_LIMIT_S, MAX_MEMORY)
    assert outcome in GOOD, f"{outcome}:\n{case.text[:2000]}"
