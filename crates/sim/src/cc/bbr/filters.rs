//! BBR v1's round-trip propagation time estimate, a minimum that expires (Cardwell et al., ACM
//! Queue 2016; Linux `tcp_bbr.c`). The bandwidth estimate is `cc::max_filter`.

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
