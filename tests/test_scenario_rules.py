"""Every scenario rule has one owner (tests/scenario_rules.json, docs/architecture.md).

Loading a scenario rejects every rule the front end owns, and every input that would break
one of the engine's preconditions, naming the user's field and value, before any backend
runs. The engine's half is crates/sim/tests/scenario_rules.rs: it rejects its preconditions
and runs, unchecked, what breaks only a rule of the front end.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from tcpeval.scenario import ScenarioError, parse_scenario, resolve
from tcpeval.scenario.loading import set_field

TABLE = json.loads((Path(__file__).parent / "scenario_rules.json").read_text())
RULES: list[dict[str, Any]] = TABLE["rules"]


def test_every_rule_has_one_of_the_two_owners() -> None:
    assert {rule["owner"] for rule in RULES} == {"scenario", "engine"}
    assert len({rule["rule"] for rule in RULES}) == len(RULES)


def test_the_engine_is_handed_what_the_front_end_resolves() -> None:
    assert resolve(parse_scenario(TABLE["base"]["user"])) == TABLE["base"]["resolved"]


def test_a_user_can_break_every_rule_the_front_end_owns() -> None:
    assert all(rule["user"] for rule in RULES if rule["owner"] == "scenario")


@pytest.mark.parametrize(
    "rule", [pytest.param(rule, id=rule["rule"]) for rule in RULES if rule["user"] is not None]
)
def test_loading_rejects_the_rule_naming_the_field_and_value(rule: dict[str, Any]) -> None:
    data = copy.deepcopy(TABLE["base"]["user"])
    for path, value in rule["user"].items():
        set_field(data, path, value)
    with pytest.raises(ScenarioError) as raised:
        parse_scenario(data)
    assert [raised.value.field, raised.value.value] == rule["error"]
