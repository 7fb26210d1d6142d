"""Quantities as people write them: "250Mbps", "42ms", "1.5MB", "100pkt", "20%bdp".

Each parser returns the text as given next to its value in base units (bits per second,
nanoseconds, bytes, packets), so messages and saved results can quote the user while the core
gets exact integers. Parsers raise ValueError with a reason meant to follow the quoted value,
as in "'42' is missing a unit (e.g. 42ms)". A bare number is never guessed to be in some unit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

RATE_UNITS = {
    "bps": 1,
    "kbps": 10**3,
    "Kbps": 10**3,
    "Mbps": 10**6,
    "Gbps": 10**9,
    "Tbps": 10**12,
    "b/s": 1,
    "kb/s": 10**3,
    "Kb/s": 10**3,
    "Mb/s": 10**6,
    "Gb/s": 10**9,
    "Tb/s": 10**12,
}
TIME_UNITS = {
    "ns": 1,
    "us": 10**3,
    "µs": 10**3,
    "ms": 10**6,
    "s": 10**9,
    "min": 60 * 10**9,
    "h": 3600 * 10**9,
}
# Decimal SI prefixes as in network data sheets, binary ones when asked for by name.
SIZE_UNITS = {
    "B": 1,
    "KB": 10**3,
    "kB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
}
PACKET_UNITS = ("pkt", "pkts")
BDP_UNIT = "%bdp"

_NUMBER_AND_UNIT = re.compile(r"\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(\S*)\s*")


@dataclass(frozen=True)
class Rate:
    given: str
    bps: int


@dataclass(frozen=True)
class Duration:
    given: str
    ns: int

    @property
    def seconds(self) -> float:
        return self.ns / 1e9


@dataclass(frozen=True)
class Size:
    given: str | int
    bytes: int


@dataclass(frozen=True)
class Buffer:
    """A queue or window limit: exactly one of packets, bytes or a percentage of the BDP."""

    given: str
    pkts: int | None = None
    bytes: int | None = None
    bdp_percent: float | None = None


def parse_rate(value: object) -> Rate:
    number, unit = _number_and_unit(value, example_unit="Mbps")
    bps = round(number * _unit_factor(unit, RATE_UNITS, "rate"))
    if bps <= 0:
        raise ValueError("must be a positive rate")
    return Rate(str(value), bps)


def parse_duration(value: object) -> Duration:
    """A time, possibly negative: callers decide which signs make sense for their field."""
    number, unit = _number_and_unit(value, example_unit="ms")
    return Duration(str(value), round(number * _unit_factor(unit, TIME_UNITS, "time")))


def parse_size(value: object) -> Size:
    """A size in bytes; a bare integer counts bytes (sizes have no other natural unit)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return Size(value, value)
    number, unit = _number_and_unit(value, example_unit="B")
    return Size(str(value), round(number * _unit_factor(unit, SIZE_UNITS, "size")))


def parse_buffer(value: object) -> Buffer:
    """A limit written as packets ("100pkt"), bytes ("1.5MB") or a share of the BDP ("20%bdp")."""
    number, unit = _number_and_unit(value, example_unit="pkt")
    if unit in PACKET_UNITS:
        if number != number.to_integral_value() or number < 1:
            raise ValueError("must be a whole number of packets, at least 1")
        return Buffer(str(value), pkts=int(number))
    if unit == BDP_UNIT:
        if number <= 0:
            raise ValueError("must be a positive percentage of the BDP")
        return Buffer(str(value), bdp_percent=float(number))
    if unit not in SIZE_UNITS:
        sizes = ", ".join(SIZE_UNITS)
        raise ValueError(f"has an unknown unit '{unit}' (use pkt, {BDP_UNIT} or a size in {sizes})")
    size = round(number * SIZE_UNITS[unit])
    if size <= 0:
        raise ValueError("must be a positive size")
    return Buffer(str(value), bytes=size)


def _number_and_unit(value: object, example_unit: str) -> tuple[Decimal, str]:
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise ValueError(f"must be a number with a unit, e.g. '42{example_unit}'")
    if not isinstance(value, str):
        raise ValueError(f"is missing a unit (e.g. {value}{example_unit})")
    match = _NUMBER_AND_UNIT.fullmatch(value)
    if match is None:
        raise ValueError(f"is not a number with a unit (e.g. 42{example_unit})")
    number, unit = match.groups()
    if not unit:
        raise ValueError(f"is missing a unit (e.g. {number}{example_unit})")
    return Decimal(number), unit


def _unit_factor(unit: str, units: dict[str, int], kind: str) -> int:
    if unit not in units:
        raise ValueError(f"has an unknown {kind} unit '{unit}' (use one of {', '.join(units)})")
    return units[unit]


def format_duration_ns(ns: int) -> str:
    """A time in nanoseconds as a person reads it, in the largest unit it is at least one of:
    10_000_000_000 → "10 s", 200_000_000 → "200 ms", 1_500 → "1.5 µs"."""
    for unit in ("h", "min", "s", "ms", "µs"):
        if abs(ns) >= TIME_UNITS[unit]:
            return f"{ns / TIME_UNITS[unit]:g} {unit}"
    return f"{ns} ns"
