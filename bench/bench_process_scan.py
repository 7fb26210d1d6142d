"""What naming the other processes costs the probe: the two passes over /proc each end makes
per TCP test (crates/probe/src/other_processes.rs), with many processes on the host.

Starts `--processes` idle processes (`sleep`), runs a 1 s `probe tcp` between two namespaces
and prints each end's `others_scan_cpu_ns` (the CPU time of both passes) beside the
number of processes /proc showed. Needs root; the namespaces and the processes are removed here.

    .venv/bin/python bench/bench_process_scan.py [--processes 500] [--repeats 3]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
from pathlib import Path

from tcpeval.probe import TcpSettings, run_tcp
from tcpeval.probe.netns import lab, secret_file


def scan_ms(repeats: int) -> list[tuple[float, float]]:
    """(client, server) CPU time of the scans in ms, one pair per test."""
    figures = []
    with tempfile.TemporaryDirectory() as tmp, lab() as the_lab:
        hosts = the_lab.pair()
        secret = secret_file(Path(tmp))
        server = the_lab.server(hosts.server_ns, hosts.server_ip, secret)
        settings = TcpSettings(server=server, secret_file=str(secret), duration="1s")
        for _ in range(repeats):
            result = run_tcp(settings, wrapper=["ip", "netns", "exec", hosts.client_ns])
            cpu = result.summary["backend"]["details"]["cpu"]
            ends = (cpu[end]["others_scan_cpu_ns"] / 1e6 for end in ("client", "server"))
            figures.append(tuple(ends))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    sleepers = [subprocess.Popen(["sleep", "600"]) for _ in range(args.processes)]
    try:
        seen = sum(1 for name in os.listdir("/proc") if name.isdigit())
        for client_ms, server_ms in scan_ms(args.repeats):
            print(f"{seen} processes: {client_ms:.2f} ms CPU (client), {server_ms:.2f} ms (server)")
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()


if __name__ == "__main__":
    main()
