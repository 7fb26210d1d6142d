"""Figures for `tcpeval probe copy`: disk to disk against memory to memory on a veth pair.

Puts and gets one file of --size over --streams streams between two namespaces (both ends on
this machine's disk, under --dir), each followed by the memory-to-memory TCP test and the disk
tests of both ends that `tcpeval probe copy` runs, and prints the rates side by side. Needs
root; the namespaces are made and removed here.

    .venv/bin/python bench/bench_copy.py [--size 1GB] [--streams 4] [--dir /var/tmp]
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from pathlib import Path

from tcpeval.probe.driver import run_copy
from tcpeval.probe.netns import lab, secret_file
from tcpeval.probe.settings import CopySettings
from tcpeval.units import parse_size


def write_random(path: Path, size_bytes: int) -> None:
    chunk = os.urandom(1 << 20)  # one random MiB, repeated: the disk sees no pattern shorter
    with path.open("wb") as f:
        for _ in range(size_bytes // len(chunk)):
            f.write(chunk)
        f.write(chunk[: size_bytes % len(chunk)])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", default="1GB")
    parser.add_argument("--streams", type=int, default=4)
    parser.add_argument("--dir", default="/var/tmp", help="where both ends' files go")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tcpeval-bench-copy-", dir=args.dir))
    try:
        root, local = work / "root", work / "local"
        root.mkdir()
        local.mkdir()
        source = local / "source.bin"
        write_random(source, parse_size(args.size).bytes)
        with lab() as the_lab:
            hosts = the_lab.pair()
            secret = secret_file(work)
            server = the_lab.server(hosts.server_ns, hosts.server_ip, secret, "--root", str(root))
            wrapper = ["ip", "netns", "exec", hosts.client_ns]
            for get in (False, True):
                target = local / "fetched.bin" if get else source
                copy = CopySettings(server=server, secret_file=str(secret), local=str(target),
                                    remote="source.bin", get=get, streams=args.streams)  # fmt: skip
                started = time.monotonic()
                report = run_copy(copy, work / ("get" if get else "put"), wrapper)
                here, there = (report[f"{end}_disk"]["passes"][0] for end in ("local", "server"))
                print(
                    f"{report['direction']} {report['size_bytes']} B over {args.streams} streams:"
                    f" disk to disk {report['rate_bps'] / 1e9:.2f} Gb/s (data"
                    f" {report['data_ns'] / 1e9:.2f} s, fsync {report['sync_ns'] / 1e9:.2f} s,"
                    f" read back {report['verify_ns'] / 1e9:.2f} s; wall"
                    f" {report['wall_ns'] / 1e9:.2f} s), memory to memory"
                    f" {report['memory_to_memory']['rate_bps'] / 1e9:.2f} Gb/s, disk write / read"
                    f" here {here['write_bps'] / 1e9:.2f} / {here['read_bps'] / 1e9:.2f}, there"
                    f" {there['write_bps'] / 1e9:.2f} / {there['read_bps'] / 1e9:.2f} Gb/s;"
                    f" command {time.monotonic() - started:.1f} s; committed {report['committed']}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
