//! A windowed maximum over virtual time: BBR's bottleneck-bandwidth estimate, the largest
//! delivery rate of the last rounds (v1, Linux `tcp_bbr.c`) or of the last ProbeBW cycles
//! (draft-ietf-ccwg-bbr §5.5.3).

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
