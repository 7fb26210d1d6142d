//! How ProbeBW_UP raises inflight_hi (draft-ietf-ccwg-bbr §5.3.3.5, §5.3.3.9
//! `RaiseInflightLongtermSlope`, `ProbeInflightLongtermUpward`): by 1, 2, 4, 8 … packets in
//! successive rounds, spread over each round's ACKs, so a larger BDP is found in
//! O(log BDP) rounds.

/// The most doublings of the per-round growth (the draft caps the exponent at 30).
const MAX_GROWTH_ROUNDS: u32 = 30;

#[derive(Debug, Clone, Copy)]
pub struct ProbeUpGrowth {
    /// `BBR.bw_probe_up_rounds`.
    rounds: u32,
    /// `BBR.bw_probe_up_acked`, packets.
    acked_pkts: f64,
    /// `BBR.probe_up_acked_per_inc`: packets acknowledged per packet of growth; infinite
    /// while not growing.
    acked_per_inc_pkts: f64,
}

impl Default for ProbeUpGrowth {
    fn default() -> Self {
        Self {
            rounds: 0,
            acked_pkts: 0.0,
            acked_per_inc_pkts: f64::INFINITY,
        }
    }
}

impl ProbeUpGrowth {
    /// ProbeBW_REFILL starts a probe afresh.
    pub fn restart(&mut self) {
        self.rounds = 0;
        self.acked_pkts = 0.0;
    }

    /// ProbeBW_DOWN: no growth until the next probe.
    pub fn stop(&mut self) {
        self.acked_per_inc_pkts = f64::INFINITY;
    }

    /// §5.3.3.9 `RaiseInflightLongtermSlope`: this round grows by 2^rounds packets.
    pub fn raise_slope(&mut self, cwnd: f64) {
        let growth_this_round = f64::from(1u32 << self.rounds);
        self.rounds = (self.rounds + 1).min(MAX_GROWTH_ROUNDS);
        self.acked_per_inc_pkts = (cwnd / growth_this_round).max(1.0);
    }

    /// §5.3.3.9 `ProbeInflightLongtermUpward`: inflight_hi after an ACK of `acked` packets.
    pub fn grow(
        &mut self,
        inflight_hi: f64,
        acked: u32,
        round_start: bool,
        cwnd: f64,
        cwnd_limited: bool,
    ) -> f64 {
        if !cwnd_limited || cwnd < inflight_hi {
            return inflight_hi; // not using inflight_hi, so no reason to raise it
        }
        self.acked_pkts += f64::from(acked);
        let mut grown = inflight_hi;
        if self.acked_pkts >= self.acked_per_inc_pkts {
            let delta = (self.acked_pkts / self.acked_per_inc_pkts).floor();
            self.acked_pkts -= delta * self.acked_per_inc_pkts;
            grown += delta;
        }
        if round_start {
            self.raise_slope(cwnd);
        }
        grown
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn growth_doubles_each_round_spread_over_the_acks() {
        let mut g = ProbeUpGrowth::default();
        // cwnd 1,000 packets, at inflight_hi's bound; a round is 1,000 ACKs of one packet.
        let (mut hi, cwnd) = (100.0, 1000.0);
        g.raise_slope(cwnd);
        let mut per_round = vec![];
        for _ in 0..4 {
            let before = hi;
            for i in 0..1000 {
                hi = g.grow(hi, 1, i == 999, cwnd, true);
            }
            per_round.push(hi - before);
        }
        assert_eq!(per_round, [1.0, 2.0, 4.0, 8.0]);
    }

    #[test]
    fn no_growth_unless_cwnd_is_at_inflight_hi_and_limiting() {
        let mut g = ProbeUpGrowth::default();
        g.raise_slope(10.0);
        assert_eq!(g.grow(100.0, 50, false, 90.0, true), 100.0, "cwnd below");
        assert_eq!(g.grow(100.0, 50, false, 100.0, false), 100.0, "not limited");
        g.stop();
        assert_eq!(g.grow(100.0, 50, false, 100.0, true), 100.0, "stopped");
    }
}
