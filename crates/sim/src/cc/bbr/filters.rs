//! The two estimates of BBR's path model: the bottleneck bandwidth, a windowed maximum of
//! delivery-rate samples, and the round-trip propagation time, a minimum that expires
//! (Cardwell et al., ACM Queue 2016; Linux `tcp_bbr.c`).

use std::collections::VecDeque;

/// The largest value sampled in the last `window_rounds` rounds (Linux keeps the bottleneck
/// bandwidth with `minmax_running_max` over `bbr_bw_rtts` rounds). Kept exactly rather than
/// with Linux's three-sample approximation: at most one entry per round, values decreasing
/// from the front, so the front is the maximum.
#[derive(Debug, Clone)]
pub struct MaxFilter {
    window_rounds: u64,
    /// `(round, value)`, rounds increasing and values decreasing.
    best: VecDeque<(u64, f64)>,
}

impl MaxFilter {
    pub fn new(window_rounds: u64) -> Self {
        Self {
            window_rounds,
            best: VecDeque::new(),
        }
    }

    /// A sample taken in `round`. As in Linux the window moves only when samples arrive, so a
    /// quiet or application-limited spell never erases the estimate. Returns whether the
    /// maximum changed, which most samples leave as it was.
    pub fn update(&mut self, round: u64, value: f64) -> bool {
        let before = self.get();
        while self.best.back().is_some_and(|&(_, best)| best <= value) {
            self.best.pop_back();
        }
        if self.best.back().is_none_or(|&(r, _)| r < round) {
            self.best.push_back((round, value));
        }
        // A sample of round r counts until round r + window (Linux expires it once its age
        // exceeds the window).
        while self
            .best
            .front()
            .is_some_and(|&(r, _)| round.saturating_sub(r) > self.window_rounds)
        {
            self.best.pop_front();
        }
        self.get() != before
    }

    /// The maximum, 0 before any sample.
    pub fn get(&self) -> f64 {
        self.best.front().map_or(0.0, |&(_, best)| best)
    }
}

/// The smallest RTT seen, replaced by any sample once it is older than `window_ns`: BBR v1
/// keeps one value and its time stamp rather than a windowed filter (Linux
/// `bbr_update_min_rtt`, `bbr_min_rtt_win_sec`).
#[derive(Debug, Clone, Copy)]
pub struct MinRtt {
    window_ns: u64,
    rtt_ns: Option<u64>,
    /// When the estimate expires, stamp plus window (`u64::MAX` before the first sample):
    /// every ACK asks, so the sum is kept.
    expires_ns: u64,
}

impl MinRtt {
    pub fn new(window_ns: u64) -> Self {
        Self {
            window_ns,
            rtt_ns: None,
            expires_ns: u64::MAX,
        }
    }

    pub fn get(&self) -> Option<u64> {
        self.rtt_ns
    }

    /// The estimate has gone `window_ns` without being confirmed; time for PROBE_RTT.
    pub fn is_expired(&self, now_ns: u64) -> bool {
        now_ns > self.expires_ns
    }

    /// Returns whether the estimate changed.
    pub fn update(&mut self, now_ns: u64, sample_ns: u64) -> bool {
        if self.is_expired(now_ns) || self.rtt_ns.is_none_or(|rtt| sample_ns < rtt) {
            let changed = self.rtt_ns != Some(sample_ns);
            self.rtt_ns = Some(sample_ns);
            self.restamp(now_ns);
            return changed;
        }
        false
    }

    /// PROBE_RTT has just measured the path with an empty queue: the estimate is fresh.
    pub fn restamp(&mut self, now_ns: u64) {
        self.expires_ns = now_ns + self.window_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn the_max_is_kept_for_ten_rounds_after_its_own() {
        let mut f = MaxFilter::new(10);
        f.update(0, 100.0);
        f.update(5, 60.0);
        f.update(10, 50.0);
        assert_eq!(
            f.get(),
            100.0,
            "round 0's sample is 10 rounds old: still in"
        );
        f.update(11, 50.0);
        assert_eq!(
            f.get(),
            60.0,
            "11 rounds old: out; round 5's is the max now"
        );
        f.update(16, 40.0);
        assert_eq!(f.get(), 50.0);
    }

    #[test]
    fn a_larger_sample_replaces_everything_at_once() {
        let mut f = MaxFilter::new(10);
        for (round, value) in [(0, 30.0), (1, 20.0), (2, 10.0)] {
            f.update(round, value);
        }
        f.update(3, 35.0);
        assert_eq!(f.best, [(3, 35.0)]);
    }

    #[test]
    fn one_entry_per_round_keeps_the_filter_small() {
        let mut f = MaxFilter::new(10);
        for i in 0..1000 {
            f.update(i / 100, 1000.0 - f64::from(i as u32)); // every sample smaller than the last
        }
        assert!(f.best.len() <= 11, "{}", f.best.len());
        assert_eq!(f.get(), 1000.0);
    }

    #[test]
    fn the_min_rtt_is_replaced_by_a_smaller_sample_or_any_after_ten_seconds() {
        let mut m = MinRtt::new(10 * S);
        assert!(
            !m.is_expired(100 * S),
            "nothing to expire before the first sample"
        );
        m.update(S, 40);
        m.update(2 * S, 45);
        assert_eq!(m.get(), Some(40));
        m.update(3 * S, 38);
        assert_eq!(m.get(), Some(38));
        assert!(!m.is_expired(13 * S));
        assert!(m.is_expired(13 * S + 1));
        m.update(13 * S + 1, 45);
        assert_eq!(m.get(), Some(45));
        assert!(!m.is_expired(13 * S + 2));
    }
}
