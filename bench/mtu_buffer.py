"""The seeds' MTU case under both queue accountings: Reno with 9000-byte packets
against Reno with 3000-byte packets, sharing 1 Gb/s at 117 ms for 7000 s (measured by Ravot,
DataTAG 2003: 464 against 243 Mb/s, ratio 1.91; link utilization 70.7%).

    .venv/bin/python bench/mtu_buffer.py [--duration 7000s] [--queues 0.5MB 1.5MB 20%bdp 7.3MB]

For each buffer and each way of counting it (`queue_counts` = packets, bytes) prints the
limit as resolved (packets of 9000 B, bytes), each flow's goodput over the whole run, their
ratio, the utilization and each flow's retransmissions. A buffer written in bytes and counted
in packets is that many 9000-byte packets (the largest crossing the link). Prints, asserts
nothing; the simulator is deterministic, so a row repeats exactly on the same code.
"""

from __future__ import annotations

import argparse
import time

from tcpeval import simulate

JUMBO_MSS, SMALL_MSS = "8948B", "2948B"
COUNTS = ("packets", "bytes")


def case(duration: str, queue: str, counts: str) -> dict:
    return {
        "name": f"mtu-{queue}-{counts}",
        "duration": duration,
        "sample_interval": "1s",
        "bottleneck": {"rate": "1Gbps", "queue": queue, "queue_counts": counts},
        "flow": [
            {"cc": "reno", "rtt": "117ms", "mss": JUMBO_MSS},
            {"cc": "reno", "rtt": "117ms", "mss": SMALL_MSS},
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", default="7000s")
    parser.add_argument("--queues", nargs="+", default=["0.5MB", "1.5MB", "20%bdp", "7.3MB"])
    args = parser.parse_args()
    print(f"MTU 9000 vs 3000, reno, 1 Gb/s, 117 ms, {args.duration} (seeds: 464/243 = 1.91)")
    header = f"{'queue':>8} {'counts':>8} {'pkts':>6} {'bytes':>10} {'9000 Mb/s':>10} "
    print(header + f"{'3000 Mb/s':>10} {'ratio':>6} {'util':>6} {'retx':>13} {'wall s':>7}")
    for queue in args.queues:
        for counts in COUNTS:
            started = time.monotonic()
            summary = simulate(case(args.duration, queue, counts)).summary
            limit = summary["bottleneck"]["queue"]
            jumbo, small = summary["flows"]
            retx = f"{jumbo['retransmits']}/{small['retransmits']}"
            print(
                f"{queue:>8} {counts:>8} {limit['limit_pkts']:>6} {limit['limit_bytes']:>10} "
                f"{jumbo['goodput_mbps']:>10.1f} {small['goodput_mbps']:>10.1f} "
                f"{jumbo['goodput_mbps'] / small['goodput_mbps']:>6.2f} "
                f"{summary['bottleneck']['utilization']:>6.3f} {retx:>13} "
                f"{time.monotonic() - started:>7.1f}",
                flush=True,
            )


if __name__ == "__main__":
    main()
