"""Linux's pfifo counts packets and bfifo counts bytes, whatever the mix of sizes: the kernel
evidence for `queue_counts` (tests/kernel_fifo.py says how it is measured; it cleans up
after itself even when killed). crates/netem's `Limit` is tested on the same bursts against
the figures measured here (queue/mod.rs), so the lab's emulator and the simulator count as
the kernel's FIFOs do."""

from __future__ import annotations

import os
import shutil

import pytest

from kernel_fifo import JUMBO_FRAME_BYTES, SMALL_FRAME_BYTES, Backlog, alternating, measure

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("unshare") is None or shutil.which("tc") is None,
    reason="needs root, unshare and tc",
)

JUMBO, SMALL = JUMBO_FRAME_BYTES, SMALL_FRAME_BYTES
PFIFO_PKTS = 20
BFIFO_BYTES = 60_000


def held(backlog: Backlog) -> int:
    """What the FIFO holds by our count: frames it accepted, less those it has sent."""
    return sum(backlog.accepted.values()) - backlog.sent_pkts


def test_pfifo_counts_packets_of_any_size() -> None:
    backlog = measure("pfifo", PFIFO_PKTS, alternating(40))
    assert backlog.backlog_pkts == held(backlog) == PFIFO_PKTS
    # Half of each size: the bytes it holds are whatever the mix makes them.
    assert backlog.backlog_bytes == PFIFO_PKTS // 2 * (JUMBO + SMALL)


def test_bfifo_counts_bytes_of_any_size() -> None:
    backlog = measure("bfifo", BFIFO_BYTES, alternating(40))
    assert backlog.backlog_pkts == held(backlog)
    assert BFIFO_BYTES - SMALL < backlog.backlog_bytes <= BFIFO_BYTES
    assert min(backlog.accepted.values()) > 1


def test_a_full_bfifo_still_admits_a_small_frame_a_full_pfifo_refuses() -> None:
    # Jumbo frames until both are full, then small ones: the pfifo refuses every small frame,
    # the bfifo takes one into the 5916 bytes no jumbo fits (6 x 9014 = 54084 of 60000).
    burst = [JUMBO] * 30 + [SMALL] * 10
    pfifo = measure("pfifo", PFIFO_PKTS, burst)
    bfifo = measure("bfifo", BFIFO_BYTES, burst)
    assert pfifo.accepted[SMALL] == 0
    assert pfifo.backlog_pkts == PFIFO_PKTS
    assert bfifo.accepted[SMALL] == 1
    assert bfifo.backlog_bytes == BFIFO_BYTES // JUMBO * JUMBO + SMALL


def test_one_size_at_a_time_a_pfifo_gives_jumbo_frames_three_times_the_bytes() -> None:
    # The same limits: pfifo holds as many 9014-byte frames as 3014-byte ones (3x the
    # bytes); bfifo holds the same bytes of each, so a third as many jumbo frames.
    pfifo = {size: measure("pfifo", PFIFO_PKTS, [size] * 40) for size in (JUMBO, SMALL)}
    bfifo = {size: measure("bfifo", BFIFO_BYTES, [size] * 40) for size in (JUMBO, SMALL)}
    for size in (JUMBO, SMALL):
        assert pfifo[size].backlog_pkts == PFIFO_PKTS
        assert pfifo[size].backlog_bytes == PFIFO_PKTS * size
        assert bfifo[size].backlog_pkts == BFIFO_BYTES // size
        assert bfifo[size].backlog_bytes == BFIFO_BYTES // size * size
