"""Quantities as people write them: "250Mbps", "42ms", "1.5MB", "100pkt", "20%bdp".

Each parser returns the text as given next to its value in base units (bits per second,
nanoseconds, bytes, packets), so messages and saved results can quote the user while the core
gets exact integers. Parsers raise ValueError with a reason meant to follow the quoted value,
as in "'42' is missing a unit (e.g. 42ms)". A bare number is never guessed to be in some unit.

Every quantity has a range (`MAX_*` below), checked on the number as written before it is
converted, so no value can overflow the core's integers or make a derived quantity infinite,
and a short string with a huge exponent ("1e999999us") costs no time to refuse.
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

# Ranges, in base units: far beyond any path worth simulating, far below the core's u64 limits
# (times add up: start + duration + delays stay below 2^64 ns, about 584 years).
MAX_RATE_BPS = 10**15  # 1 Pb/s
MAX_TIME_NS = 10**6 * 10**9  # 1,000,000 s, about 11.6 days
MAX_SIZE_BYTES = 10**15  # 1 PB
MAX_PACKETS = 10**9
MAX_BDP_PERCENT = 10**6
# Decimal exponents beyond this are refused before any arithmetic: converting "1e999990" to
# an integer takes minutes.
_MAX_EXPONENT = 30

# ASCII digits only: `\d` would also take "１０" (fullwidth) or "١٠" (Arabic-Indic) as ten.
_NUMBER_AND_UNIT = re.compile(
    r"\s*([-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?)\s*(\S*)\s*", re.ASCII
)


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
    _at_most(bps, MAX_RATE_BPS, "1000Tbps")
    return Rate(str(value), bps)


def parse_duration(value: object) -> Duration:
    """A time, possibly negative: callers decide which signs make sense for their field."""
    number, unit = _number_and_unit(value, example_unit="ms")
    ns = round(number * _unit_factor(unit, TIME_UNITS, "time"))
    _at_most(abs(ns), MAX_TIME_NS, "1000000s")
    return Duration(str(value), ns)


def parse_size(value: object) -> Size:
    """A size in bytes; a bare integer counts bytes (sizes have no other natural unit)."""
    if isinstance(value, int) and not isinstance(value, bool):
        _at_most(abs(value), MAX_SIZE_BYTES, "1PB")
        return Size(value, value)
    number, unit = _number_and_unit(value, example_unit="B")
    size = round(number * _unit_factor(unit, SIZE_UNITS, "size"))
    _at_most(abs(size), MAX_SIZE_BYTES, "1PB")
    return Size(str(value), size)


def parse_buffer(value: object) -> Buffer:
    """A limit written as packets ("100pkt"), bytes ("1.5MB") or a share of the BDP ("20%bdp")."""
    number, unit = _number_and_unit(value, example_unit="pkt")
    if unit in PACKET_UNITS:
        if number != number.to_integral_value() or number < 1:
            raise ValueError("must be a whole number of packets, at least 1")
        _at_most(int(number), MAX_PACKETS, f"{MAX_PACKETS}pkt")
        return Buffer(str(value), pkts=int(number))
    if unit == BDP_UNIT:
        if number <= 0:
            raise ValueError("must be a positive percentage of the BDP")
        _at_most(number, MAX_BDP_PERCENT, f"{MAX_BDP_PERCENT}%bdp")
        return Buffer(str(value), bdp_percent=float(number))
    if unit not in SIZE_UNITS:
        sizes = ", ".join(SIZE_UNITS)
        raise ValueError(f"has an unknown unit '{unit}' (use pkt, {BDP_UNIT} or a size in {sizes})")
    size = round(number * SIZE_UNITS[unit])
    if size <= 0:
        raise ValueError("must be a positive size")
    _at_most(size, MAX_SIZE_BYTES, "1PB")
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
    decimal = Decimal(number)
    if decimal and abs(decimal.adjusted()) > _MAX_EXPONENT:
        raise ValueError("is out of range (a number between 1e-30 and 1e30 with a unit)")
    return decimal, unit


def _at_most(amount: int | Decimal, limit: int, limit_given: str) -> None:
    if amount > limit:
        raise ValueError(f"is out of range (at most {limit_given})")


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
