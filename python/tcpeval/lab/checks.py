"""The emulator judges itself: what it delivered against what was asked, with stated
tolerances. A run that misses any of them is marked invalid with the reasons; its numbers
are kept (for a look) but suites and comparisons leave it out.

Tolerances (docs/lab.md, "The self-check"):
- rate: the rate delivered while the queue was backlogged within ±2% of the asked rate;
- delay: per host, the p99 of the delay added beyond queueing within 0.5 ms of the asked
  one-way delay, and the p99.9 lateness of the packets under 2% of the smallest RTT (a run
  is mis-timed when a share of its traffic is; the worst lateness, one stall, is stated);
- random loss: Bernoulli drops within the binomial 99% interval of the asked probability;
- the emulator's own losses (its ring, its sends, its buffer pool, frames that were not one
  packet) and the kernel's outside the bottleneck (backlog and veth drops): zero;
- retransmissions of the forward flows equal to the drops on the forward path (induced
  losses, `drop_at`, included), within
  max(5, 5%): each drop costs one retransmission; more means the kernel saw a loss the
  emulator did not make (or timed out spuriously), fewer means a drop went unrepaired (on a
  path that reorders only fewer fails; behind a path-MTU black hole it is not judged);
- the CE marks the emulator sent equal to the CE packets the receiving kernels counted
  (`IpExt: InCEPkts`), exactly: a mark lost on the way, or a CE the emulator did not make,
  means the senders were told of congestion other than the path's;
- no reordering seen by any sender (TCP_INFO `reord_seen`) unless the scenario reorders; if
  it does, the packets the emulator held back within the binomial 99% interval of the share
  asked of the packets that left the bottleneck (the senders' count is stated, not judged: a
  held-back packet that nothing overtakes is no reordering to them);
- every setting read back as asked (sysctls, the algorithm each socket got, the MSS);
- no call of a BPF stack's program the kernel counts as skipped (its trampoline's recursion
  guard skips a program already running on that CPU): zero;
- no socket's ssthresh above Linux's "not yet set" (2^31 − 1), which no stack sets, across an
  ACK that delivered data: the stale word the kernel's ssthresh call returns when it does not
  run the program (docs/lab.md "BPF stacks"), left in place by the stack.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

RATE_TOLERANCE = 0.02
DELAY_P99_TOLERANCE_NS = 500_000
LATENESS_SHARE_OF_RTT = 0.02
RETRANSMIT_SLACK = (5, 0.05)
# The normal quantile of a two-sided 99% interval.
Z_99 = 2.5758
# Too few back-to-back packets to judge a rate: one second at the smallest rate we emulate.
MIN_BACKLOGGED_NS = 200_000_000


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    measured: Any
    asked: Any
    tolerance: str
    note: str = ""

    def failure(self) -> str:
        note = f"; {self.note}" if self.note else ""
        return f"{self.name}: measured {self.measured}, asked {self.asked} ({self.tolerance}{note})"


def rate(direction: dict[str, Any], rate_bps: int | None, name: str) -> Check | None:
    backlog = direction["backlogged"]
    if rate_bps is None:
        return None
    if backlog["ns"] < MIN_BACKLOGGED_NS:
        note = f"only {backlog['ns'] / 1e6:.0f} ms backlogged: too little to judge"
        return Check(f"{name} rate", True, None, rate_bps, "±2% while backlogged", note)
    measured = backlog["bytes"] * 8e9 / backlog["ns"]
    ok = abs(measured / rate_bps - 1) <= RATE_TOLERANCE
    return Check(f"{name} rate", ok, round(measured), rate_bps, "±2% while backlogged")


def delays(direction: dict[str, Any], name: str) -> list[Check]:
    checks = []
    for endpoint in direction["endpoints"]:
        added = endpoint["added_delay_ns"]
        if not added["count"]:
            continue
        asked = endpoint["asked_delay_ns"]
        ok = -DELAY_P99_TOLERANCE_NS / 10 <= added["p99"] - asked <= DELAY_P99_TOLERANCE_NS
        label = f"{name} delay p99 for {endpoint['ip']} (ns)"
        checks.append(Check(label, ok, added["p99"], asked, "within 0.5 ms above"))
    return checks


def lateness(
    direction: dict[str, Any], smallest_rtt_ns: int, name: str, steal_ms: float = 0.0
) -> Check:
    """The p99.9 lateness. A hypervisor stalls a virtual machine's vCPU for a few ms every
    so often (docs/lab.md): that delays the few hundred packets of one stall, which the
    worst lateness shows and the note states, but not the run's timing as a whole. Lateness
    that touches more than one packet in a thousand (the emulator sharing its CPU, a relay
    too slow for the rate) voids the run."""
    summary = direction["lateness_ns"]
    p999 = summary["p999"] if summary["count"] else 0
    bound = LATENESS_SHARE_OF_RTT * smallest_rtt_ns
    worst = f"worst {summary['max'] / 1e6:.2f} ms" if summary["count"] else ""
    steal = f"hypervisor steal on the emulator's CPU: {steal_ms:g} ms" if steal_ms else ""
    note = "; ".join(part for part in (worst, steal) if part)
    label = f"{name} p99.9 lateness (ns)"
    return Check(label, p999 <= bound, p999, 0, f"≤ {bound:.0f} ns", note)


def random_loss(direction: dict[str, Any], loss: dict[str, Any], name: str) -> Check | None:
    """Bernoulli loss against its binomial 99% interval; other models are reported only."""
    offered = direction["arrived_pkts"]
    drops = direction["random_drops"]
    if loss["model"] == "none":
        return Check(f"{name} random drops", drops == 0, drops, 0, "none asked")
    if loss["model"] != "bernoulli" or not offered:
        return None
    p = loss["p"]
    low, high = binomial_99(offered, p)
    interval = f"99% interval {low:.0f}–{high:.0f}"
    return Check(f"{name} random loss", low <= drops <= high, drops / offered, p, interval)


def own_drops(stats: dict[str, Any], kernel_drops: dict[str, int]) -> Check:
    causes = ("ring_drops", "tx_errors", "pool_drops", "gso_frames")
    counts = {
        f"{name} {cause}": stats[name][cause] for name in ("forward", "reverse") for cause in causes
    }
    counts.update(kernel_drops)
    found = {cause: count for cause, count in counts.items() if count}
    return Check("emulator and kernel drops outside the bottleneck", not found, found or 0, 0, "0")


def bottleneck_drops(direction: dict[str, Any]) -> int:
    """The drops the scenario asked for: induced, loss, policer, queue and AQM (not the
    emulator's own)."""
    causes = (
        "induced_drops",
        "random_drops",
        "policer_drops",
        "black_hole_drops",
        "queue_drops",
        "aqm_drops",
    )
    return sum(direction[cause] for cause in causes)


def retransmits(forward: dict[str, Any], retransmitted: int, path: PathShape) -> Check:
    """On a path that reorders, a sender may also resend what was only overtaken, so only
    fewer retransmissions than drops fail; behind a black hole the kernel re-cuts what it
    resends into smaller segments, so the counts are stated, not judged."""
    drops = bottleneck_drops(forward)
    slack = max(RETRANSMIT_SLACK[0], RETRANSMIT_SLACK[1] * drops)
    name = "retransmissions vs forward drops"
    if path.black_hole:
        return Check(name, True, retransmitted, drops, "not judged", "a path-MTU black hole")
    if path.reorders:
        ok = retransmitted >= drops - slack
        return Check(name, ok, retransmitted, drops, f"at least −{slack:.0f}", "the path reorders")
    ok = abs(retransmitted - drops) <= slack
    return Check(name, ok, retransmitted, drops, f"±{slack:.0f}")


@dataclass(frozen=True)
class PathShape:
    """What the emulated path does besides queueing and loss that changes what the senders
    may be expected to see."""

    reorders: bool = False
    black_hole: bool = False


def marks(stats: dict[str, Any], received_ce: dict[str, int]) -> Check:
    """Per direction, the packets the emulator sent with CE against the CE packets the
    kernels at that direction's far end received. Exact: the senders set ECT, never CE, so
    every CE packet a receiver sees is one the emulator marked; `InCEPkts` counts a packet in
    the IP layer before anything may discard it; and what a veth or a backlog drops on the
    way voids the run already (`own_drops`). Marks the AQM made on packets still held when
    the run ended were never sent, so they are not asked for; the note states the AQM's
    marks."""
    names = ("forward", "reverse")
    sent = {name: stats[name]["sent_ce_pkts"] for name in names}
    received = {name: received_ce[name] for name in names}
    made = {name: stats[name]["aqm_marks"] for name in names}
    note = ", ".join(f"{name} {count}" for name, count in made.items() if count)
    note = f"the AQM marked {note}" if note else ""
    return Check("marks", received == sent, received, sent, "equal", note)


def reordering(reorderings: int | None, asked: bool) -> Check | None:
    if reorderings is None:
        return None
    if asked:
        return Check("reordering seen by the senders", True, reorderings, "any", "not judged")
    return Check("reordering seen by the senders", reorderings == 0, reorderings, 0, "0")


def held_back(direction: dict[str, Any], reorder: dict[str, Any] | None) -> Check | None:
    """The packets the emulator held back against the binomial 99% interval of the share
    asked, over the packets that left the bottleneck (those sent, and those still held)."""
    if reorder is None:
        return None
    departed = direction["sent_pkts"] + direction["held_at_end_pkts"]
    share, held = reorder["share"], direction["reordered_pkts"]
    low, high = binomial_99(departed, share)
    interval = f"99% interval {low:.0f}–{high:.0f} of {departed}"
    return Check("packets held back", low <= held <= high, held, round(departed * share), interval)


def binomial_99(n: int, p: float) -> tuple[float, float]:
    """The two-sided 99% interval of a binomial count (normal approximation)."""
    half_width = Z_99 * math.sqrt(n * p * (1 - p))
    return n * p - half_width, n * p + half_width


def settings(asked: dict[str, Any], granted: dict[str, Any]) -> Check:
    differ = {key: granted.get(key) for key, value in asked.items() if granted.get(key) != value}
    return Check("settings read back", not differ, differ or "as asked", "as asked", "equal")


def skipped_calls(programs: dict[str, dict[str, dict[str, int]]]) -> Check | None:
    """`programs`: per registration, what the kernel counted of each of its programs."""
    if not programs:
        return None
    skipped = {
        f"{name}.{program}": counted["recursion_misses"]
        for name, held in programs.items()
        for program, counted in held.items()
        if counted.get("recursion_misses")
    }
    return Check("BPF calls skipped by the kernel", not skipped, skipped or 0, 0, "0")


def unset_ssthresh(frames: list[pd.DataFrame]) -> Check:
    """No socket's ssthresh unknown across an ACK that delivered data. The samples read an
    ssthresh above Linux's "not yet set" (2^31 − 1) as unknown: no stack sets one, but the
    kernel's ssthresh call leaves such a stale word when it does not run the program
    (docs/lab.md "BPF stacks"), and a BPF stack replaces it on its next ACK. Two samples in a
    row without one, with data delivered between them, mean a stack left the word in place,
    and its window would follow it to ~1e9. Measured: such samples."""
    flows = [flow for frame in frames if len(frame) for _, flow in frame.groupby("flow")]
    held = sum(_unknown_held(flow) for flow in flows)
    return Check("ssthresh no stack set", held == 0, held, 0, "0 samples")


def _unknown_held(flow: pd.DataFrame) -> int:
    """One flow's samples whose ssthresh was unknown in the sample before as well, with data
    delivered between the two."""
    unknown = flow["ssthresh_pkts"].isna()
    delivered = flow["delivered_pkts"].diff() > 0
    return int((unknown & unknown.shift(fill_value=False) & delivered).sum())


def verdict(checks: list[Check]) -> tuple[bool, str | None, list[dict[str, Any]]]:
    """(valid, why not, the checks as records)."""
    failed = [check.failure() for check in checks if not check.ok]
    return not failed, "; ".join(failed) or None, [asdict(check) for check in checks]
