//! A token-bucket policer: the rate limit of an ISP's access router, which drops what exceeds
//! the contracted rate instead of queueing it (a shaper would queue).
//!
//! Behaviour of Linux's `tc ... action police rate R burst B` with `conform-exceed drop`
//! (`tcf_police_act` in net/sched/act_police.c): the bucket holds at most `burst` bytes of
//! credit and starts full; credit accrues at `rate` with the time since the last packet; a
//! packet conforms when the credit covers its whole size, and then spends it; a packet that
//! does not conform is dropped and spends nothing. Linux counts credit in nanoseconds of
//! transmission time and rounds each packet's cost to whole nanoseconds; here credit is kept
//! exactly, in bits × 10⁹ (`rate_bps × elapsed_ns` adds exactly that), so millions of
//! packets at the rate accumulate no rounding at all.

/// Nano-bits in a byte: the unit of credit is a bit × 10⁻⁹, so that `rate_bps × ns` is exact.
const NANOBITS_PER_BYTE: u128 = 8 * 1_000_000_000;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Policer {
    rate_bps: u64,
    /// The bucket's depth, in nano-bits.
    burst_nanobits: u128,
    /// The credit as of `last_ns`, in nano-bits; at most `burst_nanobits`.
    credit_nanobits: u128,
    last_ns: u64,
}

impl Policer {
    /// A full bucket of `burst_bytes` refilled at `rate_bps` (as tc's police action starts).
    pub fn new(rate_bps: u64, burst_bytes: u64) -> Self {
        let burst_nanobits = u128::from(burst_bytes) * NANOBITS_PER_BYTE;
        Self {
            rate_bps,
            burst_nanobits,
            credit_nanobits: burst_nanobits,
            last_ns: 0,
        }
    }

    /// Whether a packet of `size_bytes` arriving at `now_ns` conforms (and spends its credit);
    /// `false`: the policer drops it. Time given earlier than a previous call counts as that
    /// call's time (a real-time caller may read a stamp late).
    pub fn conforms(&mut self, now_ns: u64, size_bytes: u32) -> bool {
        let elapsed_ns = now_ns.saturating_sub(self.last_ns);
        self.last_ns = self.last_ns.max(now_ns);
        let earned = u128::from(self.rate_bps) * u128::from(elapsed_ns);
        self.credit_nanobits = (self.credit_nanobits + earned).min(self.burst_nanobits);
        let cost = u128::from(size_bytes) * NANOBITS_PER_BYTE;
        if cost > self.credit_nanobits {
            return false;
        }
        self.credit_nanobits -= cost;
        true
    }

    /// The credit at the last call, in whole bytes.
    #[cfg(test)]
    fn credit_bytes(&self) -> u64 {
        (self.credit_nanobits / NANOBITS_PER_BYTE) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 8 Mb/s: a byte of credit every microsecond, a 1000-byte packet every millisecond.
    const RATE_BPS: u64 = 8_000_000;
    const MS: u64 = 1_000_000;

    /// Offer `n` packets of `size` at a fixed gap starting at `start_ns`; how many conform.
    fn passed(p: &mut Policer, start_ns: u64, gap_ns: u64, n: u64, size: u32) -> u64 {
        (0..n)
            .filter(|i| p.conforms(start_ns + i * gap_ns, size))
            .count() as u64
    }

    #[test]
    fn arrivals_exactly_at_the_rate_all_conform() {
        // A one-packet bucket: each packet spends all the credit the gap before it earned.
        let mut p = Policer::new(RATE_BPS, 1000);
        assert_eq!(passed(&mut p, 0, MS, 100_000, 1000), 100_000);
        assert_eq!(p.credit_bytes(), 0);
        // One nanosecond early, the next packet lacks one byte's thousandth of credit.
        assert!(!p.conforms(100_000 * MS - 1, 1000));
    }

    #[test]
    fn a_full_bucket_passes_its_burst_back_to_back_then_nothing() {
        let mut p = Policer::new(RATE_BPS, 64_000);
        assert_eq!(passed(&mut p, 0, 0, 100, 1000), 64);
        assert_eq!(p.credit_bytes(), 0);
        // Half a millisecond later half a packet of credit: still not enough, and a refused
        // packet spends nothing, so at 1 ms the next one conforms.
        assert!(!p.conforms(MS / 2, 1000));
        assert_eq!(p.credit_bytes(), 500);
        assert!(p.conforms(MS, 1000));
    }

    #[test]
    fn a_long_idle_period_refills_to_the_burst_only() {
        let mut p = Policer::new(RATE_BPS, 10_000);
        assert_eq!(passed(&mut p, 0, 0, 10, 1000), 10);
        // An hour idle earns 3.6 GB of credit; the bucket keeps 10 KB of it.
        let hour_ns = 3_600_000 * MS;
        assert_eq!(passed(&mut p, hour_ns, 0, 20, 1000), 10);
    }

    #[test]
    fn a_packet_larger_than_the_burst_never_conforms() {
        let mut p = Policer::new(RATE_BPS, 1499);
        assert!(!p.conforms(1_000 * MS, 1500));
        assert!(p.conforms(1_000 * MS, 1499));
    }

    #[test]
    fn overload_passes_the_rate_plus_the_burst_without_drift() {
        // Offered at 1.5 × the rate for 1000 s with 1500-byte packets: what passes is the
        // burst plus rate × time, to within one packet, however long the run.
        let mut p = Policer::new(RATE_BPS, 30_000);
        let gap_ns = 1_000_000; // 1500 B per ms = 12 Mb/s
        let n = 1_000_000;
        let passed_bytes = 1500 * passed(&mut p, 0, gap_ns, n, 1500);
        let allowed_bytes = 30_000 + RATE_BPS / 8 * (n - 1) * gap_ns / 1_000_000_000;
        assert!(
            allowed_bytes - passed_bytes < 1500,
            "{passed_bytes} vs {allowed_bytes}"
        );
    }

    #[test]
    fn time_read_late_does_not_run_backwards() {
        let mut p = Policer::new(RATE_BPS, 1000);
        assert!(p.conforms(10 * MS, 1000));
        // A stamp 1 ms older than the last counts as the last: no credit, no underflow.
        assert!(!p.conforms(9 * MS, 1000));
        assert!(p.conforms(11 * MS, 1000));
    }
}
