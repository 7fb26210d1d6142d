//! STARTUP's exit test: the pipe is full once the bandwidth estimate stops growing (Cardwell et
//! al. 2016; Linux `bbr_check_full_bw_reached`).

/// Growth per round that still says more bandwidth is available (Linux `bbr_full_bw_thresh`):
/// STARTUP doubles the rate each round, so a 25 % gain is well below what a free path gives.
const GROWTH: f64 = 1.25;
/// Rounds without that growth before the pipe counts as full (Linux `bbr_full_bw_cnt`).
const ROUNDS: u32 = 3;

#[derive(Debug, Clone, Copy, Default)]
pub struct FullPipe {
    /// The estimate that the next rounds must beat by 25 % (Linux `full_bw`).
    plateau_bps: f64,
    rounds_without_growth: u32,
    reached: bool,
}

impl FullPipe {
    /// At the end of each round whose sample was not application-limited, with the current
    /// bandwidth estimate. Once reached, it stays reached.
    pub fn on_round(&mut self, bw_bps: f64) {
        if self.reached {
            return;
        }
        if bw_bps >= self.plateau_bps * GROWTH {
            self.plateau_bps = bw_bps;
            self.rounds_without_growth = 0;
            return;
        }
        self.rounds_without_growth += 1;
        self.reached = self.rounds_without_growth >= ROUNDS;
    }

    pub fn reached(&self) -> bool {
        self.reached
    }

    /// After a retransmission timeout Linux measures the plateau afresh (`full_bw = 0`).
    pub fn forget_plateau(&mut self) {
        self.plateau_bps = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_rounds_under_25_percent_growth_fill_the_pipe() {
        let mut p = FullPipe::default();
        for bw in [10.0, 20.0, 40.0, 45.0, 49.9] {
            p.on_round(bw);
        }
        assert!(!p.reached());
        p.on_round(50.0); // 1.25 · 40: growth again, the count restarts
        for bw in [55.0, 60.0] {
            p.on_round(bw);
        }
        assert!(!p.reached());
        p.on_round(62.0);
        assert!(p.reached());
        p.on_round(1000.0);
        assert!(p.reached(), "once full, always full");
    }
}
