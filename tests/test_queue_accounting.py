"""How a queue counts (`queue_counts`, scenario/queue.py): resolved, stated in every result,
and what it does to the MTU case of the studies."""

from __future__ import annotations

import pytest

from tcpeval import backends
from tcpeval.scenario import parse_scenario

JUMBO_MSS, SMALL_MSS = "8948B", "2948B"  # 9000- and 3000-byte packets on the wire


def mtu_case(queue: str, counts: str | None, duration: str = "600s") -> dict:
    """The seeds' MTU case: Reno with 9000-byte against Reno with 3000-byte packets, sharing
    1 Gb/s at 117 ms (measured there over 7000 s: 464 against 243 Mb/s)."""
    bottleneck = {"rate": "1Gbps", "queue": queue}
    if counts is not None:
        bottleneck["queue_counts"] = counts
    return {
        "name": "mtu",
        "duration": duration,
        "bottleneck": bottleneck,
        "flow": [
            {"cc": "reno", "rtt": "117ms", "mss": JUMBO_MSS},
            {"cc": "reno", "rtt": "117ms", "mss": SMALL_MSS},
        ],
    }


@pytest.mark.parametrize(
    ("counts", "queue"),
    [
        (None, {"counts": "bytes", "limit_pkts": 325, "limit_bytes": 2_925_000}),
        ("packets", {"counts": "packets", "limit_pkts": 325, "limit_bytes": 2_925_000}),
    ],
)
@pytest.mark.parametrize("backend", ["sim", "model"])
def test_every_backend_states_how_its_queue_counted(
    backend: str, counts: str | None, queue: dict
) -> None:
    # 20% of 1 Gb/s × 117 ms is 325 packets of 9000 B, the largest crossing the link: counted
    # in packets, 325 of any size; in bytes (the default for %bdp), 2.925 MB of any sizes.
    result = backends.run(parse_scenario(mtu_case("20%bdp", counts, "10s")), backend)
    summary = result.summary
    stated = queue | {"packet_bytes": 9000}
    assert summary["bottleneck"]["queue"] == stated
    assert summary["scenario"]["bottleneck"]["queue_counts"] == queue["counts"]


def test_a_reverse_direction_states_its_links_queue() -> None:
    data = mtu_case("100pkt", None, "2s")
    data["flow"][1]["direction"] = "reverse"
    summary = backends.run(parse_scenario(data), "sim").summary
    queues = {link["name"]: link["queue"] for link in summary["links"]}
    assert queues["bottleneck"] == queues["bottleneck:reverse"]
    assert queues["bottleneck"]["counts"] == "packets"
    assert queues["bottleneck"]["limit_bytes"] == 100 * 9000


def goodput_ratio(queue: str, counts: str) -> float:
    """The jumbo flow's goodput over the small one's, over the second half of the run."""
    data = mtu_case(queue, counts) | {"measure": "second half"}
    jumbo, small = backends.run(parse_scenario(data), "sim").summary["flows"]
    return jumbo["goodput_mbps"] / small["goodput_mbps"]


@pytest.mark.parametrize("queue", ["20%bdp", "100%bdp"])
def test_counting_packets_gives_jumbo_frames_the_larger_share(queue: str) -> None:
    # The same %bdp holds the same number of 9000-byte packets either way; counted in packets,
    # a 3000-byte packet takes a whole slot, counted in bytes a third of one, and a byte queue
    # that a jumbo would overflow still takes small packets (bfifo, tests/test_kernel_fifo.py).
    # So the jumbo flow's share must be larger under packet counting. Measured on the RFC
    # sender (600 s, second half): 20%bdp 7.84 against 2.55, 100%bdp 6.04 against 2.67. The
    # margin asserted, 1.2x, is the ordering with room for noise, not a match to the seeds'
    # 1.91 (their sender was Linux 2.4).
    by_packets = goodput_ratio(queue, "packets")
    by_bytes = goodput_ratio(queue, "bytes")
    assert by_packets > 1.0
    assert by_packets > 1.2 * by_bytes, (by_packets, by_bytes)
