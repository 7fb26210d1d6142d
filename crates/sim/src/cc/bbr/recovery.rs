//! BBR v1's own loss recovery (Linux `bbr_set_cwnd_to_recover_or_restore`, `bbr_save_cwnd`).
//! v1 does not treat loss as a congestion signal; it only keeps recovery
//! from sending more than the network is delivering: packets marked lost come off cwnd at
//! once, the first round of recovery sends one packet per packet delivered (packet
//! conservation), later rounds grow back toward the model's target, and the cwnd saved
//! before the loss is restored when recovery ends.

use crate::cc::round_from_now::RoundFromNow;
use crate::cc::{Ack, CaState};

#[derive(Debug, Clone, Copy)]
pub struct Recovery {
    /// The state of the previous ACK, to see recovery begin and end.
    prev_state: CaState,
    /// cwnd before the loss (or PROBE_RTT), restored afterwards.
    prior_cwnd: f64,
    /// Packet conservation lasts the first round of recovery.
    conservation: Option<RoundFromNow>,
}

/// What recovery makes of cwnd on an ACK.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RecoveryCwnd {
    /// In the first round of recovery: cwnd is decided, the model has no say.
    Conserving(f64),
    /// Losses taken off (and the saved cwnd restored if recovery just ended): the model may
    /// grow it toward its target.
    Adjusted(f64),
}

impl Default for Recovery {
    fn default() -> Self {
        Self {
            prev_state: CaState::Open,
            prior_cwnd: 0.0,
            conservation: None,
        }
    }
}

fn is_recovering(state: CaState) -> bool {
    matches!(state, CaState::Recovery | CaState::Loss)
}

impl Recovery {
    pub fn prior_cwnd(&self) -> f64 {
        self.prior_cwnd
    }

    /// Remember cwnd before it is cut. If it is already cut by an earlier recovery or by
    /// PROBE_RTT, keep the larger of the two.
    pub fn save_cwnd(&mut self, cwnd: f64, in_probe_rtt: bool) {
        if is_recovering(self.prev_state) || in_probe_rtt {
            self.prior_cwnd = self.prior_cwnd.max(cwnd);
        } else {
            self.prior_cwnd = cwnd;
        }
    }

    /// A retransmission timeout: the sender is in Loss, and Linux treats it as the end of a
    /// round, which ends packet conservation.
    pub fn on_timeout(&mut self) {
        self.prev_state = CaState::Loss;
        self.conservation = None;
    }

    pub fn on_ack(&mut self, ack: &Ack, cwnd: f64) -> RecoveryCwnd {
        if self
            .conservation
            .as_mut()
            .is_some_and(|round| round.on_ack(ack))
        {
            self.conservation = None;
        }
        // An ACK for P packets releases at most 2P: losses come off here, the model adds P.
        let mut cwnd = (cwnd - f64::from(ack.lost)).max(1.0);
        let delivered_now = f64::from(ack.in_flight + ack.acked);
        if ack.ca_state == CaState::Recovery && self.prev_state != CaState::Recovery {
            self.conservation = Some(RoundFromNow::start(ack.in_flight));
            cwnd = delivered_now;
        } else if is_recovering(self.prev_state) && !is_recovering(ack.ca_state) {
            cwnd = cwnd.max(self.prior_cwnd);
            self.conservation = None;
        }
        self.prev_state = ack.ca_state;
        match self.conservation {
            Some(_) => RecoveryCwnd::Conserving(cwnd.max(delivered_now)),
            None => RecoveryCwnd::Adjusted(cwnd),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ack(ca_state: CaState, acked: u32, lost: u32, in_flight: u32) -> Ack {
        Ack {
            now_ns: 0,
            acked,
            lost,
            ce_pkts: 0,
            rtt_ns: None,
            prior_in_flight: in_flight + acked,
            in_flight,
            round_start: false,
            ca_state,
            cwnd_limited: true,
            rate: None,
        }
    }

    #[test]
    fn the_first_round_of_recovery_conserves_packets_then_the_saved_cwnd_returns() {
        let mut r = Recovery::default();
        r.save_cwnd(400.0, false);
        // Recovery begins with 300 packets in flight: cwnd drops to what is in the network.
        let first = r.on_ack(&ack(CaState::Recovery, 1, 3, 300), 400.0);
        assert_eq!(first, RecoveryCwnd::Conserving(301.0));
        // New losses come off, but never below a packet out for each one delivered.
        let next = r.on_ack(&ack(CaState::Recovery, 2, 5, 290), 301.0);
        assert_eq!(next, RecoveryCwnd::Conserving(296.0));
        let still = r.on_ack(&ack(CaState::Recovery, 291, 0, 10), 296.0);
        assert_eq!(still, RecoveryCwnd::Conserving(301.0));
        // 300 packets were in flight at the start; 7 + 291 have left, and now 3 more: a packet
        // sent during recovery is acknowledged, the first round is over.
        let after = r.on_ack(&ack(CaState::Recovery, 3, 0, 10), 301.0);
        assert_eq!(after, RecoveryCwnd::Adjusted(301.0));
        let exit = r.on_ack(&ack(CaState::Open, 1, 0, 10), 320.0);
        assert_eq!(exit, RecoveryCwnd::Adjusted(400.0));
    }

    #[test]
    fn losses_outside_recovery_come_off_cwnd() {
        let mut r = Recovery::default();
        assert_eq!(
            r.on_ack(&ack(CaState::Disorder, 1, 2, 50), 60.0),
            RecoveryCwnd::Adjusted(58.0)
        );
    }

    #[test]
    fn a_second_cut_keeps_the_larger_saved_cwnd() {
        let mut r = Recovery::default();
        r.save_cwnd(400.0, false);
        r.on_timeout();
        r.save_cwnd(1.0, false);
        assert_eq!(r.prior_cwnd(), 400.0);
        r.on_ack(&ack(CaState::Loss, 1, 0, 0), 1.0);
        assert_eq!(
            r.on_ack(&ack(CaState::Open, 1, 0, 0), 30.0),
            RecoveryCwnd::Adjusted(400.0)
        );
        r.save_cwnd(4.0, true); // PROBE_RTT's 4 packets never replace a real window
        assert_eq!(r.prior_cwnd(), 400.0);
    }
}
