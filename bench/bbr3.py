"""bbr3 (BBRv3, draft-ietf-ccwg-bbr) beside BBR v1 on one flow: the figures docs/bbr3.md quotes.

    python bench/bbr3.py [--rates 100Mbps 1Gbps 10Gbps] [--rtts 10ms 100ms 300ms]

Prints three tables, each case simulated once (the simulator is deterministic):

1. a clean path (drop-tail queue of 1 BDP): utilisation and mean queue over the second half
   of a 60 s run, bbr3 and bbr side by side;
2. random loss at 100 Mb/s, 100 ms: bbr3's goodput over the second half at each loss rate
   as a share of its loss-free goodput (the draft's 2 % loss threshold, §2.8);
3. a shallow buffer (10 % of the BDP): retransmissions per packet sent over the whole run,
   bbr3's against bbr's, and their ratio;
4. one flow against one CUBIC flow, 40 ms, buffers of 0.1 to 16 BDP: the share of the
   goodput bbr3 takes, and bbr's at the same points (a slice of
   examples/grids/bbr3-fairness.toml).

A benchmark prints numbers for people to compare; it asserts nothing (the goals are asserted
by tests/test_sim_bbr3.py on shorter runs).
"""

from __future__ import annotations

import argparse
from typing import Any

from tcpeval import simulate

LOSS_RATES = (0.0, 0.005, 0.01, 0.015, 0.03, 0.05)


def one_flow(cc: str, rate: str, rtt: str, queue: str = "100%bdp", loss: float = 0.0) -> Any:
    """One flow of `cc` alone for 60 s, measured over the second half."""
    return simulate(
        {
            "name": f"bbr3-bench-{cc}-{rate}-{rtt}",
            "duration": "60s",
            "measure": "second half",
            "sample_interval": "100ms",
            "bottleneck": {"rate": rate, "queue": queue, "loss": loss},
            "flow": [{"cc": cc, "rtt": rtt}],
        }
    )


def clean_path(rates: list[str], rtts: list[str]) -> None:
    print("clean path, queue 1 BDP: utilisation and mean queue (packets), second half of 60 s")
    columns = ("bbr3 util", "bbr util", "bbr3 queue", "bbr queue")
    print(f"{'rate':>8}{'rtt':>7}" + "".join(f"{name:>12}" for name in columns))
    for rate in rates:
        for rtt in rtts:
            v3, v1 = (one_flow(cc, rate, rtt).summary["bottleneck"] for cc in ("bbr3", "bbr"))
            print(
                f"{rate:>8}{rtt:>7}{v3['utilization']:>12.3f}{v1['utilization']:>12.3f}"
                f"{v3['mean_queue_pkts']:>12.0f}{v1['mean_queue_pkts']:>12.0f}"
            )


def random_loss() -> None:
    print("\nrandom loss, 100 Mb/s, 100 ms: bbr3 goodput (Mb/s) and its share of loss-free")
    base = None
    for loss in LOSS_RATES:
        goodput = one_flow("bbr3", "100Mbps", "100ms", loss=loss).summary["flows"][0]
        mbps = goodput["goodput_mbps"]
        base = base or mbps
        print(f"  loss {loss:>6.1%}: {mbps:7.1f} Mb/s, {mbps / base:6.1%} of loss-free")


def shallow_buffer(rates: list[str], rtts: list[str]) -> None:
    print("\nqueue 10 % of the BDP: retransmissions per packet sent, whole 60 s run")
    print(f"{'rate':>8}{'rtt':>7}{'bbr3':>9}{'bbr':>9}{'bbr3/bbr':>10}")
    for rate in rates:
        for rtt in rtts:
            shares = []
            for cc in ("bbr3", "bbr"):
                summary = one_flow(cc, rate, rtt, queue="10%bdp").summary
                sent = summary["backend"]["details"]["packets_sent"]
                shares.append(summary["flows"][0]["retransmits"] / sent)
            v3, v1 = shares
            print(f"{rate:>8}{rtt:>7}{v3:>9.4f}{v1:>9.4f}{v3 / v1:>10.2f}")


BUFFERS = ("10%bdp", "50%bdp", "100%bdp", "200%bdp", "400%bdp", "800%bdp", "1600%bdp")


def sharing_with_cubic(rates: list[str]) -> None:
    print("\none flow against one cubic flow, 40 ms: its share of the goodput, second half of 60 s")
    print(f"{'rate':>8}{'queue':>10}{'bbr3':>8}{'bbr':>8}")
    for rate in rates:
        for queue in BUFFERS:
            shares = []
            for cc in ("bbr3", "bbr"):
                flows = simulate(
                    {
                        "name": f"bbr3-bench-{cc}-cubic-{rate}-{queue}",
                        "duration": "60s",
                        "measure": "second half",
                        "bottleneck": {"rate": rate, "queue": queue},
                        "flow": [{"cc": cc, "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}],
                    }
                ).summary["flows"]
                goodputs = [flow["goodput_mbps"] for flow in flows]
                shares.append(goodputs[0] / sum(goodputs))
            print(f"{rate:>8}{queue:>10}{shares[0]:>8.2f}{shares[1]:>8.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rates", nargs="+", default=["100Mbps", "1Gbps"])
    parser.add_argument("--rtts", nargs="+", default=["10ms", "100ms", "300ms"])
    args = parser.parse_args()
    clean_path(args.rates, args.rtts)
    random_loss()
    shallow_buffer(args.rates, args.rtts)
    sharing_with_cubic(args.rates)


if __name__ == "__main__":
    main()
