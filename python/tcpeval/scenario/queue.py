"""How a link's queue counts (`queue_counts`): in packets or in bytes, and its limit in both.

A queue of one packet size holds the same packets whichever way it counts; with packets of
several sizes the two differ. Linux's pfifo counts packets and its bfifo bytes, whatever the
sizes (tc-bfifo(8); measured in tests/test_kernel_fifo.py): with 9014- and 3014-byte frames a
20-packet pfifo holds 20 of either (3x the bytes for jumbos), a 60000-byte bfifo 6 jumbos or
19 small frames, and when full still admits a small frame a jumbo would overflow. Routers
size their buffers in bytes or time at the line rate — Juniper's `buffer-size temporal` (the
queue drops beyond interface speed × time, in bytes), the 100-200 ms of memory of its M and T
line cards, IOS XR's `queue-limit` in bytes or ms (packets are taken as 256 bytes); classic
IOS's `queue-limit` counts packets. A share of the BDP is a number of bytes, so `%bdp` (and a
byte size) counts bytes unless the scenario says otherwise; `pkt` counts packets, as pfifo.
Written the other way, a limit is converted at the largest packet crossing the link (headers
included), the size `%bdp` has always been counted in: `20%bdp` is the same number of the
largest packets either way, and smaller packets fill the rest of a byte-counted queue.

Every result states how each link counted: `summary.json`'s `bottleneck.queue` (and each entry
of `links`) is `{counts, limit_pkts, limit_bytes, packet_bytes}`, the limit in both units at
the largest packet size. It matters where sizes mix (jumbo frames against standard ones, ACKs
behind reverse data, CBR of small packets): on the seeds' MTU case (Reno, 1 Gb/s, 117 ms,
7000 s; measured there: 1.91) the 9000/3000 goodput ratio is 1.2–2.4 counted in bytes and
4.5–11 counted in packets, over buffers from 0.5 MB (56 packets of 9000 B) to one BDP
(14.6 MB) (`bench/mtu_buffer.py`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from tcpeval.models import bdp_pkts
from tcpeval.scenario.errors import ScenarioError
from tcpeval.units import MAX_PACKETS, Buffer

QueueCounts = Literal["packets", "bytes"]


@dataclass(frozen=True)
class Crossing:
    """What crosses a link: the largest base RTT of its flows (None if no flow crosses it) and
    the largest packet on the wire."""

    largest_rtt_s: float | None
    largest_packet_bytes: int


def counts(queue: Buffer, asked: QueueCounts | None) -> QueueCounts:
    """How the queue counts: as asked, else as it is written (`pkt` packets, else bytes)."""
    if asked is not None:
        return asked
    return "packets" if queue.pkts is not None else "bytes"


def queue_limit(
    field: str, queue: Buffer, asked: QueueCounts | None, rate_bps: int, crossing: Crossing
) -> tuple[int | None, int | None]:
    """The buffer as the core's (queue_pkts, queue_bytes), exactly one of them set.

    `%bdp` is taken of the largest base RTT of the flows crossing the link and rounded to
    whole packets of the largest size (never below one); counted in bytes, that many of them.
    """
    packet_bytes = crossing.largest_packet_bytes
    if queue.bytes is not None and queue.bytes < packet_bytes:
        reason = f"is smaller than one packet ({packet_bytes} B with headers)"
        raise ScenarioError(field, queue.given, reason)
    if counts(queue, asked) == "bytes":
        if queue.bytes is not None:
            return None, queue.bytes
        return None, _whole_pkts(field, queue, rate_bps, crossing) * packet_bytes
    if queue.pkts is not None:
        return queue.pkts, None
    return _whole_pkts(field, queue, rate_bps, crossing), None


def accounting(resolved_link: dict[str, Any], packet_bytes: int) -> dict[str, Any]:
    """How a resolved link's queue counted, for a result: the unit, the limit in it, and the
    limit in the other unit at `packet_bytes` (the largest packet crossing the link) — the
    whole packets of that size a byte limit holds, the bytes of that many packets."""
    pkts, limit_bytes = resolved_link["queue_pkts"], resolved_link["queue_bytes"]
    if pkts is not None:
        return {
            "counts": "packets",
            "limit_pkts": pkts,
            "limit_bytes": pkts * packet_bytes,
            "packet_bytes": packet_bytes,
        }
    return {
        "counts": "bytes",
        "limit_pkts": limit_bytes // packet_bytes,
        "limit_bytes": limit_bytes,
        "packet_bytes": packet_bytes,
    }


def buffer_pkts(field: str, buffer: Buffer, rate_bps: int, crossing: Crossing) -> float:
    """A queue length in (possibly fractional) packets of the largest size crossing the link."""
    if buffer.pkts is not None:
        return float(buffer.pkts)
    if buffer.bytes is not None:
        return buffer.bytes / crossing.largest_packet_bytes
    if crossing.largest_rtt_s is None or buffer.bdp_percent is None:
        reason = "is a share of the BDP, but no flow crosses this link (use pkt or bytes)"
        raise ScenarioError(field, buffer.given, reason)
    bdp = bdp_pkts(rate_bps, crossing.largest_rtt_s, crossing.largest_packet_bytes)
    return buffer.bdp_percent / 100 * bdp


def round_pkts(pkts: float, field: str, given: str) -> int:
    """A packet count rounded to the nearest packet, never below one; `field` and the value
    `given` there are named when the count is beyond MAX_PACKETS (a share of a huge BDP)."""
    if not pkts <= MAX_PACKETS:
        reason = f"is {pkts:.3g} packets on this path (at most {MAX_PACKETS:,})"
        raise ScenarioError(field, given, reason)
    return max(1, math.floor(pkts + 0.5))


def _whole_pkts(field: str, queue: Buffer, rate_bps: int, crossing: Crossing) -> int:
    return round_pkts(buffer_pkts(field, queue, rate_bps, crossing), field, queue.given)
