"""The measurement window: the part of a run the summary's figures cover.

`measure = "whole run"` (the default), `"second half"`, or a span `"START..END"` where either
end may be left out: `"60s.."` (a 60 s warm-up left out), `"..30s"`, `"10s..70s"`. Goodput,
Jain's index, utilisation, mean queue and the time-series metrics cover the window; counters
(retransmits, timeouts, drops, packets sent) cover the whole run (docs/methodology.md §3.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from pydantic import PlainSerializer, PlainValidator

from tcpeval.units import Duration, parse_duration

WHOLE_RUN = "whole run"
SECOND_HALF = "second half"
SPAN = ".."


@dataclass(frozen=True)
class MeasureWindow:
    """A window as the user wrote it; `start`/`end` None where it runs from the run's start
    or to its end. `halves` is True for the second half, whatever the duration."""

    given: str
    start: Duration | None = None
    end: Duration | None = None
    halves: bool = False

    def span_s(self, duration_s: float) -> tuple[float, float]:
        """The window in seconds of a run lasting `duration_s`."""
        if self.halves:
            return duration_s / 2, duration_s
        start_s = 0.0 if self.start is None else self.start.seconds
        end_s = duration_s if self.end is None else self.end.seconds
        return start_s, end_s

    @property
    def is_whole_run(self) -> bool:
        return not self.halves and self.start is None and self.end is None


def parse_window(value: object) -> MeasureWindow:
    """A window from its text; ValueError with the reason for anything else."""
    if not isinstance(value, str):
        raise ValueError(f"must be text: '{WHOLE_RUN}', '{SECOND_HALF}' or 'START..END'")
    text = " ".join(value.split())
    if text == WHOLE_RUN:
        return MeasureWindow(text)
    if text == SECOND_HALF:
        return MeasureWindow(text, halves=True)
    if SPAN not in text:
        raise ValueError(f"must be '{WHOLE_RUN}', '{SECOND_HALF}' or 'START..END' (e.g. '60s..')")
    start, _, end = (part.strip() for part in text.partition(SPAN))
    window = MeasureWindow(
        text, parse_duration(start) if start else None, parse_duration(end) if end else None
    )
    if any(end is not None and end.ns < 0 for end in (window.start, window.end)):
        raise ValueError("must not start or end before the run")
    if window.start is not None and window.end is not None and window.end.ns <= window.start.ns:
        raise ValueError("must end after it starts")
    return window


WindowField = Annotated[
    MeasureWindow, PlainValidator(parse_window), PlainSerializer(lambda window: window.given)
]
DEFAULT_WINDOW = MeasureWindow(WHOLE_RUN)
