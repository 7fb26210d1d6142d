//! ProbeRTT (draft-ietf-ccwg-bbr §5.3.4.3): when min_rtt went 5 s without being confirmed, hold
//! in-flight at half the BDP (at least 4 packets) for 200 ms and a round, so a queue drains and
//! the path's delay can be measured again.

use super::state::State;
use super::Bbr3;
use crate::cc::{Ack, Path};

impl Bbr3 {
    /// §5.6.4.5 `ProbeRTTCwnd`.
    pub(super) fn probe_rtt_cwnd(&self) -> f64 {
        self.bdp_multiple(self.params.probe_rtt_cwnd_gain)
            .max(self.params.min_pipe_cwnd_pkts)
    }

    /// §5.3.4.3 `CheckProbeRTT`.
    pub(super) fn check_probe_rtt(&mut self, ack: &Ack, path: &Path) {
        if self.state != State::ProbeRtt && self.min_rtt.probe_expired() && !self.idle_restart {
            self.state = State::ProbeRtt; // `EnterProbeRTT`; the gains come from the state
            self.save_cwnd();
            self.probe_rtt_done_ns = None;
            self.ack_phase = super::probe_bw::AckPhase::ProbeStopping;
            self.start_round(ack.in_flight);
        }
        if self.state == State::ProbeRtt {
            self.handle_probe_rtt(ack, path);
        }
        if ack.acked > 0 {
            self.idle_restart = false;
        }
    }

    /// §5.3.4.3 `HandleProbeRTT`.
    fn handle_probe_rtt(&mut self, ack: &Ack, path: &Path) {
        // Low-rate samples of ProbeRTT are not measurements (`MarkConnectionAppLimited`).
        self.app_limited_until = path.delivered + u64::from(ack.in_flight) + 1;
        match self.probe_rtt_done_ns {
            None if f64::from(ack.in_flight) <= self.probe_rtt_cwnd() => {
                self.probe_rtt_done_ns = Some(ack.now_ns + self.params.probe_rtt_duration_ns);
                self.probe_rtt_round_done = false;
                self.start_round(ack.in_flight);
            }
            None => {}
            Some(_) => {
                self.probe_rtt_round_done |= self.round_start;
                if self.probe_rtt_round_done {
                    self.check_probe_rtt_done(ack.now_ns, ack.in_flight);
                }
            }
        }
    }

    /// §5.3.4.3 `CheckProbeRTTDone`, then §5.3.4.4 `ExitProbeRTT`.
    pub(super) fn check_probe_rtt_done(&mut self, now_ns: u64, in_flight: u32) {
        if self
            .probe_rtt_done_ns
            .is_none_or(|done_ns| now_ns <= done_ns)
        {
            return;
        }
        self.min_rtt.schedule_next_probe(now_ns);
        self.restore_cwnd();
        self.congestion.reset_short_term();
        if self.full_bw.reached() {
            // In-flight is below the BDP already: DOWN's clock restarts, CRUISE at once.
            self.start_probe_bw_down(now_ns, in_flight);
            self.state = State::ProbeBwCruise;
        } else {
            self.state = State::Startup;
        }
    }
}
