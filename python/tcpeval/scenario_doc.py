"""The scenario reference, docs/scenario.md, written from the scenario's pydantic models.

Each table of a scenario file is a model in `tcpeval.scenario`, and each key a field whose
`description` says what it means and ends with its default ("Default: …" or "Required.").
This module lays those out as one Markdown page, so the reference cannot drift from what the
loader accepts; tests/test_scenario_doc.py checks that the committed page is this output.

    python -m tcpeval.scenario_doc > docs/scenario.md

To change the page, change a field's description (or a model's docstring), then run the
command again. Only the text that belongs to no one field (units, errors, `--set`) is here.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from types import ModuleType

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from tcpeval.scenario import aqm, hosts, queue
from tcpeval.scenario.links import GilbertElliott, Link, NamedLink, Policer
from tcpeval.scenario.model import Scenario
from tcpeval.scenario.traffic import (
    ConstantBitRate,
    FlowGroup,
    OnOff,
    RequestResponse,
    Source,
    TcpTraffic,
    WebTraffic,
)

TITLE = "# Scenario reference"

GENERATED = (
    "<!-- Written by `python -m tcpeval.scenario_doc` from the field descriptions in "
    "python/tcpeval/scenario/. Edit those and run it again; tests/test_scenario_doc.py checks "
    "that this file is current. -->"
)

INTRODUCTION = """\
A scenario is a TOML file (or a dict, from Python) that says what to run: the links, the
traffic and how long. Every backend takes the same file; one that cannot do what a key asks
refuses it before anything runs, naming the key and the backend (`tcpeval backends` lists what
each refuses).

```toml
name = "symmetric-2flow"
duration = "120s"

[bottleneck]
rate = "250Mbps"
queue = "20%bdp"

[[flow]]                 # repeat for groups of flows
cc = "htcp"              # or a table: { name = "htcp", beta_adaptive = false }
rtt = "42ms"
count = 2
```

Conditions beyond one link and bulk flows:

```toml
[[link]]                 # a multi-link topology; with [bottleneck] too, that one is link 0
name = "wan"             # unique, used in routes
rate = "1Gbps"
delay = "10ms"           # flows crossing it need rtt ≥ 2 × the sum of their route's delays
queue = "100pkt"         # %bdp: of the largest RTT of the flows crossing this link
aqm = { name = "red", min_th = "20pkt", max_th = "60pkt", max_p = 0.1, weight = 0.002 }
loss = { model = "gilbert_elliott", p = 1e-4, r = 0.3, loss_good = 0.0, loss_bad = 1.0 }

[[cbr]]                  # constant-bit-rate UDP
rate = "200Mbps"         # also: packet_size ("1500B"), start, stop, route, direction

[[onoff]]                # an aggregate of Pareto on/off sources: self-similar, H ≈ (3 − shape)/2
count = 50
rate = "2Mbps"           # each source's rate while on
shape = 1.4

[[web]]                  # short TCP flows: Poisson arrivals, Pareto sizes
cc = "reno"
rtt = "30ms"
arrival_rate = 20.0      # flows per second
mean_size = "50KB"

[[reqresp]]              # request-response exchanges: request, response, think, repeat
cc = "cubic"
rtt = "50ms"
response = "1MB"
think = "10ms"

pcap = "wan"             # top level: capture this link into capture.pcap
```

## Units, errors and `--set`

Units are always written out: rates `500kbps`, `250Mbps`, `10Gb/s`; times `100ns`, `20us`,
`42ms`, `1.5s`, `2min`; sizes `1448B`, `64KB`, `1.5MB` (decimal) or `64KiB`, `1MiB` (binary);
buffers and windows also `100pkt` or `20%bdp`. A bare number is an error, as is any unknown
key. Errors are one line naming the field and the value, with exit code 2:

```
error: flow[0].rtt: '42' is missing a unit (e.g. 42ms)
error: bottleneck.qeue: unknown key
```

The ranges no value may exceed are in docs/contract.md, "Limits".

`--set` changes any key from the command line: `--set bottleneck.rate=1Gbps`,
`--set flow.0.rtt=42ms`, `--set flow.*.cc=cubic`, `--set duration=30s`. The value is read as
TOML when it is valid TOML (`--set seed=7`, `--set flow.0.sack=false`), as text otherwise.
Grids (docs/sweeps.md) name their axes the same way."""


@dataclass(frozen=True)
class Section:
    """One table of the file: its heading, the model that checks it, and which of its fields
    the page leaves out (a discipline's `name`, which the heading shows)."""

    heading: str
    model: type[BaseModel]
    skip: tuple[str, ...] = ()
    doc: type[BaseModel] | None = None  # whose docstring introduces it, if not the model's
    base: type[BaseModel] | None = None  # whose keys another section lists


TABLES = (
    Section("## Top level", Scenario),
    Section("## `[bottleneck]` and `[[link]]`", NamedLink, doc=Link),
    Section("### `loss` and `ack_loss` as a table", GilbertElliott),
    Section("### `policer`", Policer),
)

DISCIPLINES = (
    Section('### `aqm = "droptail"`', aqm.DropTail, skip=("name",)),
    Section('### `aqm = { name = "red", … }`', aqm.Red, skip=("name",)),
    Section('### `aqm = { name = "codel", … }`', aqm.CoDel, skip=("name",)),
    Section('### `aqm = { name = "pie", … }`', aqm.Pie, skip=("name",)),
    Section('### `aqm = { name = "step", threshold = … }`', aqm.Step, skip=("name",)),
    Section('### `aqm = { name = "fq_codel", … }`', aqm.FqCodel, skip=("name",)),
    Section('### `aqm = { name = "dualpi2", … }`', aqm.DualPi2, skip=("name",)),
)

TRAFFIC = (
    Section("## Every TCP table: `[[flow]]`, `[[web]]`, `[[reqresp]]`", TcpTraffic),
    Section("## `[[flow]]`", FlowGroup, base=TcpTraffic),
    Section("## `[[web]]`", WebTraffic, base=TcpTraffic),
    Section("## `[[reqresp]]`", RequestResponse, base=TcpTraffic),
    Section("## Every background source: `[[cbr]]`, `[[onoff]]`", Source),
    Section("## `[[cbr]]`", ConstantBitRate, base=Source),
    Section("## `[[onoff]]`", OnOff, base=Source),
)

BASES = {TcpTraffic: "every TCP table", Source: "every background source"}

PROSE = (
    ("## Host profiles", hosts),
    ("## How a queue counts", queue),
)


def _cell(text: str) -> str:
    """Text fit for one cell of a Markdown table."""
    return " ".join(text.split()).replace("|", "\\|")


def _given(value: object) -> str:
    """A default as a user would write it."""
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "true" if value else "false"
    given = getattr(value, "given", None)
    if given is not None:
        return str(given)
    name = getattr(value, "name", None)
    if isinstance(value, BaseModel) and isinstance(name, str):
        return name
    return str(value)


def meaning_and_default(field: FieldInfo) -> tuple[str, str]:
    """A field's description split into what it means and its default."""
    description = " ".join((field.description or "").split())
    meaning, marker, default = description.partition("Default:")
    if marker:
        return meaning.strip(), default.strip().removesuffix(".")
    if description.endswith("Required."):
        return description.removesuffix("Required.").strip(), "required"
    if field.is_required():
        return description, "required"
    if field.default_factory is not None:
        return description, "none"
    value = None if field.default is PydanticUndefined else field.default
    return description, _given(value)


def _doc(obj: type | ModuleType) -> str:
    return inspect.cleandoc(obj.__doc__ or "")


def table(section: Section) -> list[str]:
    """A heading, the model's docstring and one row per key (those of its base left out)."""
    lines = [section.heading, ""]
    own_doc = (section.doc or section.model).__dict__.get("__doc__")
    if own_doc:
        lines += [inspect.cleandoc(own_doc), ""]
    inherited = () if section.base is None else tuple(section.base.model_fields)
    fields = {
        key: field
        for key, field in section.model.model_fields.items()
        if key not in section.skip and key not in inherited
    }
    if section.base is not None:
        shared = BASES[section.base]
        lines += [f"The keys of {shared} (above), and {'these' if fields else 'no others'}.", ""]
    if not fields:
        return lines
    lines += ["| key | meaning | default |", "|---|---|---|"]
    for key, field in fields.items():
        meaning, default = meaning_and_default(field)
        lines.append(f"| `{key}` | {_cell(meaning)} | {_cell(default)} |")
    return [*lines, ""]


def _prose(heading: str, module: ModuleType) -> list[str]:
    """A module docstring as a section: its first line is a summary, the rest the text."""
    _, _, body = _doc(module).partition("\n\n")
    return [heading, "", body.strip(), ""]


def _sections(groups: Iterable[Section]) -> list[str]:
    return [line for section in groups for line in table(section)]


def render() -> str:
    """The whole page."""
    lines = [TITLE, "", GENERATED, "", INTRODUCTION, ""]
    lines += _sections(TABLES)
    lines += [
        "### `aqm`",
        "",
        "A discipline is written as its name alone, with every parameter at its default, or "
        "as a table with `name` and the parameters it changes.",
        "",
    ]
    lines += _sections(DISCIPLINES)
    lines += _sections(TRAFFIC)
    for heading, module in PROSE:
        lines += _prose(heading, module)
    return "\n".join(lines).rstrip() + "\n"


def main() -> None:
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
