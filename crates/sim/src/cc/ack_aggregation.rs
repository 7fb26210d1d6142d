//! BBR's allowance for ACK aggregation (Linux `bbr_update_ack_aggregation` and
//! `bbr_ack_aggregation_cwnd`, 4.19 on).
//!
//! When ACKs come in bursts (ACKs queued behind reverse traffic, a receiver acknowledging many
//! segments at once), more data is acknowledged over a stretch than the bandwidth estimate
//! predicts. An epoch starts when the ACKs fall behind the estimate; the excess acknowledged
//! since, at most a window, is the aggregation. cwnd keeps room for the largest excess of
//! the last 5–10 rounds (two windows of 5, the older forgotten as a new one starts), at most
//! 100 ms at the estimated bandwidth, so that the sender is not left idle waiting for the
//! next burst.

/// Rounds per window of the excess's maximum (Linux `bbr_extra_acked_win_rtts`).
const WINDOW_ROUNDS: u32 = 5;
/// An epoch this long in packets is too old to say anything (Linux
/// `bbr_ack_epoch_acked_reset_thresh`, 2^20).
const EPOCH_RESET_PKTS: u64 = 1 << 20;
/// The allowance never exceeds this much time at the estimated bandwidth (Linux
/// `bbr_extra_acked_max_us`).
const MAX_AGGREGATION_NS: f64 = 100e6;

#[derive(Debug, Clone, Copy, Default)]
pub struct AckAggregation {
    /// When the current epoch began (Linux `ack_epoch_mstamp`).
    epoch_start_ns: u64,
    /// Packets acknowledged since then (Linux `ack_epoch_acked`).
    epoch_acked_pkts: u64,
    /// The largest excess of each window (Linux `extra_acked[2]`).
    extra_pkts: [u64; 2],
    /// Which window is current, and its rounds so far.
    window: usize,
    window_rounds: u32,
}

impl AckAggregation {
    /// An ACK that acknowledged `acked_pkts` and carried a rate sample: measure the excess
    /// over what the bandwidth estimate (`bw_pkts_per_ns`) predicts, capped at `cwnd_pkts`.
    pub fn on_ack(
        &mut self,
        now_ns: u64,
        acked_pkts: u64,
        round_start: bool,
        bw_pkts_per_ns: f64,
        cwnd_pkts: f64,
    ) {
        if round_start {
            self.window_rounds += 1;
            if self.window_rounds >= WINDOW_ROUNDS {
                self.window_rounds = 0;
                self.window ^= 1;
                self.extra_pkts[self.window] = 0;
            }
        }
        let epoch_ns = now_ns.saturating_sub(self.epoch_start_ns) as f64;
        let mut expected_pkts = whole_pkts(bw_pkts_per_ns * epoch_ns);
        let behind = self.epoch_acked_pkts <= expected_pkts;
        if behind || self.epoch_acked_pkts + acked_pkts >= EPOCH_RESET_PKTS {
            self.epoch_start_ns = now_ns;
            self.epoch_acked_pkts = 0;
            expected_pkts = 0;
        }
        self.epoch_acked_pkts += acked_pkts;
        let extra_pkts = (self.epoch_acked_pkts - expected_pkts).min(whole_pkts(cwnd_pkts));
        let largest = &mut self.extra_pkts[self.window];
        *largest = (*largest).max(extra_pkts);
    }

    /// The room cwnd keeps for aggregation, in packets, times `gain` (Linux
    /// `bbr_extra_acked_gain`, 1).
    pub fn cwnd_pkts(&self, gain: f64, bw_pkts_per_ns: f64) -> f64 {
        let largest = self.extra_pkts[0].max(self.extra_pkts[1]) as f64;
        let cap = (bw_pkts_per_ns * MAX_AGGREGATION_NS).floor();
        (gain * largest).floor().min(cap)
    }
}

/// `pkts` rounded down, for the non-negative counts here. Through `i64`, which x86-64 converts
/// in one instruction where `u64` takes a dozen on every ACK; the same for any count below
/// 2^63.
fn whole_pkts(pkts: f64) -> u64 {
    pkts as i64 as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    /// 1,000 packets per second.
    const KPPS: f64 = 1e-6;
    const TEN_KPPS: f64 = 1e-5;

    #[test]
    fn acks_at_the_estimated_rate_show_no_aggregation() {
        // 1,000 packets per second, two acknowledged every 2 ms: exactly the estimate.
        let mut agg = AckAggregation::default();
        for i in 1..=500 {
            agg.on_ack(i * 2 * MS, 2, i % 50 == 0, KPPS, 100.0);
        }
        assert!(agg.cwnd_pkts(1.0, KPPS) <= 2.0, "at most the ACK in hand");
    }

    #[test]
    fn a_burst_of_acks_after_a_silence_is_the_excess() {
        // The estimate says 1 packet per ms. Nothing for 20 ms, then 40 packets within 1 ms:
        // the ACKs were behind the estimate, so the burst's first ACK starts an epoch, and
        // all 40 are excess (none was due within the millisecond).
        let mut agg = AckAggregation::default();
        agg.on_ack(100 * MS, 1, false, KPPS, 1000.0);
        for i in 0..40 {
            agg.on_ack(120 * MS + i * 25_000, 1, false, KPPS, 1000.0);
        }
        assert_eq!(agg.cwnd_pkts(1.0, KPPS), 40.0);
        assert_eq!(agg.cwnd_pkts(0.0, KPPS), 0.0, "gain 0 turns it off");
    }

    #[test]
    fn the_excess_is_capped_at_the_window_and_at_100_ms_of_the_estimate() {
        let mut agg = AckAggregation::default();
        agg.on_ack(MS, 1, false, KPPS, 1000.0);
        agg.on_ack(2 * MS, 500, false, KPPS, 300.0);
        assert_eq!(agg.cwnd_pkts(1.0, TEN_KPPS), 300.0, "cwnd");
        assert_eq!(agg.cwnd_pkts(1.0, KPPS), 100.0, "100 ms at 1,000 packets/s");
    }

    #[test]
    fn an_excess_is_forgotten_after_two_windows_of_five_rounds() {
        let mut agg = AckAggregation::default();
        agg.on_ack(MS, 1, false, KPPS, 1000.0);
        agg.on_ack(2 * MS, 30, false, KPPS, 1000.0);
        assert_eq!(agg.cwnd_pkts(1.0, KPPS), 30.0);
        // A pause lets the estimate catch up (a new epoch); then ACKs at the estimated rate,
        // one round every 10 ms. The burst's window lasts 5 rounds, the next 5 more.
        agg.on_ack(100 * MS, 1, false, KPPS, 1000.0);
        let mut now_ns = 100 * MS;
        let mut rounds = 0;
        while agg.cwnd_pkts(1.0, KPPS) > 2.0 {
            now_ns += MS;
            let round_start = now_ns % (10 * MS) == 0;
            rounds += u32::from(round_start);
            agg.on_ack(now_ns, 1, round_start, KPPS, 1000.0);
        }
        assert_eq!(rounds, 2 * WINDOW_ROUNDS);
    }
}
