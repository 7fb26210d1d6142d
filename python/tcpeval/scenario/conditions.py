"""Conditions that change during a run: a link's rate that steps at given times, periods a
link is down, and a flow's route that changes at given times.

A plain rate (`rate = "1Gbps"`) is a schedule of one step; a list of `[time, rate]` pairs,
`rate = [["0s", "1Gbps"], ["30s", "100Mbps"]]`, starts at 0s and changes at each later time.
Everything that sizes a link from its rate (a queue in %bdp, an AQM's thresholds, a window in
%bdp, a policer's ceiling) takes the rate the run starts with.

A link's `outage = [["10s", "12s"]]` drops every packet entering it from 10 s to 12 s
(`ack_outage` the same in its reverse direction, where the ACKs of forward flows cross it).

A flow's `route_changes = [["20s", ["b", "c"]]]` sends its packets over links b then c from
20 s on; each route is written as `route` is.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from itertools import pairwise
from typing import Annotated, Any, TypeVar

from pydantic import PlainSerializer, PlainValidator

from tcpeval.units import Duration, Rate, parse_duration, parse_rate

T = TypeVar("T")


@dataclass(frozen=True)
class RateSchedule:
    """A link's rate from 0s, then from each later time of `steps`."""

    given: Any
    steps: tuple[tuple[Duration, Rate], ...]

    @property
    def bps(self) -> int:
        """The rate the run starts with."""
        return self.steps[0][1].bps

    def mean_bps(self, start_s: float, end_s: float) -> float:
        """The rate averaged over `[start_s, end_s)` of the run (a positive span)."""
        ends = [time.seconds for time, _ in self.steps[1:]] + [float("inf")]
        carried = sum(
            rate.bps * max(0.0, min(end, end_s) - max(time.seconds, start_s))
            for (time, rate), end in zip(self.steps, ends, strict=True)
        )
        return carried / (end_s - start_s)

    @property
    def changes(self) -> tuple[tuple[Duration, Rate], ...]:
        """The steps after the first: what changes during the run."""
        return self.steps[1:]


def parse_rate_schedule(value: object) -> RateSchedule:
    if not isinstance(value, list):
        return RateSchedule(value, ((parse_duration("0s"), parse_rate(value)),))
    if not value:
        raise ValueError("must list at least one [time, rate] pair")
    steps = tuple(_step(index, entry) for index, entry in enumerate(value))
    if steps[0][0].ns != 0:
        raise ValueError("must start at 0s: its first pair is the rate the run starts with")
    _check_increasing([time for time, _ in steps])
    return RateSchedule(value, steps)


def _step(index: int, entry: object) -> tuple[Duration, Rate]:
    first, second = _pair(index, entry, "[time, rate] pair, e.g. ['30s', '100Mbps']")
    time, rate = _parsed(index, parse_duration, first), _parsed(index, parse_rate, second)
    _not_negative(index, "time", time)
    return time, rate


MAX_ROUTE_CHANGES = 255


@dataclass(frozen=True)
class RouteChange:
    """From `at` on, a flow's packets cross `route`."""

    at: Duration
    route: list[str]


def parse_route_changes(value: object) -> tuple[RouteChange, ...]:
    if not isinstance(value, list):
        raise ValueError("must be a list of [time, route] pairs, e.g. [['20s', ['b', 'c']]]")
    if len(value) > MAX_ROUTE_CHANGES:
        reason = "a simulated packet carries its route's number in a byte"
        raise ValueError(f"must list at most {MAX_ROUTE_CHANGES} changes: {reason}")
    changes = tuple(_route_change(index, entry) for index, entry in enumerate(value))
    _check_increasing([change.at for change in changes])
    return changes


def _route_change(index: int, entry: object) -> RouteChange:
    time, route = _pair(index, entry, "[time, route] pair, e.g. ['20s', ['b', 'c']]")
    at = _parsed(index, parse_duration, time)
    _not_negative(index, "time", at)
    if not (isinstance(route, list) and route and all(isinstance(n, str) for n in route)):
        raise ValueError(f"entry {index}: the route must be a list of link names")
    return RouteChange(at, route)


def _check_increasing(times: list[Duration]) -> None:
    for index, (before, time) in enumerate(pairwise(times)):
        if time.ns <= before.ns:
            reason = f"entry {index + 1} ('{time.given}') must come after entry {index}"
            raise ValueError(f"{reason} ('{before.given}'): times increase")


RouteChangesField = Annotated[
    tuple[RouteChange, ...],
    PlainValidator(parse_route_changes),
    PlainSerializer(lambda changes: [[change.at.given, change.route] for change in changes]),
]


def parse_outages(value: object) -> tuple[tuple[Duration, Duration], ...]:
    if not isinstance(value, list):
        raise ValueError("must be a list of [start, end] pairs, e.g. [['10s', '12s']]")
    outages = tuple(_outage(index, entry) for index, entry in enumerate(value))
    for index, ((_, before_end), (start, _)) in enumerate(pairwise(outages)):
        if start.ns < before_end.ns:
            reason = f"entry {index + 1} starts ('{start.given}') before entry {index} ends"
            raise ValueError(f"{reason} ('{before_end.given}'): periods follow one another")
    return outages


def _outage(index: int, entry: object) -> tuple[Duration, Duration]:
    first, second = _pair(index, entry, "[start, end] pair, e.g. ['10s', '12s']")
    start, end = _parsed(index, parse_duration, first), _parsed(index, parse_duration, second)
    _not_negative(index, "start", start)
    if end.ns <= start.ns:
        raise ValueError(f"entry {index}: end '{end.given}' must come after its start")
    return start, end


OutagesField = Annotated[
    tuple[tuple[Duration, Duration], ...],
    PlainValidator(parse_outages),
    PlainSerializer(lambda outages: [[start.given, end.given] for start, end in outages]),
]

RateScheduleField = Annotated[
    RateSchedule,
    PlainValidator(parse_rate_schedule),
    PlainSerializer(lambda schedule: schedule.given),
]


def _pair(index: int, entry: object, shape: str) -> tuple[object, object]:
    """The two items of list entry `index`; `shape` says how one is written, for the error."""
    if not (isinstance(entry, list) and len(entry) == 2):
        raise ValueError(f"entry {index} must be a {shape}")
    return entry[0], entry[1]


def _parsed(index: int, parse: Callable[[object], T], value: object) -> T:
    """`parse(value)`, its error naming entry `index`."""
    try:
        return parse(value)
    except ValueError as error:
        raise ValueError(f"entry {index}: {error}") from None


def _not_negative(index: int, what: str, time: Duration) -> None:
    if time.ns < 0:
        raise ValueError(f"entry {index}: {what} '{time.given}' must not be negative")
