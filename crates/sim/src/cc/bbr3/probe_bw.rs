//! The ProbeBW cycle (draft-ietf-ccwg-bbr §5.3.3): DOWN drains below the estimate and below
//! inflight_hi's headroom, CRUISE holds until a randomised 2–3 s (or the Reno-coexistence
//! bound of rounds) has passed, REFILL sends at the estimate for a round with the short-term
//! bounds lifted, UP accelerates until the bandwidth stops growing, a probe loses more than
//! 2 %, or a precautionary probe reaches inflight_hi. The long-term model (max_bw's cycles,
//! inflight_hi) is adapted here (§5.3.3.9 `AdaptLongTermModel`, §5.5.10.2).

use rand::RngExt;

use super::state::State;
use super::{Bbr3, Sample};
use crate::cc::Ack;

/// What the ACKs arriving now say about bandwidth probing (§2.14 `BBR.ack_phase`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckPhase {
    Init,
    Refilling,
    ProbeStarting,
    ProbeFeedback,
    ProbeStopping,
}

impl Bbr3 {
    /// §5.3.3.9 `UpdateProbeBWCyclePhase`.
    pub(super) fn update_probe_bw_cycle_phase(&mut self, ack: &Ack, sample: Option<Sample>) {
        if !self.full_bw.reached() || self.adapt_long_term_model(ack, sample) {
            return;
        }
        match self.state {
            State::ProbeBwDown => self.update_down(ack),
            State::ProbeBwCruise => {
                self.is_time_to_probe_bw(ack);
            }
            State::ProbeBwRefill if self.round_start => {
                self.is_bw_probe_sample = true;
                self.start_probe_bw_up(ack, sample);
            }
            State::ProbeBwUp => self.update_up(ack, sample),
            _ => {}
        }
    }

    /// ProbeBW_DOWN: probe if it is time, else cruise once drained.
    fn update_down(&mut self, ack: &Ack) {
        if !self.is_time_to_probe_bw(ack) && self.is_time_to_cruise(ack) {
            self.state = State::ProbeBwCruise;
        }
    }

    /// ProbeBW_UP: down once the probe is over, which no loss said was too high.
    fn update_up(&mut self, ack: &Ack, sample: Option<Sample>) {
        if self.is_time_to_go_down(ack, sample) {
            self.prev_probe_too_high = false;
            self.start_probe_bw_down(ack.now_ns, ack.in_flight);
        }
    }

    /// §5.3.3.9 `StartProbeBW_DOWN`, with §5.3.3.8.3 `PickProbeWait`: the wait is 2 s plus
    /// up to 1 s and the round bound 0 or 1 rounds ahead, drawn from the flow's seeded stream.
    pub(super) fn start_probe_bw_down(&mut self, now_ns: u64, in_flight: u32) {
        self.congestion.reset_signals();
        self.probe_up.stop();
        self.rounds_since_probe_up = self.rng.random_range(0..=1);
        let extra_ns = self.rng.random_range(0..=self.params.probe_wait_rand_ns);
        self.bw_probe_wait_ns = self.params.probe_wait_base_ns + extra_ns;
        self.cycle_stamp_ns = now_ns;
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round(in_flight);
        self.state = State::ProbeBwDown;
    }

    /// §5.3.3.9 `StartProbeBW_REFILL`.
    fn start_probe_bw_refill(&mut self, ack: &Ack) {
        self.congestion.reset_short_term();
        self.probe_up.restart();
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round(ack.in_flight);
        self.state = State::ProbeBwRefill;
    }

    /// §5.3.3.9 `StartProbeBW_UP`.
    fn start_probe_bw_up(&mut self, ack: &Ack, sample: Option<Sample>) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round(ack.in_flight);
        self.full_bw.reset(sample.map_or(0.0, |s| s.rate_bps));
        self.state = State::ProbeBwUp;
        self.probe_up.raise_slope(self.cwnd);
    }

    /// §5.3.3.8.3 `IsTimeToProbeBW`: the wall-clock wait or the Reno-coexistence rounds.
    pub(super) fn is_time_to_probe_bw(&mut self, ack: &Ack) -> bool {
        let waited = ack.now_ns > self.cycle_stamp_ns + self.bw_probe_wait_ns;
        let reno_rounds =
            (self.target_inflight().max(0.0) as u64).min(self.params.probe_max_rounds);
        if waited || self.rounds_since_probe_up >= reno_rounds {
            self.start_probe_bw_refill(ack);
            return true;
        }
        false
    }

    /// §5.3.3.9 `IsTimeToCruise`: headroom left under inflight_hi and no queue.
    pub(super) fn is_time_to_cruise(&self, ack: &Ack) -> bool {
        let in_flight = f64::from(ack.in_flight);
        in_flight <= self.inflight_with_headroom() && in_flight <= self.inflight(1.0)
    }

    /// §5.3.3.9 `IsTimeToGoDown`. "In flight reaches inflight_hi" is read before this ACK:
    /// after it, an ACK-clocked flight at cwnd = inflight_hi is always just below.
    pub(super) fn is_time_to_go_down(&mut self, ack: &Ack, sample: Option<Sample>) -> bool {
        if self.prev_probe_too_high && f64::from(ack.prior_in_flight) >= self.inflight_hi {
            self.prev_probe_precautionary = true;
            return true;
        }
        if ack.cwnd_limited && self.cwnd >= self.inflight_hi {
            // Bandwidth limited by inflight_hi, not by the path: keep probing.
            self.full_bw.reset(sample.map_or(0.0, |s| s.rate_bps));
            false
        } else {
            self.full_bw.now()
        }
    }

    /// §5.3.3.9 `AdaptLongTermModel`; true if it changed the state.
    pub(super) fn adapt_long_term_model(&mut self, ack: &Ack, sample: Option<Sample>) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            let app_limited = sample.is_some_and(|s| s.is_app_limited);
            if self.state.is_probe_bw() && !app_limited {
                self.cycle_count += 1; // §5.5.6 `AdvanceMaxBwFilter`
            }
            if self.state.is_probe_bw()
                && self.prev_probe_precautionary
                && !self.prev_probe_too_high
            {
                self.start_probe_bw_refill(ack);
                return true;
            }
        }
        if self.is_inflight_too_high(ack) {
            return self.is_bw_probe_sample && self.handle_inflight_too_high(ack, sample);
        }
        if self.inflight_hi.is_finite() {
            self.inflight_hi = self.inflight_hi.max(f64::from(ack.prior_in_flight));
            if self.state == State::ProbeBwUp {
                self.inflight_hi = self.probe_up.grow(
                    self.inflight_hi,
                    ack.acked,
                    self.round_start,
                    self.cwnd,
                    ack.cwnd_limited,
                );
            }
        }
        false
    }

    /// §5.5.10.2 `IsInflightTooHigh`: this round lost more than `loss_thresh` of what was in
    /// flight, or (Google's BBRv3, where ECN applies) more than `ecn_thresh` of the last
    /// round's deliveries were CE-marked.
    pub(super) fn is_inflight_too_high(&self, ack: &Ack) -> bool {
        let lost = self.congestion.round.lost_pkts as f64;
        let too_lossy = lost > f64::from(ack.prior_in_flight) * self.params.loss_thresh;
        let marked = self.congestion.recent_ce_fraction() > self.params.ecn_thresh;
        too_lossy || (self.ecn_applies() && marked)
    }

    /// §5.5.10.2 `HandleInflightTooHigh`: inflight_hi falls to what was in flight, never below
    /// β times the target; a probe going up stops. True if it changed the state.
    fn handle_inflight_too_high(&mut self, ack: &Ack, sample: Option<Sample>) -> bool {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false; // one response per probe
        if !sample.is_some_and(|s| s.is_app_limited) {
            let floor = self.target_inflight() * self.params.beta;
            self.inflight_hi = f64::from(ack.prior_in_flight).max(floor);
        }
        if self.state == State::ProbeBwUp {
            self.start_probe_bw_down(ack.now_ns, ack.in_flight);
            return true;
        }
        false
    }
}
