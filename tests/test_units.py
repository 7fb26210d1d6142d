from __future__ import annotations

import re
from collections.abc import Callable

import pytest

from tcpeval.units import parse_buffer, parse_duration, parse_rate, parse_size


@pytest.mark.parametrize(
    ("text", "bps"),
    [
        ("250Mbps", 250_000_000),
        ("1Gbps", 1_000_000_000),
        ("10Gb/s", 10_000_000_000),
        ("500kbps", 500_000),
        ("1.5 Mbps", 1_500_000),
        ("2.5e9bps", 2_500_000_000),
    ],
)
def test_rates_in_bits_per_second(text: str, bps: int) -> None:
    assert parse_rate(text).bps == bps
    assert parse_rate(text).given == text


@pytest.mark.parametrize(
    ("text", "ns"),
    [
        ("42ms", 42_000_000),
        ("120s", 120_000_000_000),
        ("1.5s", 1_500_000_000),
        ("20us", 20_000),
        ("100ns", 100),
        ("2min", 120_000_000_000),
        ("0.1s", 100_000_000),  # exact: no binary-float rounding in the ns digit
    ],
)
def test_times_in_nanoseconds(text: str, ns: int) -> None:
    assert parse_duration(text).ns == ns


@pytest.mark.parametrize(
    ("value", "size"),
    [
        ("1.5MB", 1_500_000),
        ("64KB", 64_000),
        ("1448B", 1448),
        ("1GB", 1_000_000_000),
        ("64KiB", 65_536),
        ("1MiB", 1_048_576),
        ("1GiB", 2**30),
        (1448, 1448),
    ],
)
def test_sizes_in_bytes_decimal_unless_binary(value: str | int, size: int) -> None:
    assert parse_size(value).bytes == size


def test_buffers_in_packets_bytes_or_share_of_bdp() -> None:
    assert parse_buffer("100pkt").pkts == 100
    assert parse_buffer("100pkts").pkts == 100
    assert parse_buffer("1.5MB").bytes == 1_500_000
    assert parse_buffer("20%bdp").bdp_percent == 20.0
    only_packets = parse_buffer("100pkt")
    assert (only_packets.bytes, only_packets.bdp_percent) == (None, None)


@pytest.mark.parametrize(
    ("parse", "value", "reason"),
    [
        (parse_rate, "250", "is missing a unit (e.g. 250Mbps)"),
        (parse_rate, 250, "is missing a unit (e.g. 250Mbps)"),
        (parse_rate, "-5Mbps", "must be a positive rate"),
        (parse_rate, "0Gbps", "must be a positive rate"),
        (parse_rate, "5MBps", "unknown rate unit 'MBps'"),
        (parse_duration, "42", "is missing a unit (e.g. 42ms)"),
        (parse_duration, 42, "is missing a unit (e.g. 42ms)"),
        (parse_duration, "42 parsecs", "unknown time unit 'parsecs'"),
        (parse_duration, "fast", "is not a number with a unit"),
        (parse_duration, True, "must be a number with a unit"),
        (parse_size, "1.5", "is missing a unit"),
        (parse_buffer, "100", "is missing a unit (e.g. 100pkt)"),
        (parse_buffer, "0pkt", "at least 1"),
        (parse_buffer, "1.5pkt", "whole number of packets"),
        (parse_buffer, "-20%bdp", "positive percentage"),
        (parse_buffer, "20%rtt", "unknown unit '%rtt'"),
    ],
)
def test_bad_quantities_say_what_is_wrong(
    parse: Callable[[object], object], value: object, reason: str
) -> None:
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse(value)
