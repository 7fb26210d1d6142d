"""Field types shared by the scenario's tables: text parsed into quantities, dumped back as the
user wrote it, and the congestion-control table checked against the core's registry."""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    model_validator,
)

from tcpeval import _core
from tcpeval.scenario.errors import ScenarioError
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


@cache
def cc_algorithms() -> list[dict[str, Any]]:
    """The congestion controls the core knows: name, source and parameter defaults."""
    return json.loads(_core.cc_algorithms())


EcnMode = Literal["off", "classic", "l4s"]


def ecn_modes(cc_name: str) -> list[EcnMode]:
    """The ECN settings the simulator's algorithm runs with, its default first; empty for an
    algorithm the simulator does not have."""
    known = (a["ecn"] for a in cc_algorithms() if a["name"] == cc_name)
    return next(known, [])


def _checked(parse: Callable[[object], Any], ok: Callable[[Any], bool], reason: str) -> Any:
    def validate(value: object) -> Any:
        quantity = parse(value)
        if not ok(quantity):
            raise ValueError(reason)
        return quantity

    return validate


def _in_range(low: float, high: float, *, low_open: bool, high_open: bool) -> Any:
    """A number in an interval, e.g. (1, 2) or [0, 1)."""
    text = f"{'(' if low_open else '['}{low:g}, {high:g}{')' if high_open else ']'}"

    def validate(number: float) -> float:
        above = number > low if low_open else number >= low
        below = number < high if high_open else number <= high
        if not (above and below):
            raise ValueError(f"must be in {text}")
        return number

    return AfterValidator(validate)


_positive_time = _checked(parse_duration, lambda d: d.ns > 0, "must be a positive time")
_non_negative_time = _checked(parse_duration, lambda d: d.ns >= 0, "must not be negative")
_positive_size = _checked(parse_size, lambda s: s.bytes > 0, "must be a positive size")
AS_GIVEN = PlainSerializer(lambda quantity: quantity.given)

RateField = Annotated[Rate, PlainValidator(parse_rate), AS_GIVEN]
PositiveTime = Annotated[Duration, PlainValidator(_positive_time), AS_GIVEN]
NonNegativeTime = Annotated[Duration, PlainValidator(_non_negative_time), AS_GIVEN]
SizeField = Annotated[Size, PlainValidator(_positive_size), AS_GIVEN]
BufferField = Annotated[Buffer, PlainValidator(parse_buffer), AS_GIVEN]

Probability = Annotated[float, _in_range(0, 1, low_open=False, high_open=False)]
LossProbability = Annotated[float, _in_range(0, 1, low_open=False, high_open=True)]
UnitInterval = Annotated[float, _in_range(0, 1, low_open=True, high_open=False)]
SelfSimilarShape = Annotated[float, _in_range(1, 2, low_open=True, high_open=True)]
HeavyTailShape = Annotated[float, Field(gt=1)]

Direction = Literal["forward", "reverse"]
Route = Annotated[list[str], Field(min_length=1)]


class Strict(BaseModel):
    # TOML has real booleans and numbers: no coercion from strings, no unknown keys, and no
    # `inf` or `nan` (TOML has them; no field means them).
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)


class CongestionControl(BaseModel):
    """An algorithm plus parameters for it, e.g. `"reno"` or `{ name = "htcp", beta_adaptive =
    false }`. Which names exist is the backend's to say (`tcpeval backends`: the kernel of the
    lab offers other algorithms than the simulator), checked by its `supports()` before a run.
    Parameters pass through untouched: the simulator's registry (one place, in Rust) holds
    their defaults and rejects unknown ones."""

    model_config = ConfigDict(extra="allow", strict=True, frozen=True)

    name: str = Field(description="An algorithm of the backend, see `tcpeval backends`. Required.")

    @model_validator(mode="before")
    @classmethod
    def _from_name(cls, value: object) -> object:
        return {"name": value} if isinstance(value, str) else value

    def check(self, path: str) -> None:
        """The parameters' ranges are the registry's (`tcpeval cc list`); what the JSON to it
        cannot carry is refused here: tables, lists, `inf`, `nan`, integers beyond 64 bits."""
        for key, value in self.params.items():
            if not isinstance(value, bool | int | float | str):
                raise ScenarioError(f"{path}.{key}", None, "must be a number, true/false or text")
            if isinstance(value, float) and not math.isfinite(value):
                raise ScenarioError(f"{path}.{key}", value, "must be a finite number")
            if isinstance(value, int) and not -(2**63) <= value < 2**64:
                raise ScenarioError(f"{path}.{key}", value, "is out of range")

    @property
    def params(self) -> dict[str, Any]:
        return dict(self.model_extra or {})

    def resolved(self) -> dict[str, Any]:
        return {"name": self.name, **self.params}

    def with_defaults(self) -> dict[str, Any]:
        """The algorithm as the simulator runs it: the registry's defaults, then those given
        (only those given for an algorithm the registry does not have)."""
        known = (a["params"] for a in cc_algorithms() if a["name"] == self.name)
        defaults: dict[str, Any] = next(known, {})
        return {"name": self.name, **defaults, **self.params}
