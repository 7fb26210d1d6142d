"""The scenario: what to run, validated once, with errors that name the field and the value.

A scenario is data (a TOML file or a dict). `Scenario` checks it; `resolve` turns it into the
resolved JSON of docs/contract.md (every number in base units, `count` and `streams` expanded,
`%bdp` worked out, web flows drawn); `describe` gives the same in the user's own units for the
saved result.

- `fields`: quantities and the congestion-control table; `errors`: ScenarioError.
- `links`: `[bottleneck]` and `[[link]]`, AQMs and loss models; `queue`: how a queue counts
  (packets or bytes) and its limit; `traffic`: flows and sources.
- `model`: the Scenario and its cross-table checks; `resolve`: resolution and `describe`.
- `loading`: TOML files and `--set` overrides.

One owner per rule: every rule about what a scenario means (units, signs, ranges, names, one
table against another) is checked here, once, when the scenario is loaded, and its error names
the user's key and the value as given. Here rather than in the core because only here are the
user's keys and units known (`-5ms` never reaches the core's unsigned nanoseconds; `%bdp` and
RED's default thresholds are worked out here), and because the model, probe and lab backends
never call the core. The core checks only what its engine needs to run at all (`validate` in
crates/sim/src/scenario.rs), which the rules here already imply; congestion-control parameters
are the core's registry's. tests/scenario_rules.json lists every rule with its owner.
"""

from __future__ import annotations

from tcpeval.scenario.errors import ScenarioError
from tcpeval.scenario.fields import CongestionControl, cc_algorithms
from tcpeval.scenario.links import Link, NamedLink
from tcpeval.scenario.loading import load_scenario, parse_scenario
from tcpeval.scenario.model import Scenario
from tcpeval.scenario.resolve import Resolution, Transfer, describe, resolution, resolve
from tcpeval.scenario.traffic import FlowGroup

__all__ = [
    "CongestionControl",
    "FlowGroup",
    "Link",
    "NamedLink",
    "Resolution",
    "Scenario",
    "ScenarioError",
    "Transfer",
    "cc_algorithms",
    "describe",
    "load_scenario",
    "parse_scenario",
    "resolution",
    "resolve",
]
