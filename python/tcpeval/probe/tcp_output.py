"""What `tcpeval probe tcp` prints, the way iperf3 users read it.

Three forms go to stdout (or, with `--logfile`, to that file instead): text (interval rows
per stream and [SUM], then a table of sender and receiver totals), one JSON document at the
end (`--json`), or one JSON object per line as the test runs (`--json-stream`: `start`,
`interval`…, `end`). A progress line per interval goes to stderr whatever stdout is, so a
test whose output is piped or logged still says how it goes. The binary measures; this
module only formats (docs/probe.md, "Output as iperf3 prints it").
"""

from __future__ import annotations

import json
import sys
import threading
from typing import Any, Literal, TextIO

from tcpeval.probe.intervals import Interval, IntervalFigures
from tcpeval.probe.totals import DirectionTotals, TotalFigures

Form = Literal["text", "json", "json-stream"]
HEADER = "[ ID]      Interval        Transfer        Rate   Retr      Cwnd       RTT"
RULE = "- " * 37
# iperf3's bidir labels: this end transmits (TX) or receives (RX); C for the client.
ROLE = {"forward": "[TX-C]", "reverse": "[RX-C]"}


def size_text(value: float) -> str:
    """Bytes in decimal units, three significant digits."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value:.0f} B"


def rate_text(bps: float) -> str:
    for unit, scale in (("Gb/s", 1e9), ("Mb/s", 1e6), ("kb/s", 1e3)):
        if abs(bps) >= scale:
            return f"{bps / scale:.3g} {unit}"
    return f"{bps:.0f} b/s"


def _cell(value: object, width: int) -> str:
    return f"{'-' if value is None else value:>{width}}"


def interval_row(label: str, f: IntervalFigures) -> str:
    cwnd = size_text(f.cwnd_bytes) if f.cwnd_bytes is not None else None
    rtt = f"{f.rtt_ms:.2f} ms" if f.rtt_ms is not None else None
    row = (
        f"{label} {f.start_s:6.2f}-{f.end_s:<6.2f} s {size_text(f.bytes):>10}"
        f" {rate_text(f.rate_bps):>11} {_cell(f.retransmits, 6)} {_cell(cwnd, 9)}"
        f" {_cell(rtt, 9)}"
    )
    return row + ("  (omitted)" if f.omitted else "")


def total_row(label: str, start_s: float, f: TotalFigures, role: str) -> str:
    retransmits = _cell(f.retransmits, 6) if role == "sender" else " " * 6
    return (
        f"{label} {start_s:6.2f}-{start_s + f.seconds:<6.2f} s {size_text(f.bytes):>10}"
        f" {rate_text(f.rate_bps):>11} {retransmits}  {role}"
    )


def progress_line(interval: Interval) -> str:
    s = interval.sum
    parts = [f"[{s.end_s:7.1f} s] {interval.direction}: {rate_text(s.rate_bps)}"]
    if s.retransmits is not None:
        parts.append(f"{s.retransmits} retransmits")
    if s.cwnd_bytes is not None:
        parts.append(f"cwnd {size_text(s.cwnd_bytes)}")
    if s.rtt_ms is not None:
        parts.append(f"RTT {s.rtt_ms:.2f} ms")
    return ", ".join(parts) + (" (omitted)" if s.omitted else "")


class TcpOutput:
    """Receives the test's start, its intervals (from the binary's threads) and its totals,
    and prints them in the chosen form; safe to call from several threads (--bidir)."""

    def __init__(self, form: Form, sink: TextIO, progress: bool, rows: bool, bidir: bool) -> None:
        self.form, self.sink, self.progress, self.rows, self.bidir = (
            form,
            sink,
            progress,
            rows,
            bidir,
        )
        self.lock = threading.Lock()
        self.intervals: list[Interval] = []
        self.start_info: dict[str, Any] = {}

    def _write(self, text: str) -> None:
        self.sink.write(text + "\n")
        self.sink.flush()

    def _label(self, id_: int | None, direction: str) -> str:
        name = "[SUM]" if id_ is None else f"[{id_:3d}]"
        return name + (ROLE[direction] if self.bidir else "")

    def start(self, info: dict[str, Any]) -> None:
        self.start_info = info
        if self.form == "json-stream":
            self._write(json.dumps({"event": "start", "data": info}))
        elif self.form == "text":
            self._write(info["headline"])
            if self.rows:
                self._write(HEADER)

    def interval(self, interval: Interval) -> None:
        with self.lock:
            self.intervals.append(interval)
            if self.progress:
                sys.stderr.write(progress_line(interval) + "\n")
                sys.stderr.flush()
            if self.form == "json-stream" and self.rows:
                self._write(json.dumps({"event": "interval", "data": interval.model_dump()}))
            elif self.form == "text" and self.rows:
                for f in interval.streams:
                    self._write(interval_row(self._label(f.id, interval.direction), f))
                if len(interval.streams) > 1:
                    self._write(interval_row(self._label(None, interval.direction), interval.sum))

    def end(self, all_totals: list[DirectionTotals], result_dir: str) -> None:
        end = {t.direction: t.model_dump() for t in all_totals}
        if self.form == "json-stream":
            self._write(json.dumps({"event": "end", "data": end}))
        elif self.form == "json":
            document = {
                "start": self.start_info,
                "intervals": [i.model_dump() for i in self.intervals if self.rows],
                "end": end,
            }
            self._write(json.dumps(document, indent=2))
        else:
            self._table(all_totals)
            self._write(f"result → {result_dir}")

    def _table(self, all_totals: list[DirectionTotals]) -> None:
        self._write(RULE)
        self._write(HEADER.rsplit("Retr", 1)[0] + "Retr")
        for t in all_totals:
            for s in t.streams:
                label = self._label(s.id, t.direction)
                self._write(total_row(label, t.omit_s, s.sender, "sender"))
                self._write(total_row(label, t.omit_s, s.receiver, "receiver"))
            if len(t.streams) > 1:
                label = self._label(None, t.direction)
                self._write(total_row(label, t.omit_s, t.sum_sent, "sender"))
                self._write(total_row(label, t.omit_s, t.sum_received, "receiver"))
