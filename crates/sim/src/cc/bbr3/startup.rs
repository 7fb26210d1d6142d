//! Leaving STARTUP and DRAIN (draft-ietf-ccwg-bbr §5.3.1, §5.3.2): STARTUP ends on a
//! bandwidth plateau, on a round that lost more than 2 % in at least six loss events after a
//! round of fast recovery, or (Google's BBRv3) on rounds with more than half their packets
//! CE-marked; DRAIN ends once in-flight is down to the BDP, or after three rounds.

use super::state::State;
use super::{Bbr3, Sample};
use crate::cc::Ack;

impl Bbr3 {
    /// §5.3.1.2 `CheckFullBWReached`: once per round, on a sample not application-limited.
    pub(super) fn check_full_bw_reached(&mut self, sample: Option<Sample>) {
        let Some(s) = sample.filter(|s| !s.is_app_limited) else {
            return;
        };
        if self.round_start {
            let p = &self.params;
            self.full_bw
                .on_round(s.rate_bps, p.full_bw_growth, p.full_bw_rounds);
        }
    }

    /// §5.3.1 `CheckStartupDone`.
    pub(super) fn check_startup_done(&mut self) {
        if self.state != State::Startup {
            return;
        }
        if self.round_start && (self.startup_high_loss() || self.startup_high_ecn()) {
            // §5.3.1.3: the in-flight these losses suggest is safe.
            self.full_bw.set_reached();
            let latest = self.congestion.inflight_latest_pkts();
            self.inflight_hi = self.bdp_multiple(1.0).max(latest);
        }
        if self.full_bw.reached() {
            self.state = State::Drain; // §5.3.2 `EnterDrain`
            self.drain_start_round = self.round_count;
        }
    }

    /// §5.3.1.3 `CheckStartupHighLoss`, on the round just completed.
    fn startup_high_loss(&self) -> bool {
        let round = &self.congestion.last_round;
        let full_round_in_recovery = self
            .recovery_since_round
            .is_some_and(|since| self.round_count > since + 1);
        full_round_in_recovery
            && round.loss_rate() > self.params.loss_thresh
            && round.loss_events >= self.params.startup_full_loss_count
    }

    /// Rounds in a row with more than `ecn_thresh` of their packets marked (Google's BBRv3).
    fn startup_high_ecn(&mut self) -> bool {
        let fraction = self.congestion.last_round.ce_fraction();
        if self.ecn_applies() && fraction > self.params.ecn_thresh {
            self.startup_ecn_rounds += 1;
        } else {
            self.startup_ecn_rounds = 0;
        }
        self.startup_ecn_rounds >= self.params.startup_ecn_rounds
    }

    /// §5.3.2 `CheckDrainDone`.
    pub(super) fn check_drain_done(&mut self, ack: &Ack) {
        let drained = f64::from(ack.in_flight) <= self.inflight(1.0);
        let too_long = self.round_count > self.drain_start_round + self.params.drain_max_rounds;
        if self.state == State::Drain && (drained || too_long) {
            self.start_probe_bw_down(ack.now_ns, ack.in_flight); // §5.3.3.9 `EnterProbeBW`
        }
    }
}
