"""What Linux's pfifo and bfifo hold of a burst of mixed packet sizes: the evidence
behind `queue_counts` (python/tcpeval/scenario/queue.py). Each row is one burst into a fresh
FIFO in a namespace of its own (tests/kernel_fifo.py; removed with its process). Needs root.

    sudo .venv/bin/python bench/kernel_fifo.py

Frames are 9014 bytes (a 9000-byte IP packet) and 3014 bytes (3000). Prints, per FIFO and
burst: the frames accepted of each size, what the FIFO held (packets, bytes) and dropped.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from kernel_fifo import JUMBO_FRAME_BYTES, SMALL_FRAME_BYTES, alternating, measure

JUMBO, SMALL = JUMBO_FRAME_BYTES, SMALL_FRAME_BYTES
BURSTS = {
    "40 jumbo": [JUMBO] * 40,
    "40 small": [SMALL] * 40,
    "alternating 40+40": alternating(40),
    "30 jumbo, then 10 small": [JUMBO] * 30 + [SMALL] * 10,
}
FIFOS = (("pfifo", 20), ("bfifo", 60_000))


def main() -> None:
    print(f"{'fifo':>14} {'burst':>24} {'accepted 9014/3014':>19} {'held':>5} {'bytes':>7}")
    for qdisc, limit in FIFOS:
        for name, burst in BURSTS.items():
            b = measure(qdisc, limit, burst)
            accepted = f"{b.accepted.get(JUMBO, 0)}/{b.accepted.get(SMALL, 0)}"
            print(
                f"{qdisc + ' ' + str(limit):>14} {name:>24} {accepted:>19} "
                f"{b.backlog_pkts:>5} {b.backlog_bytes:>7}"
            )
    print("(the htb bucket above the FIFO sends the first 10000 bytes and one frame more)")


if __name__ == "__main__":
    main()
