//! HyStart++ (RFC 9406): slow start that notices the queue building before it overflows.
//!
//! Each round it keeps the smallest RTT of (at least) the first eight samples. When that minimum
//! has risen by `clamp(last round's minimum / 8, 4 ms, 16 ms)` it leaves standard slow start for
//! Conservative Slow Start (CSS), which grows by a quarter of the packets acknowledged; if a later
//! round's minimum falls back below the one that triggered CSS the exit was spurious and slow
//! start resumes; after five CSS rounds it is over and congestion avoidance begins
//! (ssthresh = cwnd). A loss ends it at any time through the controller's normal response.
//!
//! RFC 9406 §4.3 says to run it only in the initial slow start (ssthresh still infinite), which
//! is where the controllers create it. Not modelled: the per-ACK growth cap L (8 packets when
//! not paced, RFC 9406 §4.3), which no ACK of at most eight packets reaches.

use super::Ack;

/// RFC 9406 §4.3 constants.
const MIN_RTT_THRESH_NS: u64 = 4_000_000;
const MAX_RTT_THRESH_NS: u64 = 16_000_000;
const MIN_RTT_DIVISOR: u64 = 8;
const N_RTT_SAMPLE: u32 = 8;
const CSS_ROUNDS: u32 = 5;
/// CSS grows by the packets acknowledged divided by this (RFC 9406 §4.3).
pub const CSS_GROWTH_DIVISOR: f64 = 4.0;

/// What slow start should do with an ACK.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Grow by the packets acknowledged.
    SlowStart,
    /// Grow by a quarter of them.
    Conservative,
    /// Slow start is over: set ssthresh to cwnd and continue in congestion avoidance.
    Done,
}

#[derive(Debug, Clone)]
pub struct HyStartPlusPlus {
    last_round_min_rtt_ns: u64,
    current_round_min_rtt_ns: u64,
    samples: u32,
    css: Option<Css>,
}

/// Conservative Slow Start under way.
#[derive(Debug, Clone, Copy)]
struct Css {
    /// The round minimum that triggered it (RFC 9406 `cssBaselineMinRtt`).
    baseline_min_rtt_ns: u64,
    rounds: u32,
}

impl Default for HyStartPlusPlus {
    fn default() -> Self {
        Self {
            last_round_min_rtt_ns: u64::MAX,
            current_round_min_rtt_ns: u64::MAX,
            samples: 0,
            css: None,
        }
    }
}

impl HyStartPlusPlus {
    /// Take the ACK's round boundary and RTT sample; say how slow start treats the ACK.
    pub fn on_ack(&mut self, ack: &Ack) -> Phase {
        if ack.round_start && self.start_round() == Phase::Done {
            return Phase::Done;
        }
        if let Some(rtt_ns) = ack.rtt_ns {
            self.current_round_min_rtt_ns = self.current_round_min_rtt_ns.min(rtt_ns);
            self.samples += 1;
        }
        if self.samples >= N_RTT_SAMPLE && self.last_round_min_rtt_ns != u64::MAX {
            self.judge_delay();
        }
        self.phase()
    }

    fn phase(&self) -> Phase {
        if self.css.is_some() {
            Phase::Conservative
        } else {
            Phase::SlowStart
        }
    }

    /// A new round: count CSS rounds and move the round minimum along (RFC 9406 §4.2).
    fn start_round(&mut self) -> Phase {
        if let Some(css) = &mut self.css {
            css.rounds += 1;
            if css.rounds >= CSS_ROUNDS {
                return Phase::Done;
            }
        }
        self.last_round_min_rtt_ns = self.current_round_min_rtt_ns;
        self.current_round_min_rtt_ns = u64::MAX;
        self.samples = 0;
        self.phase()
    }

    /// Enter CSS on a rise in the round minimum; leave it if the minimum falls back.
    fn judge_delay(&mut self) {
        let current = self.current_round_min_rtt_ns;
        match self.css {
            None if current >= self.last_round_min_rtt_ns + self.rtt_thresh_ns() => {
                self.css = Some(Css {
                    baseline_min_rtt_ns: current,
                    rounds: 0,
                });
            }
            Some(css) if current < css.baseline_min_rtt_ns => self.css = None,
            _ => {}
        }
    }

    /// RttThresh = clamp(lastRoundMinRTT / 8, 4 ms, 16 ms).
    fn rtt_thresh_ns(&self) -> u64 {
        (self.last_round_min_rtt_ns / MIN_RTT_DIVISOR).clamp(MIN_RTT_THRESH_NS, MAX_RTT_THRESH_NS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::ack;

    /// One round of ACKs, each with an RTT sample in ms; the phase after each.
    fn round(h: &mut HyStartPlusPlus, rtts_ms: &[u64]) -> Vec<Phase> {
        rtts_ms
            .iter()
            .enumerate()
            .map(|(i, &ms)| {
                h.on_ack(&Ack {
                    round_start: i == 0,
                    rtt_ns: Some(ms * 1_000_000),
                    ..ack(1)
                })
            })
            .collect()
    }

    fn last(phases: Vec<Phase>) -> Phase {
        *phases.last().unwrap()
    }

    #[test]
    fn a_rise_of_an_eighth_of_the_min_rtt_starts_conservative_slow_start() {
        let mut h = HyStartPlusPlus::default();
        assert_eq!(last(round(&mut h, &[100; 8])), Phase::SlowStart);
        assert_eq!(last(round(&mut h, &[112; 8])), Phase::SlowStart); // + 12 ms < 12.5 ms
                                                                      // 112 → 126: the threshold is 14 ms; the eighth sample completes the judgement.
        let phases = round(&mut h, &[126, 126, 126, 126, 126, 126, 126, 126, 126]);
        assert_eq!(phases[6], Phase::SlowStart);
        assert_eq!(phases[7], Phase::Conservative);
        assert_eq!(h.css.unwrap().baseline_min_rtt_ns, 126_000_000);
    }

    #[test]
    fn the_threshold_is_clamped_between_4_and_16_ms() {
        let thresh = |last_ms: u64| {
            let h = HyStartPlusPlus {
                last_round_min_rtt_ns: last_ms * 1_000_000,
                ..Default::default()
            };
            h.rtt_thresh_ns() / 1_000_000
        };
        assert_eq!([thresh(10), thresh(80), thresh(400)], [4, 10, 16]);
    }

    #[test]
    fn fewer_than_eight_samples_judge_nothing() {
        let mut h = HyStartPlusPlus::default();
        round(&mut h, &[100; 8]);
        assert_eq!(last(round(&mut h, &[200; 7])), Phase::SlowStart);
    }

    #[test]
    fn five_css_rounds_end_slow_start() {
        let mut h = HyStartPlusPlus::default();
        round(&mut h, &[100; 8]);
        assert_eq!(last(round(&mut h, &[120; 8])), Phase::Conservative);
        for _ in 0..4 {
            assert_eq!(last(round(&mut h, &[125; 8])), Phase::Conservative);
        }
        assert_eq!(round(&mut h, &[125; 8])[0], Phase::Done);
    }

    #[test]
    fn a_falling_min_rtt_in_css_resumes_slow_start() {
        let mut h = HyStartPlusPlus::default();
        round(&mut h, &[100; 8]);
        assert_eq!(last(round(&mut h, &[120; 8])), Phase::Conservative);
        assert_eq!(
            last(round(&mut h, &[119, 130, 130, 130, 130, 130, 130, 130])),
            Phase::SlowStart
        );
        assert!(h.css.is_none());
    }
}
