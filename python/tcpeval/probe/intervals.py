"""Interval reports as the binary prints them while a `tcp` test runs (`--interval-ms`).

Each is one stderr line, `interval {json}` (crates/probe/src/interval.rs): the interval's
bounds and, per stream, the bytes this end moved in it and, when this end sends, its
socket's retransmits in the interval, cwnd and smoothed RTT at the interval's end. Here
they become typed records with rates and a sum over the streams, labelled with the
direction of the test they belong to.
"""

from __future__ import annotations

import json
from typing import Literal

from pydantic import BaseModel

PREFIX = "interval "
Direction = Literal["forward", "reverse"]


class StreamInterval(BaseModel):
    id: int
    bytes: int
    retransmits: int | None = None
    cwnd_pkts: int | None = None
    mss_bytes: int | None = None
    rtt_us: int | None = None


class BinaryInterval(BaseModel):
    """One line of the binary, as it printed it."""

    start_ns: int
    end_ns: int
    streams: list[StreamInterval]


class IntervalFigures(BaseModel):
    """One stream's (or, for the sum, every stream's) figures over one interval.

    The sum's cwnd is the streams' windows added up (what they may have in flight
    together), its RTT their mean. Sender figures are None when this end received."""

    id: int | None
    start_s: float
    end_s: float
    bytes: int
    rate_bps: float
    retransmits: int | None
    cwnd_bytes: int | None
    rtt_ms: float | None
    omitted: bool


class Interval(BaseModel):
    direction: Direction
    streams: list[IntervalFigures]
    sum: IntervalFigures


def parse_line(line: str) -> BinaryInterval | None:
    """The interval a stderr line carries, or None for any other line."""
    if not line.startswith(PREFIX):
        return None
    return BinaryInterval.model_validate(json.loads(line.removeprefix(PREFIX)))


def figures(raw: BinaryInterval, direction: Direction, omit_s: float) -> Interval:
    """Rates and sums of a binary interval; an interval that ends by `omit_s` is omitted."""
    start_s, end_s = raw.start_ns / 1e9, raw.end_ns / 1e9
    # Boundaries are whole multiples of the interval in ns, so this comparison is exact
    # for an omit that is a multiple of the interval (a nanosecond of slack for others).
    omitted = raw.end_ns <= round(omit_s * 1e9) + 1
    span_s = max(end_s - start_s, 1e-9)

    def row(stream: StreamInterval) -> IntervalFigures:
        cwnd = (
            stream.cwnd_pkts * stream.mss_bytes
            if stream.cwnd_pkts is not None and stream.mss_bytes is not None
            else None
        )
        return IntervalFigures(
            id=stream.id,
            start_s=start_s,
            end_s=end_s,
            bytes=stream.bytes,
            rate_bps=stream.bytes * 8 / span_s,
            retransmits=stream.retransmits,
            cwnd_bytes=cwnd,
            rtt_ms=stream.rtt_us / 1e3 if stream.rtt_us is not None else None,
            omitted=omitted,
        )

    rows = [row(s) for s in raw.streams]
    total = sum(r.bytes for r in rows)
    sender = [r for r in rows if r.retransmits is not None]
    windows = [r.cwnd_bytes for r in rows if r.cwnd_bytes is not None]
    rtts = [r.rtt_ms for r in rows if r.rtt_ms is not None]
    summed = IntervalFigures(
        id=None,
        start_s=start_s,
        end_s=end_s,
        bytes=total,
        rate_bps=total * 8 / span_s,
        retransmits=sum(r.retransmits or 0 for r in sender) if sender else None,
        cwnd_bytes=sum(windows) if windows else None,
        rtt_ms=sum(rtts) / len(rtts) if rtts else None,
        omitted=omitted,
    )
    return Interval(direction=direction, streams=rows, sum=summed)
