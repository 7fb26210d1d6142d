"""docs/scenario.md is written from the scenario models' field descriptions
(`python -m tcpeval.scenario_doc`): the committed page must be what the generator writes now,
and every key it lists must say what it means."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import get_args

from tcpeval import scenario_doc
from tcpeval.scenario.aqm import AQM_NAMES, Aqm

ROOT = Path(__file__).parent.parent
PAGE = ROOT / "docs" / "scenario.md"


def test_the_committed_scenario_reference_is_the_generators_output() -> None:
    assert PAGE.read_text() == scenario_doc.render(), (
        "docs/scenario.md is stale: python -m tcpeval.scenario_doc > docs/scenario.md"
    )


def test_the_module_prints_the_page() -> None:
    printed = subprocess.run(
        [sys.executable, "-m", "tcpeval.scenario_doc"], capture_output=True, text=True, check=True
    ).stdout
    assert printed == scenario_doc.render()


def test_every_key_on_the_page_says_what_it_means() -> None:
    sections = [*scenario_doc.TABLES, *scenario_doc.DISCIPLINES, *scenario_doc.TRAFFIC]
    for section in sections:
        for key, field in section.model.model_fields.items():
            if key in section.skip:
                continue
            meaning, default = scenario_doc.meaning_and_default(field)
            assert meaning, f"{section.model.__name__}.{key} has no description"
            assert default, f"{section.model.__name__}.{key} has no default"


def test_every_queue_discipline_has_a_section() -> None:
    documented = {section.model for section in scenario_doc.DISCIPLINES}
    disciplines = {get_args(member)[0] for member in get_args(get_args(Aqm)[0])}
    assert documented == disciplines
    for name in AQM_NAMES:
        assert f'name = "{name}"' in PAGE.read_text() or f'aqm = "{name}"' in PAGE.read_text()


def test_a_default_in_a_description_is_split_from_its_meaning() -> None:
    from tcpeval.scenario.traffic import FlowGroup

    meaning, default = scenario_doc.meaning_and_default(FlowGroup.model_fields["min_rto"])
    assert (meaning, default) == ("Lower bound of the RTO.", "200ms")
    meaning, default = scenario_doc.meaning_and_default(FlowGroup.model_fields["rtt"])
    assert default == "required"
    assert not meaning.endswith("Required.")
