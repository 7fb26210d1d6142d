//! RACK-TLP's loss detection by time (RFC 8985 §6; Linux `tcp_recovery.c`): a segment is lost
//! once one sent after it is delivered and a reordering window has passed, and a timer marks
//! the suspects when no ACK comes to do it (§6.3).

use super::RtoSlot;
use super::Sender;
use crate::cc::CaState;
use crate::packet::Packet;
use crate::tcp::host::LossDetection;
use crate::tcp::scoreboard::DUP_THRESH;
use crate::time::NS_PER_MS;

/// How long after its deadline RACK's reordering timer fires: Linux adds two jiffies
/// (`TCP_TIMEOUT_MIN`) so that every suspect is past its own when it does; 8 ms at the HZ of
/// 250 of the kernels the lab runs (2 ms at HZ 1000).
const REORDERING_TIMER_SLACK_NS: u64 = 8 * NS_PER_MS;

impl Sender {
    /// RACK (RFC 8985 §6.2): segments sent a reordering window before the latest one delivered
    /// are lost; with no window, so is every hole below a SACKed segment sent in the same
    /// instant (Linux breaks such ties by sequence, `tcp_rack_sent_after`).
    pub(super) fn mark_losses_by_rack(&mut self) -> u64 {
        let reo_wnd_ns = self.reordering_window_ns();
        let by_time = self
            .board
            .mark_lost_sent_before(self.rack_sent_ns, reo_wnd_ns);
        if reo_wnd_ns == 0 {
            by_time + self.board.mark_lost_below_highest_sacked()
        } else {
            by_time
        }
    }

    /// RFC 8985 §6.2 step 2: RACK follows the latest-sent segment delivered, and the round trip
    /// it took. Returns whether this ACK delivered a segment sent no earlier than any before it
    /// (Linux breaks ties by sequence; of segments sent in one instant, the higher are
    /// delivered by the later ACKs).
    pub(super) fn advance_rack(&mut self, now_ns: u64, newest_sent_ns: Option<u64>) -> bool {
        match newest_sent_ns {
            Some(sent_ns) if sent_ns >= self.rack_sent_ns => {
                self.rack_sent_ns = sent_ns;
                self.rack_rtt_ns = now_ns - sent_ns;
                true
            }
            _ => false,
        }
    }

    /// RFC 8985 §6.2 step 5: holes sent before the newest segment delivered, but less than a
    /// reordering window before it, are suspects, lost once RACK.rtt plus the window has passed
    /// since they were sent. One timer waits for the newest of them (Linux
    /// `tcp_rack_detect_loss`: the latest deadline, so one expiry settles them all), in the
    /// retransmission timer's slot. Only while holes are still suspects, in Disorder (nothing is
    /// lost yet) with a reordering window. Returns whether it was armed.
    pub(super) fn arm_reordering_timer(&mut self) -> bool {
        let reo_wnd_ns = self.reordering_window_ns();
        let applies = self.cfg.sack
            && self.cfg.recovery.loss_detection == LossDetection::Rack
            && self.ca_state == CaState::Disorder
            && reo_wnd_ns > 0;
        if !applies {
            return false; // before the scoreboard is read: this runs on most ACKs
        }
        let suspect_sent_ns = self
            .board
            .newest_hole_sent_ns()
            .filter(|&sent_ns| sent_ns <= self.rack_sent_ns);
        let Some(sent_ns) = suspect_sent_ns else {
            return false;
        };
        self.rto_slot = RtoSlot::Reordering;
        self.set_timer(sent_ns + self.rack_rtt_ns + reo_wnd_ns + REORDERING_TIMER_SLACK_NS);
        true
    }

    /// RFC 8985 §6.3: the reordering timer fired with no ACK since. The suspects whose time is
    /// up are lost and recovery begins (Linux `tcp_rack_reo_timeout`). The retransmission
    /// timer takes its slot back: as it was if nothing was lost, else an RTO from now, as the
    /// first hole is resent.
    pub(super) fn on_reordering_timeout(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        let prior_in_flight = self.board.in_flight();
        let waited_ns = self.rack_rtt_ns + self.reordering_window_ns();
        let lost = self
            .board
            .mark_lost_holes_sent_by(now_ns.saturating_sub(waited_ns));
        if lost == 0 {
            self.arm_rto(self.rto_due_ns.max(now_ns));
            return;
        }
        if matches!(self.ca_state, CaState::Open | CaState::Disorder) {
            self.enter_recovery(now_ns, prior_in_flight);
        }
        self.arm_rto(now_ns + self.rtt.rto_ns());
        self.send(now_ns, out);
    }

    /// Linux `tcp_rack_reo_wnd` on a path that has shown no reordering: RACK waits no time
    /// for reordering once recovery has begun or DupThresh segments are SACKed.
    pub(super) fn rack_without_reordering_window(&self) -> bool {
        self.cfg.recovery.loss_detection == LossDetection::Rack
            && !self.reordering_seen
            && (matches!(self.ca_state, CaState::Recovery | CaState::Loss)
                || self.board.sacked_out() >= DUP_THRESH)
    }

    /// How much later than a retransmission a delivered segment must have been sent for the
    /// retransmission to count as lost: a quarter of the minimum RTT (RFC 8985 §6.2), or
    /// none where RACK waits no time.
    pub(super) fn reordering_window_ns(&self) -> u64 {
        if self.rack_without_reordering_window() {
            0
        } else {
            self.rtt.min_rtt_ns() / 4
        }
    }
}
