"""Link conditions that change during a run: a rate that steps at given times.

A plain rate (`rate = "1Gbps"`) is a schedule of one step; a list of `[time, rate]` pairs,
`rate = [["0s", "1Gbps"], ["30s", "100Mbps"]]`, starts at 0s and changes at each later time.
Everything that sizes a link from its rate (a queue in %bdp, an AQM's thresholds, a window in
%bdp, a policer's ceiling) takes the rate the run starts with.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise
from typing import Annotated, Any

from pydantic import PlainSerializer, PlainValidator

from tcpeval.units import Duration, Rate, parse_duration, parse_rate


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
    for index, ((before, _), (time, _)) in enumerate(pairwise(steps)):
        if time.ns <= before.ns:
            reason = f"entry {index + 1} ('{time.given}') must come after entry {index}"
            raise ValueError(f"{reason} ('{before.given}'): times increase")
    return RateSchedule(value, steps)


def _step(index: int, entry: object) -> tuple[Duration, Rate]:
    if not (isinstance(entry, list) and len(entry) == 2):
        raise ValueError(f"entry {index} must be a [time, rate] pair, e.g. ['30s', '100Mbps']")
    try:
        time, rate = parse_duration(entry[0]), parse_rate(entry[1])
    except ValueError as error:
        raise ValueError(f"entry {index}: {error}") from None
    if time.ns < 0:
        raise ValueError(f"entry {index}: time '{time.given}' must not be negative")
    return time, rate


RateScheduleField = Annotated[
    RateSchedule,
    PlainValidator(parse_rate_schedule),
    PlainSerializer(lambda schedule: schedule.given),
]
