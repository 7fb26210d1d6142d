//! The full-pipe estimator (draft-ietf-ccwg-bbr §5.3.1.2): three non-application-limited
//! rounds whose delivery rate grew less than 25 % say the bandwidth is used. Unlike v1's, it
//! is restarted at each ProbeBW_UP, which ends when it fires again.

#[derive(Debug, Clone, Copy, Default)]
pub struct FullBw {
    /// The baseline the next rounds must beat (`BBR.full_bw`).
    baseline_bps: f64,
    rounds_without_growth: u32,
    /// Full since the last reset (`BBR.full_bw_now`).
    now: bool,
    /// Ever full (`BBR.full_bw_reached`).
    reached: bool,
}

impl FullBw {
    /// §5.3.1.2 `ResetFullBW`, with a new baseline (`StartProbeBW_UP` and `IsTimeToGoDown`
    /// set it to the latest sample).
    pub fn reset(&mut self, baseline_bps: f64) {
        self.baseline_bps = baseline_bps;
        self.rounds_without_growth = 0;
        self.now = false;
    }

    /// §5.3.1.2 `CheckFullBWReached`, at the end of a round whose sample was not
    /// application-limited, with that sample's rate.
    pub fn on_round(&mut self, delivery_rate_bps: f64, growth: f64, rounds: u32) {
        if self.now {
            return;
        }
        if delivery_rate_bps >= self.baseline_bps * growth {
            self.reset(delivery_rate_bps);
            return;
        }
        self.rounds_without_growth += 1;
        self.now = self.rounds_without_growth >= rounds;
        self.reached |= self.now;
    }

    /// Loss or ECN ended STARTUP (§5.3.1.3).
    pub fn set_reached(&mut self) {
        self.reached = true;
    }

    pub fn now(&self) -> bool {
        self.now
    }

    pub fn reached(&self) -> bool {
        self.reached
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_rounds_under_25_percent_growth_fill_the_pipe_until_reset() {
        let mut f = FullBw::default();
        for bw in [10.0, 20.0, 24.0, 24.9] {
            f.on_round(bw, 1.25, 3);
        }
        assert!(!f.now(), "two rounds without growth");
        f.on_round(24.0, 1.25, 3);
        assert!(f.now() && f.reached());
        f.reset(24.0);
        assert!(!f.now() && f.reached(), "reached stays; now is per probe");
        f.on_round(30.0, 1.25, 3);
        for _ in 0..2 {
            f.on_round(30.0, 1.25, 3);
        }
        assert!(!f.now(), "30 ≥ 1.25 · 24 restarted the count");
        f.on_round(30.0, 1.25, 3);
        assert!(f.now());
    }
}
