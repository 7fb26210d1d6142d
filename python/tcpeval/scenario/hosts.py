"""Host profiles: what a sending host's TCP does beyond its congestion control.

A profile (`flow.host`) is a named set of defaults for the host's switches, the [[flow]] keys
`window_reduction`, `loss_detection`, `lost_retransmission`, `tail_loss_probe`, `undo`,
`timestamps`, `rto_in_recovery`, `sack_compression`, `initial_cwnd` and `tso`; a [[flow]]
table may set any of them itself. The simulator's sender reads the resolved switches
(crates/sim/src/tcp/host.rs); `summary.json` records them with the scenario, and
`tcpeval hosts` prints this table.

- `linux` (the default): a current kernel. PRR (RFC 9937, Linux 3.2), RACK loss detection
  (RFC 8985, Linux 4.18), lost retransmissions sent again within the same recovery, tail loss
  probes (RFC 8985 §7, Linux 3.10), SACK compression (Linux 4.18), initial window 10 (RFC
  6928, Linux 2.6.39), timestamps (RFC 7323, `tcp_timestamps`), spurious reductions undone
  by D-SACK, F-RTO and timestamps (`tcp_dsack`, `tcp_frto`, `tcp_packet_delayed`), ssthresh
  kept when a timeout interrupts recovery (`tcp_enter_loss`), TSO/GSO frames of about 1 ms
  of the pacing rate, a small one held back for an ACK due soon (`tcp_tso_autosize`, Linux
  3.12; `tcp_tso_should_defer`).
- `linux-2.6`: the kernels of the 2003–2008 testbed studies. Rate halving (`tcp_cwnd_down`),
  DupThresh loss detection, lost retransmissions sent again without a reduction
  (`tcp_mark_lost_retrans`), no tail loss probes, an ACK for every segment while a hole is
  open, the initial window of RFC 3390 (3 segments of 1448 bytes, 2 of jumbo frames), and,
  as now, timestamps and their undo (2.6 had both: `tcp_timestamps` on by default,
  `tcp_packet_delayed`), D-SACK and F-RTO undo and ssthresh kept across a timeout in
  recovery; segment by segment: the frames of `tso` are sized by the pacing rate (Linux
  3.12), which these kernels did not have (docs/hosts.md says why off is the nearer choice).
- `rfc`: the textbook sender, and this simulator's behaviour before host profiles: RFC 6675
  recovery with cwnd at ssthresh at once, DupThresh, a lost retransmission lowering the
  window again (RFC 5681 §4.3), no tail loss probes, SACK compression, an initial window
  of 10, no timestamps, no undo, a timeout in recovery lowering ssthresh again, and no TSO
  frames.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

HostName = Literal["linux", "linux-2.6", "rfc"]
WindowReduction = Literal["prr", "rate-halving", "rfc6675"]
LossDetection = Literal["rack", "dupthresh"]
LostRetransmission = Literal["resend", "reduce"]
RtoInRecovery = Literal["keep-ssthresh", "reduce"]

RFC_3390_BYTES = 4380
"""RFC 3390 §1: the initial window is min(4·MSS, max(2·MSS, 4380 bytes))."""


def rfc_3390_initial_window(mss_bytes: int) -> int:
    """The initial window of RFC 3390 (and of Linux before 2.6.39), in segments."""
    window_bytes = min(4 * mss_bytes, max(2 * mss_bytes, RFC_3390_BYTES))
    return window_bytes // mss_bytes


class HostBehaviour(BaseModel):
    """The resolved switches of one host profile."""

    model_config = ConfigDict(frozen=True)

    window_reduction: WindowReduction
    loss_detection: LossDetection
    lost_retransmission: LostRetransmission
    tail_loss_probe: bool
    undo: bool
    timestamps: bool
    rto_in_recovery: RtoInRecovery
    sack_compression: bool
    initial_cwnd: int | Literal["rfc3390"]
    tso: bool

    def initial_cwnd_pkts(self, mss_bytes: int) -> int:
        if self.initial_cwnd == "rfc3390":
            return rfc_3390_initial_window(mss_bytes)
        return self.initial_cwnd


PROFILES: dict[HostName, HostBehaviour] = {
    "linux": HostBehaviour(
        window_reduction="prr",
        loss_detection="rack",
        lost_retransmission="resend",
        tail_loss_probe=True,
        undo=True,
        timestamps=True,
        rto_in_recovery="keep-ssthresh",
        sack_compression=True,
        initial_cwnd=10,
        tso=True,
    ),
    "linux-2.6": HostBehaviour(
        window_reduction="rate-halving",
        loss_detection="dupthresh",
        lost_retransmission="resend",
        tail_loss_probe=False,
        undo=True,
        timestamps=True,
        rto_in_recovery="keep-ssthresh",
        sack_compression=False,
        initial_cwnd="rfc3390",
        tso=False,
    ),
    "rfc": HostBehaviour(
        window_reduction="rfc6675",
        loss_detection="dupthresh",
        lost_retransmission="reduce",
        tail_loss_probe=False,
        undo=False,
        timestamps=False,
        rto_in_recovery="reduce",
        sack_compression=True,
        initial_cwnd=10,
        tso=False,
    ),
}

SWITCHES = tuple(HostBehaviour.model_fields)
"""The keys a profile sets, in the order `tcpeval hosts` shows them."""

SWITCH_MEANINGS = {
    "window_reduction": "how the flight falls to ssthresh in fast recovery: 'prr' "
    "(RFC 9937), 'rate-halving' (Linux 2.6), 'rfc6675' (at once)",
    "loss_detection": "when a hole is lost: 'rack' (one segment sent after it SACKed, RFC "
    "8985 as Linux runs it), 'dupthresh' (three SACKed above it, RFC 6675)",
    "lost_retransmission": "a retransmission found lost: 'resend' within the same recovery, "
    "or 'reduce' the window again (RFC 5681 §4.3)",
    "tail_loss_probe": "a probe two RTTs after the ACKs stop, before the RTO (RFC 8985 §7, "
    "Linux 3.10)",
    "undo": "D-SACK reports of duplicates (RFC 2883), and a reduction undone when they prove "
    "every retransmission unneeded (RFC 3708) or F-RTO a timeout spurious (RFC 5682)",
    "timestamps": "TCP timestamps (RFC 7323); with undo, a reduction undone when an ACK "
    "echoes an original sent before its first retransmission (Eifel, RFC 3522)",
    "rto_in_recovery": "a timeout during fast recovery: 'keep-ssthresh' as recovery set it "
    "(Linux tcp_enter_loss), or 'reduce' it again from the reduced window",
    "sack_compression": "the receiver's SACK compression (Linux 4.18)",
    "initial_cwnd": "initial window, segments ('rfc3390': by the MSS, RFC 3390)",
    "tso": "TSO/GSO frames of about 1 ms of the pacing rate, at most 64 KB, a small one held "
    "back for an ACK due soon (Linux tcp_tso_autosize, 3.12; tcp_tso_should_defer)",
}
