//! Round-trip time estimation and the retransmission timeout (RFC 6298), with Linux's
//! constants: minimum RTO 200 ms (configurable), maximum 120 s, initial 1 s.

use crate::time::{NS_PER_MS, NS_PER_SEC};

/// RFC 6298 §2.1: before any measurement RTO is 1 s (Linux `TCP_TIMEOUT_INIT`).
pub const INITIAL_RTO_NS: u64 = NS_PER_SEC;
/// Linux `TCP_RTO_MAX` (RFC 6298 §2.5 allows a maximum of at least 60 s).
pub const MAX_RTO_NS: u64 = 120 * NS_PER_SEC;
/// Linux `TCP_RTO_MIN`.
pub const LINUX_MIN_RTO_NS: u64 = 200 * NS_PER_MS;

#[derive(Debug, Clone)]
pub struct RttEstimator {
    srtt_ns: u64,
    rttvar_ns: u64,
    min_rtt_ns: u64,
    min_rto_ns: u64,
    /// Number of consecutive timeouts: the RTO doubles for each (RFC 6298 §5.5).
    backoff: u32,
}

impl RttEstimator {
    pub fn new(min_rto_ns: u64) -> Self {
        Self {
            srtt_ns: 0,
            rttvar_ns: 0,
            min_rtt_ns: u64::MAX,
            min_rto_ns,
            backoff: 0,
        }
    }

    /// A new measurement `r` (RFC 6298 §2.2–2.3, alpha = 1/8, beta = 1/4). A fresh sample also
    /// ends any backoff (RFC 6298 §5.7 with Karn's rule: samples never come from
    /// retransmitted segments, the sender sees to that).
    pub fn on_sample(&mut self, r_ns: u64) {
        if self.srtt_ns == 0 {
            self.srtt_ns = r_ns.max(1);
            self.rttvar_ns = r_ns / 2;
        } else {
            let err = self.srtt_ns.abs_diff(r_ns);
            self.rttvar_ns = (3 * self.rttvar_ns + err) / 4;
            self.srtt_ns = (7 * self.srtt_ns + r_ns) / 8;
        }
        self.min_rtt_ns = self.min_rtt_ns.min(r_ns);
        self.backoff = 0;
    }

    pub fn on_timeout(&mut self) {
        self.backoff = (self.backoff + 1).min(16);
    }

    /// The current timeout. RFC 6298 §2.3 computes `SRTT + max(G, 4·RTTVAR)` and rounds up to
    /// the minimum; Linux instead floors the variance term itself at the minimum RTO
    /// (`tcp_rtt_estimator`'s `mdev_max`), giving `SRTT + max(4·RTTVAR, min_rto)`. We follow
    /// Linux: on a steady 200 ms path the RFC form would fire at barely more than one RTT.
    pub fn rto_ns(&self) -> u64 {
        let base = if self.srtt_ns == 0 {
            INITIAL_RTO_NS
        } else {
            self.srtt_ns + (4 * self.rttvar_ns).max(self.min_rto_ns)
        };
        base.saturating_mul(1 << self.backoff).min(MAX_RTO_NS)
    }

    /// Smoothed RTT; 0 before the first sample.
    pub fn srtt_ns(&self) -> u64 {
        self.srtt_ns
    }

    /// Smallest RTT seen; `u64::MAX` before the first sample.
    pub fn min_rtt_ns(&self) -> u64 {
        self.min_rtt_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;

    #[test]
    fn first_sample_sets_srtt_and_half_of_it_as_variance() {
        let mut e = RttEstimator::new(LINUX_MIN_RTO_NS);
        assert_eq!(e.rto_ns(), NS_PER_SEC);
        e.on_sample(100 * MS);
        assert_eq!(e.srtt_ns(), 100 * MS);
        // 100 + max(4 * 50, 200) ms
        assert_eq!(e.rto_ns(), 300 * MS);
    }

    #[test]
    fn steady_samples_shrink_the_variance_to_the_floor() {
        let mut e = RttEstimator::new(LINUX_MIN_RTO_NS);
        for _ in 0..100 {
            e.on_sample(100 * MS);
        }
        assert_eq!(e.rto_ns(), 300 * MS);
        e.on_sample(20 * MS);
        assert_eq!(e.min_rtt_ns(), 20 * MS);
        assert_eq!(e.srtt_ns(), 90 * MS);
    }

    #[test]
    fn timeouts_double_the_rto_up_to_the_maximum_and_a_sample_resets_it() {
        let mut e = RttEstimator::new(LINUX_MIN_RTO_NS);
        e.on_sample(100 * MS);
        e.on_timeout();
        assert_eq!(e.rto_ns(), 600 * MS);
        for _ in 0..20 {
            e.on_timeout();
        }
        assert_eq!(e.rto_ns(), MAX_RTO_NS);
        e.on_sample(100 * MS);
        assert!(e.rto_ns() < NS_PER_SEC);
    }
}
