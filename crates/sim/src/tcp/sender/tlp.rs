//! The tail loss probe (RFC 8985 §7; Linux `tcp_send_loss_probe`): before the retransmission
//! timer, one segment is sent to draw an ACK whose SACKs reveal a lost tail, and its answer
//! says whether a loss happened at all (§7.4).

use super::output::Next;
use super::RtoSlot;
use super::Sender;
use crate::cc::CaState;
use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::appdata::Availability;
use crate::time::NS_PER_MS;

/// RFC 8985 §7.2 WCDelAckT: the longest a receiver may hold the ACK of a lone segment, added
/// to the probe timeout when only one segment is out.
const WORST_CASE_DELAYED_ACK_NS: u64 = 200 * NS_PER_MS;

/// A tail loss probe awaiting its answer (RFC 8985 §7.4; Linux `tlp_high_seq`, `tlp_retrans`).
#[derive(Debug, Clone, Copy)]
pub(super) struct LossProbe {
    /// snd_nxt when the probe left (RFC 8985 TLPRxtOut's end).
    pub(super) high_seq: u64,
    /// The probe resent a segment rather than sending a new one.
    pub(super) retransmitted: bool,
}

impl Sender {
    /// RFC 8985 §7.2: when the ACKs stop while nothing is known lost, a probe after two
    /// smoothed RTTs (plus the longest delayed ACK when one segment is out), unless the
    /// retransmission timer would fire first. One probe at a time; not in recovery.
    pub(super) fn schedule_probe(&mut self, now_ns: u64) {
        let srtt_ns = self.rtt.srtt_ns();
        let allowed = self.cfg.recovery.tail_loss_probe
            && self.cfg.sack
            && matches!(self.ca_state, CaState::Open | CaState::Cwr)
            && self.loss_probe.is_none()
            && self.board.packets_out() > 0
            && srtt_ns > 0;
        if !allowed {
            return;
        }
        let lone_segment_ns = if self.board.packets_out() == 1 {
            WORST_CASE_DELAYED_ACK_NS
        } else {
            0
        };
        let probe_ns = now_ns + 2 * srtt_ns + lone_segment_ns;
        if probe_ns < self.rto_due_ns {
            self.rto_slot = RtoSlot::LossProbe;
            self.set_timer(probe_ns);
        }
    }

    /// RFC 8985 §7.3: the probe is a new segment if the window lets one out (cwnd aside),
    /// else the highest one not SACKed, sent again; the retransmission timer restarts.
    pub(super) fn probe(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        // Linux probes in Open and CWR (`tcp_schedule_loss_probe`).
        if !matches!(self.ca_state, CaState::Open | CaState::Cwr) || self.loss_probe.is_some() {
            self.arm_rto(self.rto_due_ns.max(now_ns));
            return;
        }
        let window = self.cfg.window_pkts.min(self.rwnd_pkts);
        let new_data = self.app_open
            && self.app.availability(self.board.snd_nxt(), now_ns) == Availability::Now
            && self.board.packets_out() < window;
        let mut retransmitted = false;
        if new_data {
            self.transmit(now_ns, Next::New, out);
        } else if let Some(seq) = self.board.highest_unsacked() {
            // Resent as lost, as every retransmission in flight is here; that mark alone
            // starts no recovery (`only_the_probe_is_lost`).
            self.board.mark_lost(seq);
            self.transmit(now_ns, Next::Retransmit(seq), out);
            retransmitted = true;
        }
        self.loss_probe = Some(LossProbe {
            high_seq: self.board.snd_nxt(),
            retransmitted,
        });
        self.arm_rto(now_ns + self.rtt.rto_ns());
    }

    /// RFC 8985 §7.4 as Linux runs it (`tcp_process_tlp_ack`), once the ACKs reach the
    /// probe's snd_nxt. A probe of new data, a probe reported as a duplicate (D-SACK: the
    /// original arrived too), or a duplicate ACK with no news (the same, without D-SACK):
    /// nothing was lost. An ACK beyond it that is none of these: the probe repaired a loss,
    /// and the window is reduced once, at once (CWR: `tcp_init_cwnd_reduction`, then
    /// `tcp_end_cwnd_reduction`), with nothing to undo.
    pub(super) fn settle_probe(
        &mut self,
        now_ns: u64,
        probe: LossProbe,
        cum_ack: u64,
        dsack: Option<(u64, u64)>,
        pure_dupack: bool,
    ) {
        if cum_ack < probe.high_seq {
            return;
        }
        let probe_reported_twice = dsack.is_some_and(|(_, end)| end == probe.high_seq);
        if !probe.retransmitted || probe_reported_twice || pure_dupack {
            self.loss_probe = None;
        } else if cum_ack > probe.high_seq {
            self.loss_probe = None;
            self.reduce_window(now_ns, self.board.in_flight(), 0, Signal::Loss);
        }
    }

    /// Whether the only segment taken for lost is the one a probe resent. The scoreboard
    /// marks it so (a retransmission in flight is of a lost segment), but Linux sends the
    /// probe without taking anything for lost, and leaves it to the ACKs that answer it
    /// (`settle_probe`): the mark alone is no reason to enter recovery.
    pub(super) fn only_the_probe_is_lost(&self) -> bool {
        self.loss_probe.is_some_and(|p| p.retransmitted)
            && self.board.lost_out() == 1
            && self.board.retrans_out() == 1
    }

    /// The persist timer fired: send one segment past the closed window, so that the ACK it
    /// draws brings the current window (RFC 9293 §3.8.6.1 zero-window probe).
    pub(super) fn probe_window(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        if self.app_open && self.app.availability(self.board.snd_nxt(), now_ns) == Availability::Now
        {
            self.transmit(now_ns, Next::New, out);
        }
    }
}
