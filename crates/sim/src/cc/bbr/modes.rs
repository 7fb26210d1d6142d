//! BBR v1's four modes and their gains (Cardwell et al., ACM Queue 2016; Linux `tcp_bbr.c`):
//! STARTUP doubles the sending rate each round until the pipe is full,
//! DRAIN empties the queue STARTUP built, PROBE_BW cruises at the estimated bandwidth with a
//! probe up and a drain down once per eight phases, and PROBE_RTT briefly drops to 4 packets
//! in flight so the propagation delay can be measured again.

use std::f64::consts::LN_2;

use rand::RngExt;
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::cc::round_from_now::RoundFromNow;
use crate::cc::Ack;

/// STARTUP's pacing and cwnd gain, 2/ln 2 ≈ 2.885: the smallest gain that still doubles the
/// delivery rate every round (Linux `bbr_high_gain`, 2885/1000 + 1 in 8-bit fixed point).
pub const HIGH_GAIN: f64 = 2.0 / LN_2;
/// DRAIN's pacing gain, the inverse: it drains in one round the queue a round of STARTUP
/// built (Linux `bbr_drain_gain`).
pub const DRAIN_GAIN: f64 = 1.0 / HIGH_GAIN;
/// PROBE_BW's pacing gains, one phase each: probe for more bandwidth, drain what the probe
/// queued, cruise for six (Linux `bbr_pacing_gain`).
pub const PROBE_BW_GAINS: [f64; 8] = [1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0];
/// The phase PROBE_BW never starts in: draining a queue that was never built loses rate.
const DRAIN_PHASE: usize = 1;
/// The fewest packets BBR keeps in flight, and PROBE_RTT's window (Linux
/// `bbr_cwnd_min_target`).
pub const MIN_CWND_PKTS: f64 = 4.0;

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Mode {
    Startup,
    Drain,
    ProbeBw(GainCycle),
    ProbeRtt(ProbeRtt),
}

impl Mode {
    /// The mode as a number for the time series, on bbr3's scale (docs/bbr3.md): 0 STARTUP,
    /// 1 DRAIN, 2 PROBE_BW (its phase shows in the pacing gain), 6 PROBE_RTT.
    pub fn code(&self) -> f64 {
        match self {
            Mode::Startup => 0.0,
            Mode::Drain => 1.0,
            Mode::ProbeBw(_) => 2.0,
            Mode::ProbeRtt(_) => 6.0,
        }
    }

    pub fn pacing_gain(&self) -> f64 {
        match self {
            Mode::Startup => HIGH_GAIN,
            Mode::Drain => DRAIN_GAIN,
            Mode::ProbeBw(cycle) => cycle.gain(),
            Mode::ProbeRtt(_) => 1.0,
        }
    }

    /// `probe_bw_gain` is PROBE_BW's cwnd gain (Linux `bbr_cwnd_gain` = 2).
    pub fn cwnd_gain(&self, probe_bw_gain: f64) -> f64 {
        match self {
            Mode::Startup | Mode::Drain => HIGH_GAIN,
            Mode::ProbeBw(_) => probe_bw_gain,
            Mode::ProbeRtt(_) => 1.0,
        }
    }

    /// PROBE_BW's probing phase, which gets 2 packets of extra cwnd (Linux
    /// `bbr_quantization_budget`) so it rises above the BDP even when the BDP is small.
    pub fn is_probing_up(&self) -> bool {
        matches!(self, Mode::ProbeBw(cycle) if cycle.phase == 0)
    }
}

/// PROBE_BW's position in the gain cycle (Linux `cycle_idx`, `cycle_mstamp`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GainCycle {
    phase: usize,
    phase_start_ns: u64,
}

impl GainCycle {
    /// A random phase other than the draining one, so that flows entering PROBE_BW together
    /// do not probe in step (Linux `bbr_reset_probe_bw_mode`: 7 phases, drawn uniformly).
    pub fn start(now_ns: u64, rng: &mut Xoshiro256PlusPlus) -> Self {
        let phases = PROBE_BW_GAINS.len();
        let skip = rng.random_range(0..phases - 1);
        Self {
            phase: (DRAIN_PHASE + 1 + skip) % phases,
            phase_start_ns: now_ns,
        }
    }

    pub fn gain(&self) -> f64 {
        PROBE_BW_GAINS[self.phase]
    }

    #[cfg(test)]
    pub fn phase(&self) -> usize {
        self.phase
    }

    /// Linux `bbr_is_next_cycle_phase`. Each phase lasts a min_rtt, except that probing
    /// continues until the extra packets are actually in flight (or a loss says there is no
    /// room), and draining stops as soon as in-flight is back to the BDP. `in_flight` is
    /// before this ACK; `inflight_for(gain)` is the in-flight target for a gain.
    pub fn phase_done(
        &self,
        ack: &Ack,
        min_rtt_ns: u64,
        inflight_for: impl Fn(f64) -> f64,
    ) -> bool {
        let full_length = self.full_length(ack.now_ns, min_rtt_ns);
        let in_flight = f64::from(ack.prior_in_flight);
        let gain = self.gain();
        if gain > 1.0 {
            full_length && (ack.lost > 0 || in_flight >= inflight_for(gain))
        } else if gain < 1.0 {
            full_length || in_flight <= inflight_for(1.0)
        } else {
            full_length
        }
    }

    /// The phase has lasted a min_rtt.
    pub fn full_length(&self, now_ns: u64, min_rtt_ns: u64) -> bool {
        now_ns - self.phase_start_ns > min_rtt_ns
    }

    pub fn advance(&mut self, now_ns: u64) {
        self.phase = (self.phase + 1) % PROBE_BW_GAINS.len();
        self.phase_start_ns = now_ns;
    }
}

/// PROBE_RTT's progress: it ends once in-flight has been at most 4 packets for the probe
/// duration and for a full round (Linux `bbr_update_min_rtt`, `bbr_check_probe_rtt_done`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ProbeRtt {
    /// Set when in-flight first reaches the floor: the earliest end and the round to wait for.
    hold: Option<(u64, RoundFromNow)>,
    round_done: bool,
}

impl ProbeRtt {
    /// Count this ACK; true when PROBE_RTT is over.
    pub fn on_ack(&mut self, ack: &Ack, duration_ns: u64) -> bool {
        match &mut self.hold {
            None => {
                if f64::from(ack.in_flight) <= MIN_CWND_PKTS {
                    self.hold =
                        Some((ack.now_ns + duration_ns, RoundFromNow::start(ack.in_flight)));
                }
                false
            }
            Some((_, round)) => {
                self.round_done |= round.on_ack(ack);
                self.round_done && self.held_long_enough(ack.now_ns)
            }
        }
    }

    /// The time part alone, for a restart after idle (Linux checks only that then).
    pub fn held_long_enough(&self, now_ns: u64) -> bool {
        self.hold.is_some_and(|(until_ns, _)| now_ns > until_ns)
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::cc::testing;

    const MS: u64 = 1_000_000;

    fn ack(now_ns: u64, in_flight: u32) -> Ack {
        Ack {
            now_ns,
            prior_in_flight: in_flight,
            in_flight,
            ..testing::ack(1)
        }
    }

    #[test]
    fn the_gains_are_those_of_the_paper() {
        assert!((HIGH_GAIN - 2.885).abs() < 0.001);
        assert!((DRAIN_GAIN - 0.3466).abs() < 0.0001);
        assert_eq!(
            PROBE_BW_GAINS.iter().sum::<f64>(),
            8.0,
            "the cycle averages a gain of 1"
        );
        assert_eq!(Mode::Startup.cwnd_gain(2.0), HIGH_GAIN);
        assert_eq!(Mode::Drain.cwnd_gain(2.0), HIGH_GAIN);
        assert_eq!(Mode::ProbeRtt(ProbeRtt::default()).pacing_gain(), 1.0);
    }

    #[test]
    fn probe_bw_starts_in_any_phase_but_the_draining_one() {
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
        let mut seen = [0; 8];
        for _ in 0..700 {
            seen[GainCycle::start(0, &mut rng).phase()] += 1;
        }
        assert_eq!(seen[DRAIN_PHASE], 0);
        assert!(
            seen.iter()
                .enumerate()
                .all(|(i, &n)| i == DRAIN_PHASE || n > 60),
            "{seen:?}"
        );
    }

    #[test]
    fn cruising_phases_last_one_min_rtt() {
        let cycle = GainCycle {
            phase: 2,
            phase_start_ns: 0,
        };
        let inflight_for = |gain: f64| 100.0 * gain;
        assert!(!cycle.phase_done(&ack(40 * MS, 0), 40 * MS, inflight_for));
        assert!(cycle.phase_done(&ack(40 * MS + 1, 500), 40 * MS, inflight_for));
    }

    #[test]
    fn probing_lasts_until_the_extra_packets_are_in_flight_or_a_loss() {
        let cycle = GainCycle {
            phase: 0,
            phase_start_ns: 0,
        };
        let inflight_for = |gain: f64| 100.0 * gain;
        assert!(
            !cycle.phase_done(&ack(30 * MS, 125), 40 * MS, inflight_for),
            "too early"
        );
        assert!(
            !cycle.phase_done(&ack(50 * MS, 124), 40 * MS, inflight_for),
            "not there yet"
        );
        assert!(cycle.phase_done(&ack(50 * MS, 125), 40 * MS, inflight_for));
        let loss = Ack {
            lost: 1,
            ce_pkts: 0,
            ..ack(50 * MS, 110)
        };
        assert!(cycle.phase_done(&loss, 40 * MS, inflight_for));
    }

    #[test]
    fn draining_stops_at_the_bdp_or_after_one_min_rtt() {
        let cycle = GainCycle {
            phase: 1,
            phase_start_ns: 0,
        };
        let inflight_for = |gain: f64| 100.0 * gain;
        assert!(!cycle.phase_done(&ack(10 * MS, 101), 40 * MS, inflight_for));
        assert!(cycle.phase_done(&ack(10 * MS, 100), 40 * MS, inflight_for));
        assert!(cycle.phase_done(&ack(41 * MS, 150), 40 * MS, inflight_for));
    }

    #[test]
    fn probe_rtt_holds_four_packets_for_200_ms_and_a_round() {
        let mut p = ProbeRtt::default();
        assert!(
            !p.on_ack(&ack(0, 30), 200 * MS),
            "in-flight not down to 4 yet"
        );
        assert!(!p.on_ack(&ack(10 * MS, 4), 200 * MS)); // hold until 210 ms, round of 4
        assert!(
            !p.on_ack(
                &Ack {
                    acked: 4,
                    ..ack(50 * MS, 4)
                },
                200 * MS
            ),
            "4 left: not a round"
        );
        assert!(
            !p.on_ack(&ack(90 * MS, 4), 200 * MS),
            "a round, but not 200 ms"
        );
        assert!(!p.on_ack(&ack(210 * MS, 4), 200 * MS));
        assert!(p.on_ack(&ack(210 * MS + 1, 4), 200 * MS));
    }
}
