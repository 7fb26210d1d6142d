"""Which limit binds, ranked by how well its relation explains the measured rate
(docs/diagnose.md, "Verdicts").

Every relation of `relations.py` is tried; those that hold are ranked, and the first is the
verdict — a second that holds is named too. Causes rank before what they cause, whatever the
residuals: a disk or a path that drops large packets caps any transfer; a full (or policed)
path leaves nothing for the hosts to tune; a saturated CPU starves the reader, whose window
then closes, or the writer, whose buffer then empties — the window and the buffer are its
symptoms. Among the rest (windows, buffers, loss) the smallest residual wins. A thread that
waited for a CPU is contention evidence, shown with the other programs on that end, and not a
limit unless the thread never slept (the CPU relation). With nothing holding, the verdict is
"unexplained", naming the closest relation.
"""

from __future__ import annotations

from pydantic import BaseModel

from tcpeval.diagnose.advice import advice_for
from tcpeval.diagnose.evidence import CpuEvidence, Evidence
from tcpeval.diagnose.idle import idle_restart
from tcpeval.diagnose.relations import Fit, Limit, fits, measured_bps
from tcpeval.diagnose.wording import mbps

TITLES: dict[Limit, str] = {
    "disk": "disk limited",
    "mtu_black_hole": "path-MTU black hole",
    "path_capacity": "path-capacity limited",
    "policer": "policed",
    "cpu": "CPU limited",
    "receiver_application": "limited by the receiving application",
    "window_scaling": "receiver-window limited, without window scaling",
    "receiver_window": "receiver-window limited",
    "send_buffer": "send-buffer limited",
    "reordering": "limited by reordering taken for loss",
    "path_loss": "congestion-window limited by path loss",
    "idle_restart": "slow start after every idle period",
    "unexplained": "unexplained",
}
# Causes before their symptoms (see the module's docstring); equal ranks go by residual. Slow
# start after idle is about the responses the user asked about (--response-size), not the
# bulk tests: when it holds it is their answer, and the bulk limit comes second.
CAUSE_RANK: dict[Limit, int] = {
    "idle_restart": -1,
    "disk": 0,
    "mtu_black_hole": 0,
    "path_capacity": 1,
    "policer": 2,
}
CPU_RANK = 3
SYMPTOM_RANK = 4
# A thread of the transfer waited for a CPU at least this share of the time: worth showing.
CONTENDED = 0.02


class Verdict(BaseModel):
    limit: Limit
    headline: str
    # The relations that hold, the binding one first.
    ranked: list[Fit]
    # Every relation tried, with its residual.
    fits: list[Fit]
    evidence: list[str]
    # CPU contention seen on either end: who else ran, and how long the transfer waited.
    contention: list[str]
    advice: list[str]


def decide(e: Evidence, predictions: dict[str, float] | None = None) -> Verdict:
    """The binding limit, the evidence for it, and the advice."""
    tried = fits(e)
    ranked = sorted((f for f in tried if f.holds), key=_rank)
    evidence = [_goodput_line(e), _udp_line(e), *(_cpu_line(c) for c in e.cpu)]
    evidence += [line for line in (_reordering_line(e),) if line] + e.notes
    contention = [line for c in e.cpu if (line := _contention_line(c))]
    if not ranked:
        return Verdict(
            limit="unexplained",
            headline=_unexplained(e, tried),
            ranked=[],
            fits=tried,
            evidence=evidence,
            contention=contention,
            advice=advice_for("unexplained", e, {}, ""),
        )
    top = ranked[0]
    return Verdict(
        limit=top.limit,
        headline=_headline(ranked),
        ranked=ranked,
        fits=tried,
        evidence=evidence,
        contention=contention,
        advice=_advice(top, e, predictions or {}),
    )


def _advice(top: Fit, e: Evidence, predictions: dict[str, float]) -> list[str]:
    if top.limit == "idle_restart" and e.idle is not None:
        return idle_restart(e.idle).advice
    return advice_for(top.limit, e, predictions, _cpu_end(e, top))


def _rank(fit: Fit) -> tuple[int, float]:
    rank = CAUSE_RANK.get(fit.limit, CPU_RANK if fit.limit == "cpu" else SYMPTOM_RANK)
    return rank, fit.closeness


def _headline(ranked: list[Fit]) -> str:
    top = ranked[0]
    line = f"{TITLES[top.limit]}: {top.relation} ({top.reason})"
    if len(ranked) > 1:
        second = ranked[1]
        line += f"; and {TITLES[second.limit]}: {second.relation} ({second.reason})"
    return line


def _unexplained(e: Evidence, tried: list[Fit]) -> str:
    line = f"no limit explains {mbps(measured_bps(e))} on the wire"
    candidates = [f for f in tried if f.corroborated]
    if candidates:
        closest = min(candidates, key=lambda f: f.closeness)
        line += f"; closest: {TITLES[closest.limit]}, {closest.relation} ({closest.reason})"
    return line


def _cpu_end(e: Evidence, fit: Fit) -> str:
    """The end a CPU verdict is about (its relation names it)."""
    for c in e.cpu:
        if f"({c.end})" in fit.relation:
            return c.end
    return "host"


def _goodput_line(e: Evidence) -> str:
    return (
        f"TCP: 1 stream {mbps(e.single.goodput_bps)}, {e.multi.streams} streams "
        f"{mbps(e.multi.goodput_bps)}; RTT {e.single.min_rtt_ms:.1f} ms min, "
        f"{e.single.srtt_ms:.1f} ms smoothed; retransmitted {e.single.retransmits} of "
        f"{e.single.segments_sent} segments; rwnd-limited {e.single.rwnd_limited:.0%}, "
        f"sndbuf-limited {e.single.sndbuf_limited:.0%} of the busy time"
    )


def _udp_line(e: Evidence) -> str:
    p = e.path
    if p.udp_sent == 0 and p.burst_sent == 0:
        return (
            f"path capacity: no UDP train (a stock iperf3 server); TCP's best, "
            f"{mbps(p.capacity_bps)} on the wire, is a lower bound"
        )
    bound = ""
    if p.udp_sender_limited:
        bound = ", a lower bound: the sender was slower"
    elif not p.capacity_known:
        bound = ", a lower bound: TCP got more through"
    return (
        f"path capacity {mbps(p.capacity_bps)}: UDP back-to-back train "
        f"{mbps(p.udp_capacity_bps)}{bound}; UDP loss {p.udp_lost}/{p.udp_sent} at half of it"
    )


def _reordering_line(e: Evidence) -> str | None:
    """Reordering seen, whether or not it limits: Linux's RACK (RFC 8985) waits a reordering
    window before it calls a packet lost, and widens it when a DSACK says it was wrong, so a
    path may reorder and still be filled."""
    s = e.single
    if not s.reord_seen and not e.path.udp_reordered:
        return None
    spurious = "" if s.dsack_dups is None else f", {s.dsack_dups} of its {s.retransmits} "
    spurious += "retransmissions spurious (DSACK)" if s.dsack_dups is not None else ""
    return (
        f"reordering: the sender saw {s.reord_seen or 0} reordering events{spurious}; "
        f"{e.path.udp_reordered} UDP datagrams arrived after a later one"
    )


def _cpu_line(c: CpuEvidence) -> str:
    throttled = "" if c.throttled is None else f", throttled {c.throttled:.0%}"
    quota = "" if c.quota_used is None else f", {c.quota_used:.0%} of its CPU quota used"
    return (
        f"{c.end} ({c.role}) CPU: busiest thread {c.busiest_thread:.0%} of a core, busiest "
        f"core {c.busiest_core:.0%}, softirq up to {c.softirq:.0%}{throttled}{quota}"
    )


def _contention_line(c: CpuEvidence) -> str | None:
    if c.most_waiting_thread < CONTENDED and not c.others:
        return None
    others = ", ".join(f"{o.command} (pid {o.pid}) {o.cores:.0%}" for o in c.others)
    return (
        f"{c.end}: a thread of the transfer waited for a CPU {c.most_waiting_thread:.0%} of "
        f"the time while its busiest ran {c.busiest_thread:.0%} of a core"
        + (f"; other programs on this end, in shares of a core: {others}" if others else "")
    )
