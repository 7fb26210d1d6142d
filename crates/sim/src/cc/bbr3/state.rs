//! BBRv3's states and the gains each sets (draft-ietf-ccwg-bbr §5.1, table in §5.6.1).

use super::params::Bbr3Params;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Startup,
    Drain,
    /// Decelerate below the estimate until a queue and some headroom are gone (§5.3.3.1).
    ProbeBwDown,
    /// Send at the estimate until it is time to probe (§5.3.3.2).
    ProbeBwCruise,
    /// One round at the estimate with the short-term bounds lifted (§5.3.3.3).
    ProbeBwRefill,
    /// Accelerate above the estimate (§5.3.3.4).
    ProbeBwUp,
    ProbeRtt,
}

impl State {
    /// The state as a number for the time series (`cc_state` column, docs/bbr3.md): 0 Startup,
    /// 1 Drain, 2 ProbeBW_DOWN, 3 ProbeBW_CRUISE, 4 ProbeBW_REFILL, 5 ProbeBW_UP, 6 ProbeRTT.
    pub fn code(self) -> f64 {
        match self {
            State::Startup => 0.0,
            State::Drain => 1.0,
            State::ProbeBwDown => 2.0,
            State::ProbeBwCruise => 3.0,
            State::ProbeBwRefill => 4.0,
            State::ProbeBwUp => 5.0,
            State::ProbeRtt => 6.0,
        }
    }

    /// §5.3.3.9 `IsInAProbeBWState`.
    pub fn is_probe_bw(self) -> bool {
        matches!(
            self,
            State::ProbeBwDown | State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    /// §5.3.3.9 `IsProbingBW`: the accelerating states, whose losses say where the limit is
    /// rather than that the rate must come down now.
    pub fn is_probing_bw(self) -> bool {
        matches!(
            self,
            State::Startup | State::ProbeBwRefill | State::ProbeBwUp
        )
    }

    /// The pacing gain (§5.6.1 table).
    pub fn pacing_gain(self, p: &Bbr3Params) -> f64 {
        match self {
            State::Startup => p.startup_pacing_gain,
            State::Drain => p.drain_pacing_gain,
            State::ProbeBwDown => p.probe_down_pacing_gain,
            State::ProbeBwCruise | State::ProbeBwRefill | State::ProbeRtt => 1.0,
            State::ProbeBwUp => p.probe_up_pacing_gain,
        }
    }

    /// The cwnd gain (§5.6.1 table); ProbeRTT's bounds cwnd separately (§5.6.4.5).
    pub fn cwnd_gain(self, p: &Bbr3Params) -> f64 {
        match self {
            State::ProbeBwUp => p.probe_up_cwnd_gain,
            State::ProbeRtt => p.probe_rtt_cwnd_gain,
            _ => p.cwnd_gain,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_gains_are_those_of_the_drafts_table() {
        let p = Bbr3Params::default();
        let gains = |s: State| (s.pacing_gain(&p), s.cwnd_gain(&p));
        assert_eq!(gains(State::Startup), (2.77, 2.0));
        assert_eq!(gains(State::Drain), (0.5, 2.0));
        assert_eq!(gains(State::ProbeBwDown), (0.9, 2.0));
        assert_eq!(gains(State::ProbeBwCruise), (1.0, 2.0));
        assert_eq!(gains(State::ProbeBwRefill), (1.0, 2.0));
        assert_eq!(gains(State::ProbeBwUp), (1.25, 2.25));
        assert_eq!(gains(State::ProbeRtt), (1.0, 0.5));
    }
}
