"""The probe server fuzzed at length: --cases fuzzed control frames (tests/probe_peers.py,
`fuzz`: random bytes, random JSON of the protocol's names and hostile values, valid frames
with a byte flipped or cut short, lengths over the bound, forged log lines; a tenth sent
after logging in) from --threads connections at a time, against one server on loopback in a
namespace made and removed here.

    .venv/bin/python bench/fuzz_probe_server.py [--cases 100000] [--threads 8] [--seed 1]

Prints the count of every outcome (what the server answered each frame), then the three the
goal is zero for: crashes (the server exited), hangs (a frame neither answered nor its
connection closed within 5 s; the server's deadlines are 2 s), and lost slots (of the
--max-clients 4 test slots, those not free once the run is over: four logins held together
must all be welcomed). Also the server's idle thread and descriptor counts before and after,
its peak memory, and the size of its log. Asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from probe_server import Served, served

CHUNK_CASES = 10_000
CLIENT_SLOTS = 4
# A test a fuzzed request starts ends this long after its client goes away.
IDLE_TIMEOUT_MS = 500


def peak_rss_bytes(server: Served) -> int:
    for line in Path(f"/proc/{server.process.pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def fuzz(server: Served, cases: int, threads: int, seed: int) -> tuple[Counter[str], bool]:
    """Runs the cases in chunks, stopping if the server dies; the outcomes and whether it
    crashed."""
    outcomes: Counter[str] = Counter()
    started = time.monotonic()
    for first in range(0, cases, CHUNK_CASES):
        chunk = min(CHUNK_CASES, cases - first)
        seen = server.peers(
            "fuzz", "--cases", str(chunk), "--threads", str(threads), "--spread",
            "--seed", str(seed * 100_000 + first), "--answer-s", "5", timeout_s=3600,
        )  # fmt: skip
        outcomes.update(seen)
        rate = (first + chunk) / (time.monotonic() - started)
        print(f"  {first + chunk:,} cases ({rate:.0f}/s)", flush=True)
        if server.process.poll() is not None:
            return outcomes, True
    return outcomes, False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    limits = ("--idle-timeout-ms", str(IDLE_TIMEOUT_MS), "--max-duration-s", "2")
    with tempfile.TemporaryDirectory() as tmp, served(Path(tmp), *limits) as server:
        time.sleep(0.5)
        idle = (server.threads(), server.fds())
        started = time.monotonic()
        outcomes, crashed = fuzz(server, args.cases, args.threads, args.seed)
        wall_s = time.monotonic() - started
        time.sleep(3.0)  # the last handshakes and fuzzed tests reach their deadlines
        after = (server.threads(), server.fds()) if not crashed else None
        slots = server.peers("logins-at-once", "--count", str(CLIENT_SLOTS)) if not crashed else {}
        peak = peak_rss_bytes(server) if not crashed else 0
        log_bytes = server.log.stat().st_size
    done = sum(outcomes.values())
    print(f"{done:,} frames in {wall_s:.0f} s ({done / wall_s:.0f}/s), {args.threads} at a time")
    for outcome, count in outcomes.most_common():
        print(f"  {outcome:32} {count:9,}")
    lost = CLIENT_SLOTS - slots.get("welcomed", 0)
    print(f"crashes {int(crashed)}, hangs {outcomes['hang']}, lost slots {lost}")
    print(f"threads and fds idle {idle}, after {after}; peak RSS {peak / 2**20:.1f} MiB")
    print(f"log {log_bytes:,} bytes")


if __name__ == "__main__":
    main()
