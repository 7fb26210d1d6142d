"""The scenario: what to run, validated once, with errors that name the field and the value.

A scenario is data (a TOML file or a dict). `Scenario` checks it; `resolve` turns it into the
resolved JSON of docs/contract.md (every number in base units, `count` expanded, `%bdp` worked
out); `describe` gives the same in the user's own units for the saved result.
"""

from __future__ import annotations

import json
import math
import tomllib
from collections.abc import Callable, Iterable
from functools import cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    ValidationError,
    field_validator,
    model_validator,
)

from tcpeval import _core
from tcpeval.models import HEADER_BYTES, bdp_pkts
from tcpeval.units import (
    Buffer,
    Duration,
    Rate,
    Size,
    parse_buffer,
    parse_duration,
    parse_rate,
    parse_size,
)

AQMS = ("droptail",)


class ScenarioError(Exception):
    """A scenario the user must fix; its text is one line naming the field and the bad value."""

    def __init__(self, field: str, value: object, reason: str) -> None:
        self.field, self.value, self.reason = field, value, reason
        quoted = "" if value is None else f"'{value}' "
        super().__init__(f"{field}: {quoted}{reason}")


@cache
def cc_algorithms() -> list[dict[str, Any]]:
    """The congestion controls the core knows: name, source and parameter defaults."""
    return json.loads(_core.cc_algorithms())


# Field types: parse text into quantities, and dump them back as the user wrote them.


def _checked(parse: Callable[[object], Any], ok: Callable[[Any], bool], reason: str) -> Any:
    def validate(value: object) -> Any:
        quantity = parse(value)
        if not ok(quantity):
            raise ValueError(reason)
        return quantity

    return validate


_positive_time = _checked(parse_duration, lambda d: d.ns > 0, "must be a positive time")
_non_negative_time = _checked(parse_duration, lambda d: d.ns >= 0, "must not be negative")
_positive_size = _checked(parse_size, lambda s: s.bytes > 0, "must be a positive size")
_AS_GIVEN = PlainSerializer(lambda quantity: quantity.given)

RateField = Annotated[Rate, PlainValidator(parse_rate), _AS_GIVEN]
PositiveTime = Annotated[Duration, PlainValidator(_positive_time), _AS_GIVEN]
NonNegativeTime = Annotated[Duration, PlainValidator(_non_negative_time), _AS_GIVEN]
SizeField = Annotated[Size, PlainValidator(_positive_size), _AS_GIVEN]
BufferField = Annotated[Buffer, PlainValidator(parse_buffer), _AS_GIVEN]


class _Strict(BaseModel):
    # TOML has real booleans and numbers: no coercion from strings, no unknown keys.
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class Bottleneck(_Strict):
    rate: RateField = Field(description="Link rate, e.g. '250Mbps'. Required.")
    queue: BufferField = Field(
        default=parse_buffer("100%bdp"),
        description="Drop-tail buffer: packets ('100pkt'), bytes ('1.5MB') or a share of the "
        "BDP at the largest base RTT of the flows ('20%bdp'). Default: 100%bdp.",
    )
    aqm: str = Field(default="droptail", description="Queue discipline. Default: droptail.")
    loss: float = Field(
        default=0.0, description="Random per-packet loss probability, in [0, 1). Default: 0.0."
    )

    @field_validator("aqm")
    @classmethod
    def _known_aqm(cls, aqm: str) -> str:
        if aqm not in AQMS:
            raise ValueError(f"is not a supported AQM (allowed: {', '.join(AQMS)})")
        return aqm

    @field_validator("loss")
    @classmethod
    def _probability(cls, loss: float) -> float:
        if not 0 <= loss < 1:
            raise ValueError("must be a probability in [0, 1)")
        return loss


class CongestionControl(BaseModel):
    """An algorithm of the core's registry plus parameters for it, e.g. `"reno"` or
    `{ name = "htcp", beta_adaptive = false }`. Parameters pass through untouched: the registry
    (one place, in Rust) holds their defaults and rejects unknown ones."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    name: str = Field(description="A registered algorithm, see `tcpeval cc list`. Required.")

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: object) -> object:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("name")
    @classmethod
    def _registered(cls, name: str) -> str:
        names = [algorithm["name"] for algorithm in cc_algorithms()]
        if name not in names:
            raise ValueError(f"is not a known algorithm (choose from {', '.join(names)})")
        return name

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class FlowGroup(_Strict):
    """One [[flow]] table: `count` identical flows."""

    cc: CongestionControl = Field(description="Congestion control. Required.")
    rtt: PositiveTime = Field(description="Base round-trip propagation delay. Required.")
    count: int = Field(default=1, ge=1, description="Identical flows in this group. Default: 1.")
    start: NonNegativeTime = Field(
        default=parse_duration("0s"), description="Time the sender starts. Default: 0s."
    )
    stop: NonNegativeTime | None = Field(
        default=None,
        description="Time the sender stops; later than start. Default: run to the end.",
    )
    size: SizeField | None = Field(
        default=None, description="Bytes to transfer, then stop. Default: bulk (unlimited)."
    )
    mss: SizeField = Field(
        default=parse_size(1448), description="Segment payload in bytes. Default: 1448."
    )
    sack: bool = Field(default=True, description="Selective acknowledgements. Default: true.")
    delayed_ack: bool = Field(default=True, description="ACK every second packet. Default: true.")
    window: BufferField | None = Field(
        default=None,
        description="Socket-buffer limit on the window: bytes ('2MB', whole segments), packets "
        "('1000pkt') or a share of this flow's own BDP ('100%bdp'). Default: unlimited.",
    )
    initial_cwnd: int = Field(default=10, ge=1, description="Initial window, packets. Default: 10.")
    min_rto: PositiveTime = Field(
        default=parse_duration("200ms"), description="Lower bound of the RTO. Default: 200ms."
    )
    drop_at: list[NonNegativeTime] = Field(
        default_factory=list,
        description="Induced losses: the first packet of each flow of the group reaching the "
        "bottleneck at or after each time is dropped. Default: none.",
    )


class Scenario(_Strict):
    name: str = Field(default="scenario", description="Label of the run. Default: 'scenario'.")
    duration: PositiveTime = Field(description="Simulated time. Required.")
    seed: int = Field(
        default=1, ge=0, lt=2**64, description="Seed of every random process. Default: 1."
    )
    sample_interval: PositiveTime = Field(
        default=parse_duration("100ms"), description="Time-series resolution. Default: 100ms."
    )
    bottleneck: Bottleneck = Field(description="The shared link. Required.")
    flow: list[FlowGroup] = Field(min_length=1, description="[[flow]] tables, at least one.")

    @model_validator(mode="after")
    def _consistent(self) -> Scenario:
        if self.sample_interval.ns > self.duration.ns:
            raise ScenarioError(
                "sample_interval", self.sample_interval.given, "is longer than the duration"
            )
        queue = self.bottleneck.queue
        if queue.bytes is not None and queue.bytes < largest_packet_bytes(self):
            raise ScenarioError(
                "bottleneck.queue",
                queue.given,
                f"is smaller than one packet ({largest_packet_bytes(self)} B with headers)",
            )
        for index, group in enumerate(self.flow):
            if group.stop is not None and group.stop.ns <= group.start.ns:
                raise ScenarioError(
                    f"flow[{index}].stop",
                    group.stop.given,
                    f"must be later than start ({group.start.given})",
                )
            window = group.window
            if window is not None and window.bytes is not None and window.bytes < group.mss.bytes:
                raise ScenarioError(
                    f"flow[{index}].window",
                    window.given,
                    f"is smaller than one segment (mss {group.mss.bytes} B)",
                )
        return self


# Resolution: the numbers the core runs with.


def largest_packet_bytes(scenario: Scenario) -> int:
    return max(group.mss.bytes for group in scenario.flow) + HEADER_BYTES


def queue_limit(scenario: Scenario) -> tuple[int | None, int | None]:
    """The bottleneck buffer as (packets, bytes), exactly one of them set.

    `%bdp` is taken of the largest base RTT of the flows and counted in the largest packets,
    rounded to the nearest packet and never below one.
    """
    queue = scenario.bottleneck.queue
    if queue.bdp_percent is None:
        return queue.pkts, queue.bytes
    largest_rtt_s = max(group.rtt.seconds for group in scenario.flow)
    bdp = bdp_pkts(scenario.bottleneck.rate.bps, largest_rtt_s, largest_packet_bytes(scenario))
    return _at_least_one(queue.bdp_percent / 100 * bdp), None


def window_pkts(group: FlowGroup, rate: Rate) -> int | None:
    """The group's window limit in segments, or None for unlimited.

    Bytes count whole segments; `%bdp` is of the flow's own RTT at the bottleneck rate, rounded
    to the nearest packet and never below one.
    """
    window = group.window
    if window is None:
        return None
    if window.bdp_percent is not None:
        bdp = bdp_pkts(rate.bps, group.rtt.seconds, group.mss.bytes + HEADER_BYTES)
        return _at_least_one(window.bdp_percent / 100 * bdp)
    if window.bytes is not None:
        return window.bytes // group.mss.bytes
    return window.pkts


def _at_least_one(pkts: float) -> int:
    return max(1, math.floor(pkts + 0.5))


def resolve(scenario: Scenario) -> dict[str, Any]:
    """The resolved scenario the core runs (docs/contract.md): base units, one entry per flow."""
    queue_pkts, queue_bytes = queue_limit(scenario)
    bottleneck = scenario.bottleneck
    return {
        "name": scenario.name,
        "duration_ns": scenario.duration.ns,
        "seed": scenario.seed,
        "sample_interval_ns": scenario.sample_interval.ns,
        "bottleneck": {
            "rate_bps": bottleneck.rate.bps,
            "queue_pkts": queue_pkts,
            "queue_bytes": queue_bytes,
            "aqm": bottleneck.aqm,
            "loss": bottleneck.loss,
        },
        "flows": [
            _resolve_flow(index, group, bottleneck.rate)
            for index, group in enumerate(scenario.flow)
            for _ in range(group.count)
        ],
    }


def _resolve_flow(index: int, group: FlowGroup, rate: Rate) -> dict[str, Any]:
    return {
        "group": index,
        "cc": {"name": group.cc.name, **group.cc.params},
        "rtt_ns": group.rtt.ns,
        "start_ns": group.start.ns,
        "stop_ns": None if group.stop is None else group.stop.ns,
        "size_bytes": None if group.size is None else group.size.bytes,
        "mss_bytes": group.mss.bytes,
        "sack": group.sack,
        "delayed_ack": group.delayed_ack,
        "window_pkts": window_pkts(group, rate),
        "initial_cwnd_pkts": group.initial_cwnd,
        "min_rto_ns": group.min_rto.ns,
        "drop_at_ns": [time.ns for time in group.drop_at],
    }


def describe(scenario: Scenario) -> dict[str, Any]:
    """The scenario as the user wrote it, every default filled in, plus the resolved limits."""
    described = scenario.model_dump(mode="json")
    queue_pkts, queue_bytes = queue_limit(scenario)
    described["bottleneck"] |= {"queue_pkts": queue_pkts, "queue_bytes": queue_bytes}
    for group, group_described in zip(scenario.flow, described["flow"], strict=True):
        group_described["window_pkts"] = window_pkts(group, scenario.bottleneck.rate)
    return described


# Reading: TOML files, `--set` overrides and pydantic's errors turned into ScenarioError.


def load_scenario(path: str | Path, overrides: Iterable[str] = ()) -> Scenario:
    """Read a TOML scenario and apply `--set` overrides such as `flow.*.cc=cubic`."""
    data = _read_toml(Path(path))
    for assignment in overrides:
        _apply_override(data, assignment)
    return parse_scenario(data)


def parse_scenario(data: dict[str, Any]) -> Scenario:
    try:
        return Scenario.model_validate(data)
    except ValidationError as error:
        raise _scenario_error(error) from None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as file:
            return tomllib.load(file)
    except OSError as error:
        raise ScenarioError(str(path), None, f"cannot be read ({error.strerror})") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise ScenarioError(str(path), None, f"is not valid TOML: {error}") from None


def _apply_override(data: dict[str, Any], assignment: str) -> None:
    """`KEY.PATH=VALUE`: list items by index or `*`; VALUE is TOML if it parses, else text."""
    path, equals, text = assignment.partition("=")
    if not equals or not path:
        raise ScenarioError("--set", assignment, "is not of the form KEY=VALUE")
    try:
        value = tomllib.loads(f"value = {text}")["value"]
    except tomllib.TOMLDecodeError:
        value = text  # unquoted text such as 1Gbps or 42ms
    _assign(data, path.split("."), value, assignment)


def _assign(
    node: dict[str, Any] | list[Any], keys: list[str], value: object, assignment: str
) -> None:
    key, *rest = keys
    if isinstance(node, dict):
        if rest and key not in node:
            raise ScenarioError("--set", assignment, f"names '{key}', which is not in the scenario")
        children: list[Any] = [key]
    elif key == "*":
        children = list(range(len(node)))
    elif key.isdigit() and int(key) < len(node):
        children = [int(key)]
    else:
        reason = f"names item '{key}' of a list of {len(node)} (use an index or *)"
        raise ScenarioError("--set", assignment, reason)
    for child in children:
        if not rest:
            node[child] = value
        elif isinstance(node[child], dict | list):
            _assign(node[child], rest, value, assignment)
        else:
            raise ScenarioError("--set", assignment, f"goes into '{key}', which is not a table")


def _scenario_error(error: ValidationError) -> ScenarioError:
    """The first problem pydantic found, as one line."""
    first = error.errors()[0]
    field = _field_path(first["loc"])
    if first["type"] == "extra_forbidden":
        return ScenarioError(field, None, "unknown key")
    if first["type"] == "missing":
        return ScenarioError(field, None, "missing (required)")
    if first["type"] == "value_error":
        return ScenarioError(field, first["input"], str(first["ctx"]["error"]))
    if first["type"] == "model_type":
        return ScenarioError(field, first["input"], "must be a table")
    if first["type"] == "too_short":
        return ScenarioError(field, None, f"needs at least {first['ctx']['min_length']} entry")
    message = first["msg"]
    return ScenarioError(field, first["input"], f"is invalid: {message[0].lower()}{message[1:]}")


def _field_path(loc: tuple[int | str, ...]) -> str:
    path = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    return path.removeprefix(".") or "scenario"
