"""Figures for the probe: memory-to-memory throughput on a veth pair, against iperf3.

Prints, for 1 and 8 streams on the same pair of namespaces in the same run: tcpeval-probe's
rate, iperf3's rate and their ratio; and the cost of the 10 ms TCP_INFO history (the probe's
rate without sampling). Needs root; the namespaces are made and removed here.

    .venv/bin/python bench/bench_probe.py [--seconds 5] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path

from tcpeval.probe import TcpSettings, probe_binary
from tcpeval.probe.netns import Hosts, Lab, lab, secret_file

IPERF3_PORT = 5201


def probe_rate_gbps(the_lab: Lab, hosts: Hosts, server: str, secret: Path, streams: int,
                    seconds: int, sample: bool, out: Path) -> float:  # fmt: skip
    settings = TcpSettings(
        server=server, secret_file=str(secret), streams=streams, duration=f"{seconds}s"
    )
    extra = [] if sample else ["--no-samples"]
    the_lab.in_ns(hosts.client_ns, str(probe_binary()), "tcp", *settings.arguments(), *extra,
                  "--out", str(out))  # fmt: skip
    report = json.loads((out / "summary.json").read_text())
    return sum(s["bytes_delivered"] * 8 / s["end_ns"] for s in report["streams"])


def iperf3_rate_gbps(the_lab: Lab, hosts: Hosts, streams: int, seconds: int) -> float:
    server = the_lab.spawn(hosts.server_ns, "iperf3", "-s", "-1", "-B", hosts.server_ip,
                           "-p", str(IPERF3_PORT))  # fmt: skip
    the_lab.wait_listening(server, hosts.server_ns, IPERF3_PORT)
    client = ["iperf3", "-c", hosts.server_ip, "-p", str(IPERF3_PORT), "-t", str(seconds)]
    text = the_lab.in_ns(hosts.client_ns, *client, "-P", str(streams), "-J")
    server.wait(timeout=30)
    return json.loads(text)["end"]["sum_received"]["bits_per_second"] / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    figures: dict[str, list[float]] = {}
    with lab() as the_lab, tempfile.TemporaryDirectory() as tmp:
        hosts = the_lab.pair()
        secret = secret_file(Path(tmp))
        server = the_lab.server(hosts.server_ns, hosts.server_ip, secret)
        for repeat in range(args.repeats):
            for streams in (1, 8):
                # Alternate the tools within a repeat so drift hits both alike.
                runs = {
                    f"probe {streams}": lambda s=streams, r=repeat: probe_rate_gbps(
                        the_lab, hosts, server, secret, s, args.seconds, True,
                        Path(tmp) / f"p{s}{r}"),
                    f"iperf3 {streams}": lambda s=streams: iperf3_rate_gbps(
                        the_lab, hosts, s, args.seconds),
                    f"probe {streams} no history": lambda s=streams, r=repeat: probe_rate_gbps(
                        the_lab, hosts, server, secret, s, args.seconds, False,
                        Path(tmp) / f"n{s}{r}"),
                }  # fmt: skip
                for name, run in runs.items():
                    figures.setdefault(name, []).append(run())
    print(f"veth pair, memory to memory, {args.seconds} s per run, {args.repeats} repeats "
          "(median; min–max)")  # fmt: skip
    for name, values in figures.items():
        print(f"  {name:24s} {statistics.median(values):7.2f} Gb/s "
              f"({min(values):.2f}–{max(values):.2f})")  # fmt: skip
    for streams in (1, 8):
        ours = statistics.median(figures[f"probe {streams}"])
        theirs = statistics.median(figures[f"iperf3 {streams}"])
        bare = statistics.median(figures[f"probe {streams} no history"])
        print(f"  {streams} stream(s): probe / iperf3 = {ours / theirs:.3f}; "
              f"with / without 10 ms history = {ours / bare:.3f}")  # fmt: skip


if __name__ == "__main__":
    main()
