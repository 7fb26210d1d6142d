//! BBR v1's long-term bandwidth estimate, for token-bucket policers (Linux
//! `bbr_lt_bw_sampling`, `bbr_lt_bw_interval_done`, `bbr_reset_lt_bw_sampling`; the kernel
//! cites Flach et al., "An Internet-Wide Analysis of Traffic Policing", SIGCOMM 2016).
//!
//! A policer passes a burst while it has tokens, then drops whatever exceeds its rate. The max
//! filter remembers the burst's rate, so BBR keeps sending above the policed rate and loses a
//! large share of what it sends. From the first loss on, BBR measures the delivery rate over
//! intervals of 4 to 16 rounds, each ending on a loss (the tokens are spent then). When two
//! intervals in a row each lost at least 50/256 of what they delivered and their rates agree
//! within 1/8 or 4 kbit/s, BBR takes itself for policed: for 48 rounds of PROBE_BW it uses
//! their average as its bandwidth and does not probe above it. Running short of data starts
//! the measurement over, since an application-limited rate would underestimate the policer.

use crate::time::{NS_PER_MS, NS_PER_SEC};

/// The fewest rounds in an interval (Linux `bbr_lt_intvl_min_rtts`).
const INTERVAL_MIN_ROUNDS: u32 = 4;
/// An interval longer than this is stale: sampling starts over (Linux: 4 × the minimum).
const INTERVAL_MAX_ROUNDS: u32 = 4 * INTERVAL_MIN_ROUNDS;
/// An interval is lossy when it lost at least this share of what it delivered (Linux
/// `bbr_lt_loss_thresh`, 50/256 ≈ 20%).
const LOSS_THRESH_256THS: u64 = 50;
/// Two intervals' rates agree within 1/8 of the earlier one (Linux `bbr_lt_bw_ratio`)...
const BW_RATIO: f64 = 1.0 / 8.0;
/// ...or within 4 kbit/s (Linux `bbr_lt_bw_diff`, 4000/8 bytes/s).
const BW_DIFF_BPS: f64 = 4000.0;
/// Rounds of PROBE_BW the long-term estimate is used for (Linux `bbr_lt_bw_max_rtts`).
const USE_ROUNDS: u32 = 48;
/// A shorter interval is too short to measure: Linux stamps intervals in whole milliseconds
/// and waits for one to pass.
const MIN_INTERVAL_NS: u64 = NS_PER_MS;

/// What one ACK with a valid rate sample tells the estimate. The counts are the sender's
/// totals since the start (Linux `tp->delivered`, `tp->lost`).
#[derive(Debug, Clone, Copy)]
pub struct LtSample {
    pub now_ns: u64,
    pub delivered_pkts: u64,
    pub lost_pkts: u64,
    /// This ACK marked packets lost (Linux `rs->losses`).
    pub losses: bool,
    pub round_start: bool,
    pub is_app_limited: bool,
    /// BBR is in PROBE_BW, the only mode whose rounds use up the 48.
    pub in_probe_bw: bool,
}

/// What a sample changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LtChange {
    None,
    /// A policer was found: [`LtBw::bw_bps`] is now the estimate.
    Policed,
    /// The 48 rounds are over: back to the max filter, and gain cycling starts again.
    Released,
}

/// Where the current interval began (Linux `lt_last_stamp`, `lt_last_delivered`,
/// `lt_last_lost`), and its rounds so far (`lt_rtt_cnt`).
#[derive(Debug, Clone, Copy, Default)]
struct Interval {
    start_ns: u64,
    delivered_pkts: u64,
    lost_pkts: u64,
    rounds: u32,
}

impl Interval {
    fn start(s: &LtSample) -> Self {
        Self {
            start_ns: s.now_ns,
            delivered_pkts: s.delivered_pkts,
            lost_pkts: s.lost_pkts,
            rounds: 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
pub struct LtBw {
    /// Sampling began with a loss (Linux `lt_is_sampling`).
    sampling: bool,
    interval: Interval,
    /// The previous interval's rate, or the policed rate once found; 0 for none (Linux
    /// `lt_bw`).
    bw_bps: f64,
    /// The policed rate is in use (Linux `lt_use_bw`); `interval.rounds` then counts its rounds.
    in_use: bool,
}

impl LtBw {
    /// The policed rate while it is in use.
    pub fn bw_bps(&self) -> Option<f64> {
        self.in_use.then_some(self.bw_bps)
    }

    /// Nothing to do on an ACK without losses while neither sampling nor in use: the common
    /// case, kept to one test.
    pub fn is_idle(&self) -> bool {
        !(self.sampling || self.in_use)
    }

    /// Linux `bbr_lt_bw_sampling`, on an ACK with a valid rate sample, or on a timeout (Linux
    /// `bbr_set_state(TCP_CA_Loss)`, which counts as a lossy end of a round).
    pub fn on_sample(&mut self, s: &LtSample, mss_bytes: u32) -> LtChange {
        if self.in_use {
            return self.count_use_round(s);
        }
        if !self.sampling {
            if !s.losses {
                return LtChange::None; // wait for the policer's tokens to run out
            }
            self.interval = Interval::start(s);
            self.sampling = true;
        }
        if s.is_app_limited {
            *self = Self::default();
            return LtChange::None;
        }
        self.interval.rounds += u32::from(s.round_start);
        if self.interval.rounds > INTERVAL_MAX_ROUNDS {
            *self = Self::default();
            return LtChange::None;
        }
        match self.interval_bw_bps(s, mss_bytes) {
            Some(bw_bps) => self.interval_done(s, bw_bps),
            None => LtChange::None,
        }
    }

    fn count_use_round(&mut self, s: &LtSample) -> LtChange {
        if !(s.in_probe_bw && s.round_start) {
            return LtChange::None;
        }
        self.interval.rounds += 1;
        if self.interval.rounds < USE_ROUNDS {
            return LtChange::None;
        }
        *self = Self::default();
        LtChange::Released
    }

    /// The interval's delivery rate if it may end on this sample: long enough, ending on a
    /// loss, and lossy enough.
    fn interval_bw_bps(&self, s: &LtSample, mss_bytes: u32) -> Option<f64> {
        let interval = &self.interval;
        if interval.rounds < INTERVAL_MIN_ROUNDS || !s.losses {
            return None;
        }
        let delivered = s.delivered_pkts - interval.delivered_pkts;
        let lost = s.lost_pkts - interval.lost_pkts;
        if delivered == 0 || lost * 256 < LOSS_THRESH_256THS * delivered {
            return None;
        }
        let elapsed_ns = s.now_ns - interval.start_ns;
        if elapsed_ns < MIN_INTERVAL_NS {
            return None;
        }
        let bits = delivered as f64 * f64::from(mss_bytes) * 8.0;
        Some(bits * NS_PER_SEC as f64 / elapsed_ns as f64)
    }

    /// Linux `bbr_lt_bw_interval_done`: a second interval at the first's rate means a
    /// policer, whose rate is their average; otherwise this interval is the one to compare
    /// the next with.
    fn interval_done(&mut self, s: &LtSample, bw_bps: f64) -> LtChange {
        if self.bw_bps > 0.0 {
            let diff_bps = (bw_bps - self.bw_bps).abs();
            if diff_bps <= BW_RATIO * self.bw_bps || diff_bps <= BW_DIFF_BPS {
                self.bw_bps = (bw_bps + self.bw_bps) / 2.0;
                self.in_use = true;
                self.interval.rounds = 0;
                return LtChange::Policed;
            }
        }
        self.bw_bps = bw_bps;
        self.interval = Interval::start(s);
        LtChange::None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = NS_PER_MS;
    /// 10 000 bits: 1 packet per ms is 10 Mb/s.
    const MSS: u32 = 1250;

    /// A flow scripted round by round: 10 ms rounds, each ACK of a round alike.
    struct Script {
        lt: LtBw,
        s: LtSample,
    }

    impl Script {
        fn new() -> Self {
            Self {
                lt: LtBw::default(),
                s: LtSample {
                    now_ns: 0,
                    delivered_pkts: 0,
                    lost_pkts: 0,
                    losses: false,
                    round_start: false,
                    is_app_limited: false,
                    in_probe_bw: true,
                },
            }
        }

        /// One round of 10 ms delivering `delivered` and losing `lost` packets, in ten ACKs;
        /// the losses come on its last ACK. Returns the changes seen.
        fn round(&mut self, delivered: u64, lost: u64) -> Vec<LtChange> {
            let mut changes = Vec::new();
            for i in 0..10 {
                self.s.now_ns += MS;
                self.s.delivered_pkts += delivered / 10;
                self.s.round_start = i == 0;
                self.s.losses = i == 9 && lost > 0;
                self.s.lost_pkts += if self.s.losses { lost } else { 0 };
                let change = self.lt.on_sample(&self.s, MSS);
                if change != LtChange::None {
                    changes.push(change);
                }
            }
            changes
        }
    }

    #[test]
    fn two_consistent_lossy_intervals_mean_a_policer_at_their_average_rate() {
        let mut f = Script::new();
        // 100 packets per 10 ms round is 100 Mb/s; then the policer: 20 Mb/s, 30% lost.
        f.round(100, 0);
        assert!(f.lt.is_idle(), "no loss, no sampling");
        f.round(20, 6);
        let mut changes = Vec::new();
        for _ in 0..8 {
            changes.extend(f.round(20, 6));
        }
        assert_eq!(changes, [LtChange::Policed]);
        let bw = f.lt.bw_bps().expect("in use");
        assert!((bw - 20e6).abs() < 20e6 / 8.0, "{bw}");
    }

    #[test]
    fn intervals_that_disagree_by_more_than_an_eighth_do_not_detect() {
        let mut f = Script::new();
        f.round(20, 6);
        for r in 0..40 {
            // The rate alternates between 20 and 30 Mb/s, one interval (4 rounds) each.
            let delivered = if (r / 4) % 2 == 0 { 20 } else { 30 };
            assert_eq!(f.round(delivered, delivered * 3 / 10), []);
        }
        assert_eq!(f.lt.bw_bps(), None);
    }

    #[test]
    fn losses_below_50_in_256_never_detect() {
        let mut f = Script::new();
        // 100 delivered, 19 lost per round: 48.6/256.
        f.round(100, 19);
        for _ in 0..40 {
            assert_eq!(f.round(100, 19), []);
        }
        assert_eq!(f.lt.bw_bps(), None);
        // 20 of 100 is 51.2/256: lossy enough.
        let changes: Vec<_> = (0..12).flat_map(|_| f.round(100, 20)).collect();
        assert_eq!(changes, [LtChange::Policed]);
    }

    #[test]
    fn the_policed_rate_is_released_after_48_rounds_of_probe_bw() {
        let mut f = Script::new();
        while f.lt.bw_bps().is_none() {
            f.round(20, 6);
        }
        f.s.in_probe_bw = false;
        for _ in 0..60 {
            assert_eq!(f.round(20, 6), [], "rounds outside PROBE_BW do not count");
        }
        f.s.in_probe_bw = true;
        for _ in 0..47 {
            assert_eq!(f.round(20, 6), []);
        }
        assert_eq!(f.round(20, 0), [LtChange::Released]);
        assert_eq!(f.lt.bw_bps(), None);
        assert!(f.lt.is_idle(), "sampling starts over at the next loss");
    }

    #[test]
    fn running_short_of_data_starts_the_measurement_over() {
        let mut f = Script::new();
        for _ in 0..6 {
            f.round(20, 6); // one interval measured, the next half-way
        }
        assert!(f.lt.bw_bps > 0.0);
        f.s.is_app_limited = true;
        f.round(5, 0);
        assert!(f.lt.is_idle());
        assert_eq!(f.lt.bw_bps, 0.0, "the first interval is forgotten");
        f.s.is_app_limited = false;
        let changes: Vec<_> = (0..5).flat_map(|_| f.round(20, 6)).collect();
        assert_eq!(changes, [], "one interval again, not two");
        assert!(f.lt.bw_bps > 0.0);
    }

    #[test]
    fn an_interval_that_runs_past_16_rounds_without_a_lossy_end_is_dropped() {
        let mut f = Script::new();
        f.round(20, 6); // sampling starts
        for _ in 0..16 {
            f.round(20, 0);
        }
        assert!(!f.lt.is_idle());
        f.round(20, 0);
        assert!(f.lt.is_idle(), "round 17: stale");
    }
}
