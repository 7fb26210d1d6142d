"""Response functions of Reno, HighSpeed and Scalable: average window against random loss.

    python bench/response_function.py [--losses 400]

One flow, random loss p from 1e-2 to 1e-6 on a 10 Gb/s, 100 ms path whose buffer never fills
(BDP 83,000 packets, so every window here fits), an ACK per packet as the RFCs' models assume.
The average window is goodput × RTT over the last three quarters of a run long enough for
about `--losses` loss events. Printed next to the published functions (algorithms.md §10.3):
Reno 1.2/√p, HighSpeed 0.12/p^0.835 above 38 packets (RFC 3649, Reno's below), Scalable
0.08/p above its low window of 100 packets and AIMD(1, 1/8) below it, as in Linux.
A benchmark: it prints, it asserts nothing; the tests in crates/sim/tests/response_function.rs
hold the figures to ±25 %.
"""

from __future__ import annotations

import argparse
import math
from typing import Any

from tcpeval import simulate
from tcpeval.models import (
    hstcp_response_window_pkts,
    reno_response_window_pkts,
    scalable_response_window_pkts,
)

RTT_S = 0.1
LOSSES = (1e-2, 1e-3, 1e-4, 1e-5, 1e-6)
SCALABLE_LOW_WINDOW_PKTS = 100


def scalable_published(p: float) -> float:
    """Below its low window Linux Scalable adds one packet per RTT but still gives up 1/8 on
    a loss (algorithms.md §2): AIMD(1, 0.125), whose window is sqrt(a(2 − b)/(2bp))."""
    a, b = 1.0, 0.125
    below = math.sqrt(a * (2 - b) / (2 * b * p))
    return below if below < SCALABLE_LOW_WINDOW_PKTS else scalable_response_window_pkts(p)


PUBLISHED = {
    "reno": reno_response_window_pkts,
    "highspeed": hstcp_response_window_pkts,
    "scalable": scalable_published,
}


def scenario(cc: str, p: float, duration_s: int) -> dict[str, Any]:
    return {
        "name": f"response-{cc}-{p:g}",
        "duration": f"{duration_s}s",
        "sample_interval": "1s",
        "bottleneck": {"rate": "10Gbps", "queue": "1000000pkt", "loss": p},
        "flow": [{"cc": cc, "rtt": "100ms", "delayed_ack": False}],
    }


def average_window(cc: str, p: float, losses: int) -> float:
    expected = PUBLISHED[cc](p)
    duration_s = max(20, round(losses / p / expected * RTT_S))
    flows = simulate(scenario(cc, p, duration_s)).flows
    steady = flows[flows.t_s >= duration_s / 4]
    delivered = steady.delivered_bytes.iloc[-1] - steady.delivered_bytes.iloc[0]
    seconds = steady.t_s.iloc[-1] - steady.t_s.iloc[0]
    return delivered / 1448 / seconds * RTT_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--losses", type=int, default=400, help="loss events per run")
    losses = parser.parse_args().losses
    print(f"{'p':>8}" + "".join(f"{cc:>24}" for cc in PUBLISHED))
    print(f"{'':>8}" + "".join(f"{'sim / published (ratio)':>24}" for _ in PUBLISHED))
    for p in LOSSES:
        cells = []
        for cc, published in PUBLISHED.items():
            w, model = average_window(cc, p, losses), published(p)
            cells.append(f"{w:>9.0f} / {model:>7.0f} ({w / model:.2f})")
        print(f"{p:>8.0e}" + "".join(f"{c:>24}" for c in cells))


if __name__ == "__main__":
    main()
