//! Random Early Detection (Floyd & Jacobson 1993; RFC 7567 recommends AQM, RFC 2309 §3
//! describes RED), decided when a packet arrives, so it fits the analytic FIFO link.
//!
//! At each arrival the average queue `avg` (packets) moves toward the instantaneous backlog
//! `q` by the weight `w`: `avg ← (1−w)·avg + w·q`. An arrival to an empty queue instead decays
//! `avg` as if `m = idle/packet_time` packets had found the queue empty: `avg ← (1−w)^m·avg`.
//! Between `min_th` and `max_th` a packet is dropped with `p_b = max_p·(avg−min_th)/(max_th−min_th)`,
//! spread by the count of packets since the last drop: `p_a = p_b/(1 − count·p_b)`, so drops are
//! roughly evenly spaced rather than clustered. In gentle mode `p_b` rises linearly from `max_p`
//! to 1 between `max_th` and `2·max_th`; beyond (or beyond `max_th` when not gentle) every
//! arrival is dropped.
//!
//! With `ecn` (RFC 3168 §7, `tc red ecn`) an ECN-capable packet is marked where it would have
//! been dropped, in the forced region too unless `harddrop` (as Linux's `red_enqueue`); a
//! Not-ECT packet is dropped as before.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::Verdict;
use crate::Ecn;

/// The contract's `{"name": "red", ...}`; thresholds in packets.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedParams {
    pub min_th_pkts: f64,
    pub max_th_pkts: f64,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
    /// Mark ECN-capable packets instead of dropping them.
    pub ecn: bool,
    /// With `ecn`: drop, not mark, once the average is in the forced region.
    pub harddrop: bool,
}

#[derive(Debug, Clone)]
pub struct Red {
    params: RedParams,
    avg_pkts: f64,
    /// Arrivals since the last drop while `avg` was in the probabilistic region; −1 when
    /// `avg` was last below `min_th` (Floyd & Jacobson's initial value).
    count: i64,
    rng: Xoshiro256PlusPlus,
}

impl Red {
    pub fn new(params: RedParams, seed: u64) -> Self {
        Self {
            params,
            avg_pkts: 0.0,
            count: -1,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    pub fn params(&self) -> &RedParams {
        &self.params
    }

    /// The average queue after the last arrival (packets).
    pub fn avg_pkts(&self) -> f64 {
        self.avg_pkts
    }

    /// The fate of a packet of codepoint `ecn` arriving at `now_ns` onto `backlog_pkts` (queued
    /// plus the one in transmission). `idle_since_ns` is when the link last became empty if it
    /// is empty now; `packet_time_ns` is the transmission time of a typical packet (the
    /// arriving one). Called for every arrival, before the hard limit is checked.
    pub fn on_arrival(
        &mut self,
        now_ns: u64,
        backlog_pkts: u64,
        idle_since_ns: Option<u64>,
        packet_time_ns: u64,
        ecn: Ecn,
    ) -> Verdict {
        self.update_avg(now_ns, backlog_pkts, idle_since_ns, packet_time_ns);
        match self.decide() {
            Decision::Pass => Verdict::Pass,
            Decision::Early => Verdict::signal(self.params.ecn, ecn),
            Decision::Forced => Verdict::signal(self.params.ecn && !self.params.harddrop, ecn),
        }
    }

    fn update_avg(
        &mut self,
        now_ns: u64,
        backlog_pkts: u64,
        idle_since_ns: Option<u64>,
        packet_time_ns: u64,
    ) {
        let w = self.params.weight;
        match idle_since_ns {
            Some(since) if backlog_pkts == 0 => {
                let m = now_ns.saturating_sub(since) as f64 / packet_time_ns.max(1) as f64;
                self.avg_pkts *= (1.0 - w).powf(m);
            }
            _ => self.avg_pkts = (1.0 - w) * self.avg_pkts + w * backlog_pkts as f64,
        }
    }

    fn decide(&mut self) -> Decision {
        let p = &self.params;
        let avg = self.avg_pkts;
        if avg < p.min_th_pkts {
            self.count = -1;
            return Decision::Pass;
        }
        let forced_from = if p.gentle {
            2.0 * p.max_th_pkts
        } else {
            p.max_th_pkts
        };
        if avg >= forced_from {
            self.count = 0;
            return Decision::Forced;
        }
        self.count += 1;
        let p_a = spaced_probability(base_probability(p, avg), self.count);
        if p_a >= 1.0 || self.rng.random::<f64>() < p_a {
            self.count = 0;
            return Decision::Early;
        }
        Decision::Pass
    }
}

/// Where the average put an arrival.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decision {
    Pass,
    /// Chosen by the probability between the thresholds.
    Early,
    /// Beyond the thresholds: every arrival.
    Forced,
}

/// `p_b` for `min_th ≤ avg < (2·)max_th`.
fn base_probability(p: &RedParams, avg: f64) -> f64 {
    if avg < p.max_th_pkts {
        p.max_p * (avg - p.min_th_pkts) / (p.max_th_pkts - p.min_th_pkts)
    } else {
        // Gentle RED: from max_p at max_th up to 1 at 2·max_th.
        p.max_p + (1.0 - p.max_p) * (avg - p.max_th_pkts) / p.max_th_pkts
    }
}

/// `p_a = p_b/(1 − count·p_b)`, certain once `count·p_b ≥ 1`.
fn spaced_probability(p_b: f64, count: i64) -> f64 {
    let denom = 1.0 - count as f64 * p_b;
    if denom <= 0.0 {
        1.0
    } else {
        (p_b / denom).min(1.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(weight: f64, gentle: bool) -> RedParams {
        RedParams {
            min_th_pkts: 5.0,
            max_th_pkts: 15.0,
            max_p: 0.1,
            weight,
            gentle,
            ecn: false,
            harddrop: false,
        }
    }

    #[test]
    fn the_average_is_an_ewma_of_the_backlog_at_arrivals() {
        let mut red = Red::new(params(0.5, true), 1);
        for (q, avg) in [(4, 2.0), (4, 3.0), (8, 5.5)] {
            red.update_avg(0, q, None, 1000);
            assert_eq!(red.avg_pkts(), avg);
        }
    }

    #[test]
    fn an_idle_queue_decays_the_average_per_packet_time() {
        let mut red = Red::new(params(0.5, true), 1);
        red.avg_pkts = 5.5;
        // Idle for 3 packet times: avg · 0.5³ = 0.6875.
        red.update_avg(13_000, 0, Some(10_000), 1000);
        assert_eq!(red.avg_pkts(), 0.6875);
        // A non-empty queue is never treated as idle.
        red.update_avg(14_000, 2, Some(10_000), 1000);
        assert_eq!(red.avg_pkts(), 0.5 * 0.6875 + 1.0);
    }

    #[test]
    fn the_drop_probability_follows_the_thresholds() {
        let p = params(0.002, true);
        assert_eq!(base_probability(&p, 10.0), 0.05);
        // Gentle: max_p + (1 − max_p)·(20 − 15)/15 = 0.1 + 0.3 = 0.4.
        assert!((base_probability(&p, 20.0) - 0.4).abs() < 1e-12);
        assert_eq!(spaced_probability(0.05, 0), 0.05);
        assert_eq!(spaced_probability(0.05, 10), 0.1);
        assert_eq!(spaced_probability(0.05, 20), 1.0);
    }

    #[test]
    fn below_min_th_nothing_drops_and_above_the_forced_threshold_everything_does() {
        for (gentle, forced) in [(true, 30.0), (false, 15.0)] {
            let mut red = Red::new(params(0.002, gentle), 1);
            red.avg_pkts = 4.9;
            assert_eq!(red.decide(), Decision::Pass);
            red.avg_pkts = forced;
            assert_eq!(red.decide(), Decision::Forced);
        }
    }

    #[test]
    fn drops_are_spaced_by_the_count() {
        // avg fixed at 10: p_b = 0.05. The k-th arrival after a drop survives all before it with
        // probability Π(1 − p_b/(1 − j·p_b)) = (1 − k·p_b)/(1 − p_b), so the gap between drops is
        // uniform on 1..=19 (mean 10, a drop rate of 0.1) and never longer than 19.
        let mut red = Red::new(params(0.0, true), 9);
        red.avg_pkts = 10.0;
        let (mut drops, mut gap, mut max_gap) = (0u32, 0u32, 0u32);
        for _ in 0..100_000 {
            gap += 1;
            if red.decide() == Decision::Early {
                drops += 1;
                max_gap = max_gap.max(gap);
                gap = 0;
            }
        }
        let rate = f64::from(drops) / 100_000.0;
        assert!((rate * 10.0 - 1.0).abs() < 0.03, "{rate}");
        assert_eq!(max_gap, 19);
    }

    #[test]
    fn with_ecn_capable_packets_are_marked_where_others_are_dropped() {
        // avg above the forced threshold at once (weight 1, backlog 40 ≥ 2·max_th).
        let arrive = |params: RedParams, ecn| {
            let mut red = Red::new(params, 1);
            red.on_arrival(0, 40, None, 1000, ecn)
        };
        let ecn = RedParams {
            ecn: true,
            ..params(1.0, true)
        };
        assert_eq!(arrive(ecn, Ecn::Ect0), Verdict::Mark);
        assert_eq!(arrive(ecn, Ecn::Ect1), Verdict::Mark);
        assert_eq!(arrive(ecn, Ecn::NotEct), Verdict::Drop);
        assert_eq!(arrive(params(1.0, true), Ecn::Ect0), Verdict::Drop);
        let harddrop = RedParams {
            harddrop: true,
            ..ecn
        };
        assert_eq!(arrive(harddrop, Ecn::Ect0), Verdict::Drop);
        // Between the thresholds, harddrop still marks.
        let mut red = Red::new(harddrop, 1);
        red.avg_pkts = 10.0;
        let verdicts: Vec<_> = (0..100)
            .map(|_| {
                red.avg_pkts = 10.0;
                red.on_arrival(0, 10, None, 1000, Ecn::Ect0)
            })
            .collect();
        assert!(verdicts.contains(&Verdict::Mark));
        assert!(!verdicts.contains(&Verdict::Drop));
    }
}
