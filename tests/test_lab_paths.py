"""Paths like real ones in the lab: delay in one direction only, reordering and a path-MTU
black hole, each made by the emulator in namespaces this test makes, and what the kernel's
TCP does on them. Each run is a few seconds of real time."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from lab_runs import checks_of, scenario, valid_run
from tcpeval.lab.checks import binomial_99
from tcpeval.result import Result

MS = 1_000_000
# TCP_INFO's min_rtt beyond the emulated one: the veths, the emulator's relay and the
# receiving stack, well under a millisecond on an idle host (docs/lab.md); 1 ms leaves room
# for a busy one, and is far from the 20 ms a misplaced delay would change nothing by but a
# lost one would.
MIN_RTT_SLACK_MS = 1.0
# The emulator's added delay beyond the asked one-way delay: its self-check's bound on the
# p99 (0.5 ms), applied to the median here.
ONE_WAY_SLACK_NS = 500_000


def last_per_flow(result: Result, column: str) -> pd.Series:
    return result.flows.groupby("flow")[column].last()


def endpoint_delays_ns(result: Result, ip: str) -> dict[str, tuple[int, int]]:
    """Per emulator direction, the delay asked for the host at `ip` and the median added."""
    stats = result.summary["backend"]["details"]["emulator"]
    found = {}
    for direction in ("forward", "reverse"):
        (endpoint,) = [e for e in stats[direction]["endpoints"] if e["ip"] == ip]
        found[direction] = (endpoint["asked_delay_ns"], endpoint["added_delay_ns"]["p50"])
    return found


def test_all_of_the_delay_one_way_keeps_the_rtt_and_the_emulator_applies_it_so():
    """Two 40 ms flows side by side, one with all 40 ms on its data direction (its ACKs
    cross at once), one split half and half. Both see the same minimum RTT; the emulator's
    record shows each direction's delay as asked, 40 / 0 against 20 / 20 ms."""
    flows: list[dict[str, Any]] = [
        {"cc": "cubic", "rtt": "40ms", "forward_delay": "40ms", "window": "50pkt"},
        {"cc": "cubic", "rtt": "40ms", "window": "50pkt"},
    ]
    bottleneck = {"rate": "100Mbps", "queue": "100%bdp"}
    result = valid_run(scenario(flow=flows, bottleneck=bottleneck, duration="3s"))
    min_rtt_ms = [f["min_rtt_ms"] for f in result.summary["flows"]]
    print(f"min RTT {min_rtt_ms} ms")
    for measured in min_rtt_ms:
        assert 40.0 <= measured <= 40.0 + MIN_RTT_SLACK_MS
    config = result.summary["backend"]["details"]["emulator_config"]
    one_way, split = (e["ip"] for e in config["endpoints"][:2])
    for ip, asked in ((one_way, (40 * MS, 0)), (split, (20 * MS, 20 * MS))):
        delays = endpoint_delays_ns(result, ip)
        print(f"{ip}: {delays}")
        for (asked_ns, added_ns), expected_ns in zip(delays.values(), asked, strict=True):
            assert asked_ns == expected_ns
            assert expected_ns <= added_ns <= expected_ns + ONE_WAY_SLACK_NS
    # Nothing reorders this path: the senders see no reordering, the emulator held none back.
    assert last_per_flow(result, "reord_seen").sum() == 0
    assert result.summary["bottleneck"]["reordered_pkts"] == 0


def test_reordering_in_the_emulator_is_seen_by_the_kernels_sender():
    """1% of the packets held back 3 ms on a 100 Mb/s, 20 ms path: 25 packets overtake each,
    and the sender's TCP_INFO counts reordering. The emulator holds back its share of the
    packets that left the bottleneck, within the binomial 99% interval (the self-check's
    bound, asserted here as well), and the run stays valid: nothing is lost to it."""
    bottleneck = {
        "rate": "100Mbps",
        "queue": "100%bdp",
        "reorder": {"share": 0.01, "delay": "3ms"},
    }
    flow = [{"cc": "cubic", "rtt": "20ms"}]
    result = valid_run(scenario(flow=flow, bottleneck=bottleneck, duration="4s"))
    forward = result.summary["backend"]["details"]["emulator"]["forward"]
    departed = forward["sent_pkts"] + forward["held_at_end_pkts"]
    held = forward["reordered_pkts"]
    reord_seen = int(last_per_flow(result, "reord_seen").sum())
    print(f"held back {held} of {departed}; reord_seen {reord_seen}")
    low, high = binomial_99(departed, 0.01)
    assert math.floor(low) <= held <= math.ceil(high)
    assert reord_seen > 0
    assert checks_of(result)["packets held back"]["ok"]


def black_hole_run(mtu_probing: bool) -> Result:
    """A 1400-byte black hole on a 100 Mb/s, 20 ms path; the flow's segments are 1448 bytes
    (1500-byte packets), its SYN and ACKs small."""
    bottleneck = {"rate": "100Mbps", "queue": "100%bdp", "mtu_black_hole": 1400}
    flow = [{"cc": "cubic", "rtt": "20ms", "mtu_probing": mtu_probing}]
    return valid_run(scenario(flow=flow, bottleneck=bottleneck, duration="5s"))


def test_without_mtu_probing_a_black_hole_lets_nothing_through():
    """With net.ipv4.tcp_mtu_probing = 0 (Linux's default) every full segment vanishes: the
    connection opens, then delivers nothing, backing off its timeouts."""
    result = black_hole_run(mtu_probing=False)
    link, (flow,) = result.summary["bottleneck"], result.summary["flows"]
    print(f"{flow}\n{link}")
    assert flow["bytes_delivered"] == 0
    assert link["black_hole_drops"] > 0
    assert link["drops"] == link["black_hole_drops"]


def test_with_mtu_probing_linux_finds_the_black_hole_and_falls_back_to_a_smaller_mss():
    """With net.ipv4.tcp_mtu_probing = 1 Linux takes repeated timeouts for a black hole
    (RFC 4821 §7.7; `tcp_mtu_probing` in tcp_timer.c, after tcp_retries1 = 3 of them) and
    drops its MSS to search from tcp_base_mss (1024): segments then fit, and data flows."""
    result = black_hole_run(mtu_probing=True)
    link, (flow,) = result.summary["bottleneck"], result.summary["flows"]
    final_mss = int(last_per_flow(result, "snd_mss_bytes").iloc[0])
    print(f"final MSS {final_mss}\n{flow}\n{link}")
    assert final_mss + 52 <= 1400
    assert flow["bytes_delivered"] > 1_000_000
    assert link["black_hole_drops"] > 0
