"""A `tcp` test's totals as iperf3 prints them at the end: per stream and summed, what the
sender sent and what the receiver got, after the omitted first seconds.

Everything comes from the Result (the sender's TCP_INFO history and the flow summaries), so
the totals of a reverse test, where the server sends, are as complete as a forward one's:

- sender: new data the sending socket put on the wire, `tcpi_bytes_sent − tcpi_bytes_retrans`,
  over the time from the start (or the omit) to the sample where that count last grew, and
  the retransmitted segments (`tcpi_total_retrans`) in that time;
- receiver: the bytes the receiving end counted (`bytes_delivered`) over the flow's span.

With an omit, each count's value at the last sample by the omit time is taken off, so a
count is exact to one sample interval (10 ms by default).
"""

from __future__ import annotations

import math

import pandas as pd
from pydantic import BaseModel

from tcpeval.probe.intervals import Direction
from tcpeval.result import Result


class TotalFigures(BaseModel):
    bytes: int
    seconds: float
    rate_bps: float
    retransmits: int | None = None


class StreamTotals(BaseModel):
    id: int
    sender: TotalFigures
    receiver: TotalFigures


class DirectionTotals(BaseModel):
    direction: Direction
    omit_s: float
    streams: list[StreamTotals]
    sum_sent: TotalFigures
    sum_received: TotalFigures


def _figures(bytes_: float, seconds: float, retransmits: float | None = None) -> TotalFigures:
    seconds = max(seconds, 0.0)
    return TotalFigures(
        bytes=int(bytes_),
        seconds=seconds,
        rate_bps=bytes_ * 8 / seconds if seconds > 0 else 0.0,
        retransmits=None if retransmits is None or math.isnan(retransmits) else int(retransmits),
    )


def _at(history: pd.DataFrame, column: str, t_s: float) -> float:
    """A cumulative count at the last sample by `t_s` (0 before the first)."""
    before = history[history["t_s"] <= t_s][column]
    return float(before.iloc[-1]) if len(before) else 0.0


def _sender(history: pd.DataFrame, flow: dict, omit_s: float) -> TotalFigures:
    sent = history["bytes_sent"] - history["bytes_retrans"]
    if not len(history) or sent.isna().all():
        # No sender history (an iperf3 server sent): the receiver's count is the best known.
        return _figures(flow["bytes_delivered"], flow["end_s"] - flow["start_s"])
    history = history.assign(new_sent_bytes=sent)
    final = float(sent.iloc[-1])
    stopped_s = float(history["t_s"][sent >= final].iloc[0])
    at_omit = _at(history, "new_sent_bytes", omit_s) if omit_s > 0 else 0.0
    retransmits = float(history["retransmits"].iloc[-1]) - _at(history, "retransmits", omit_s)
    return _figures(final - at_omit, stopped_s - omit_s, retransmits)


def _receiver(history: pd.DataFrame, flow: dict, omit_s: float) -> TotalFigures:
    before = _at(history, "delivered_bytes", omit_s) if omit_s > 0 else 0.0
    start_s = max(flow["start_s"], omit_s)
    return _figures(flow["bytes_delivered"] - before, flow["end_s"] - start_s)


def totals(result: Result, direction: Direction, omit_s: float = 0.0) -> DirectionTotals:
    """The end-of-test table of one direction's Result."""
    streams = []
    for flow in result.summary["flows"]:
        history = result.flows[result.flows["flow"] == flow["id"]].sort_values("t_s")
        streams.append(
            StreamTotals(
                id=flow["id"],
                sender=_sender(history, flow, omit_s),
                receiver=_receiver(history, flow, omit_s),
            )
        )
    sent = [s.sender for s in streams]
    received = [s.receiver for s in streams]
    retransmits = [s.retransmits for s in sent if s.retransmits is not None]
    return DirectionTotals(
        direction=direction,
        omit_s=omit_s,
        streams=streams,
        sum_sent=_figures(
            sum(s.bytes for s in sent),
            max((s.seconds for s in sent), default=0.0),
            sum(retransmits) if retransmits else None,
        ),
        sum_received=_figures(
            sum(r.bytes for r in received), max((r.seconds for r in received), default=0.0)
        ),
    )
