//! PIE, Proportional Integral controller Enhanced (RFC 8033), decided when a packet arrives,
//! so it fits the analytic FIFO link.
//!
//! Every `tupdate` PIE samples the queueing delay and moves its drop probability `p` by
//! `α·(qdelay − target) + β·(qdelay − qdelay_old)`, scaled down while `p` is small (§4.2); an
//! arriving packet is then dropped with probability `p` (§4.1), unless the burst allowance
//! has not yet run out (§4.4), the queue is too short to matter (§4.1), or, with `ecn`, it is
//! ECN-capable and `p` is low enough to mark it instead (§5.1).
//!
//! Sans-IO, PIE has no timer: the updates run lazily at each arrival, every tick
//! `t_k ≤ now` not yet run, in order. Nothing arrived between the previous arrival and now, so
//! the link's FIFO only drained meanwhile and the delay at a tick is exactly the time it still
//! needs to send its backlog, `busy_until − t_k` (0 once empty). That is the delay estimate
//! here: the FIFO's drain time, equal to the sojourn the next arrival will see. Linux's
//! `sch_pie` (timestamp mode, its default) instead samples the sojourn of the last dequeued
//! packet, the same delay measured one sojourn later; RFC 8033 §4.3 allows either, or a
//! Little's-law estimate from the dequeue rate (§5.2), which a FIFO of known drain time does
//! not need. The tick grid starts at the first arrival: before it the queue was empty and PIE
//! at rest, where an update changes nothing. The burst allowance runs down per update
//! (§4.4) from the last update that found the queue quiet, so a burst that begins between
//! updates is protected for between `max_burst − tupdate` and `max_burst` (§4.4 lets MAX_BURST
//! round to whole T_UPDATEs); Linux runs it down by the time spent dequeueing instead.
//!
//! Beyond the RFC's basic algorithm, as Linux does: the cap on the probability's rise above
//! 10% (§5.5), the +2% per update while the delay exceeds 250 ms (Linux's, not in RFC 8033),
//! and `bytemode` (§5.6). The derandomization of §5.4 is not implemented: each arrival is an
//! independent draw against `p`. (Linux's `sch_pie` does accumulate `p` between drops as §5.4
//! describes, which spaces drops more evenly.) Nor are the active/inactive states of §5.3.

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use super::{Arrival, Verdict};

const MS: u64 = 1_000_000;

/// §4.1 bypasses the random drop while the queue holds less than a couple of packets; here,
/// as in Linux, fewer than two MTU-sized packets' bytes, with a 1500-byte MTU.
const MTU_BYTES: u64 = 1500;

/// Linux's `sch_pie` raises `p` by 2% at every update while the delay exceeds 250 ms.
const HIGH_DELAY_NS: u64 = 250 * MS;

/// §5.5's cap and Linux's high-delay step: 2% per update.
const STEP_2PCT: f64 = 0.02;

/// PIE's settings, as `tc pie` names them; the defaults are RFC 8033's and Linux's.
#[derive(Debug, Clone, Copy, PartialEq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PieParams {
    /// QDELAY_REF, the delay PIE steers towards (§4.2; RFC and Linux: 15 ms).
    pub target_ns: u64,
    /// T_UPDATE, the period of the probability update (§4.2; RFC and Linux: 15 ms).
    pub tupdate_ns: u64,
    /// The weight of the delay's distance from target, per second (§4.2: 0.125 Hz).
    pub alpha: f64,
    /// The weight of the delay's trend, per second (§4.2: 1.25 Hz).
    pub beta: f64,
    /// MAX_BURST, the burst allowance (§4.4: 150 ms).
    pub max_burst_ns: u64,
    /// Mark ECN-capable packets instead of dropping them while `p` is at most
    /// `mark_ecn_threshold` (§5.1; `tc pie ecn`, off by default).
    pub ecn: bool,
    /// §5.1's `mark_ecnth`: above this probability ECN-capable packets are dropped too (0.1).
    pub mark_ecn_threshold: f64,
    /// Scale the probability by the packet's size relative to the MTU (§5.6; `tc pie
    /// bytemode`, off by default).
    pub bytemode: bool,
}

impl Default for PieParams {
    fn default() -> Self {
        Self {
            target_ns: 15 * MS,
            tupdate_ns: 15 * MS,
            alpha: 0.125,
            beta: 1.25,
            max_burst_ns: 150 * MS,
            ecn: false,
            mark_ecn_threshold: 0.1,
            bytemode: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Pie {
    params: PieParams,
    /// §4.2's `drop_prob`.
    drop_prob: f64,
    /// §4.2's `qdelay_old`: the delay sampled at the last update.
    qdelay_old_ns: u64,
    /// §4.4's `burst_allowance`.
    burst_allowance_ns: u64,
    /// When the next update is due; `None` until the first arrival starts the grid.
    next_update_ns: Option<u64>,
    /// The longest transmission time seen: an MTU-sized packet's on a fixed-rate link, the
    /// reference of `bytemode`, since an arrival tells its transmission time, not its size.
    max_packet_time_ns: u64,
    rng: Xoshiro256PlusPlus,
}

impl Pie {
    /// PIE at rest (§4.4: the burst allowance starts full) with its own random stream.
    /// Panics if `tupdate_ns` is 0: the updates would never end.
    pub fn new(params: PieParams, seed: u64) -> Self {
        assert!(params.tupdate_ns > 0, "PIE needs a positive tupdate");
        Self {
            params,
            drop_prob: 0.0,
            qdelay_old_ns: 0,
            burst_allowance_ns: params.max_burst_ns,
            next_update_ns: None,
            max_packet_time_ns: 0,
            rng: Xoshiro256PlusPlus::seed_from_u64(seed),
        }
    }

    pub fn params(&self) -> &PieParams {
        &self.params
    }

    /// The drop probability after the last update.
    pub fn probability(&self) -> f64 {
        self.drop_prob
    }

    /// The queueing delay sampled at the last update.
    pub fn qdelay_ns(&self) -> u64 {
        self.qdelay_old_ns
    }

    /// The burst allowance left.
    pub fn burst_allowance_ns(&self) -> u64 {
        self.burst_allowance_ns
    }

    /// The fate of an arriving packet (before the hard limit is checked). `a.busy_until_ns` is
    /// when the link's FIFO will have sent everything queued before this arrival: the queueing
    /// delay at any time t between the previous arrival and now is `busy_until_ns − t` (0 if
    /// negative).
    pub fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        self.catch_up(a.now_ns, a.busy_until_ns);
        self.max_packet_time_ns = self.max_packet_time_ns.max(a.packet_time_ns);
        if !self.drop_early(a) {
            return Verdict::Pass;
        }
        // §5.1: mark rather than drop only while p is low; above it a drop is needed to
        // curb senders that ignore marks. At exactly the threshold Linux still marks.
        let marks = self.params.ecn && self.drop_prob <= self.params.mark_ecn_threshold;
        Verdict::signal(marks, a.ecn)
    }

    /// Run every update due by `now_ns`, in order (§4.2: "every T_UPDATE interval"). Nothing
    /// arrived since the last call, so the delay at tick t is `busy_until_ns − t`.
    fn catch_up(&mut self, now_ns: u64, busy_until_ns: u64) {
        let tupdate = self.params.tupdate_ns;
        let mut next = *self.next_update_ns.get_or_insert(now_ns + tupdate);
        while next <= now_ns {
            let empty = next >= busy_until_ns;
            let before = self.controller();
            self.update(busy_until_ns.saturating_sub(next));
            next += tupdate;
            if empty && self.controller() == before && next <= now_ns {
                // An update on the empty queue changed nothing, so the rest of the idle
                // ticks would not either (an update depends on the state and delay only):
                // skip them, or a long idle spell would cost one update per tupdate.
                next += (now_ns - next) / tupdate * tupdate + tupdate;
            }
        }
        self.next_update_ns = Some(next);
    }

    /// What an update reads and writes.
    fn controller(&self) -> (f64, u64, u64) {
        (self.drop_prob, self.qdelay_old_ns, self.burst_allowance_ns)
    }

    /// One periodic update with the delay `qdelay_ns` sampled now.
    fn update(&mut self, qdelay_ns: u64) {
        let p = &self.params;
        let (q, q_old, target) = (secs(qdelay_ns), secs(self.qdelay_old_ns), secs(p.target_ns));
        // §4.2: the proportional and the derivative term, scaled down while drop_prob is
        // small so that one update moves it by about its own order of magnitude.
        let mut delta = autotune(self.drop_prob) * (p.alpha * (q - target) + p.beta * (q - q_old));
        // §5.5: above 10%, rise by at most 2% per update, so one spike cannot push p into
        // dropping most packets.
        if self.drop_prob >= 0.1 && delta > STEP_2PCT {
            delta = STEP_2PCT;
        }
        // Linux's non-linear step: a delay beyond 250 ms is an emergency; rise faster.
        if qdelay_ns > HIGH_DELAY_NS {
            delta += STEP_2PCT;
        }
        let mut prob = self.drop_prob + delta;
        // §4.2: with no queue at two updates in a row congestion is gone; decay p
        // exponentially rather than only by the small proportional term (RFC: ×0.98;
        // Linux: ×(1 − 1/64)).
        if qdelay_ns == 0 && self.qdelay_old_ns == 0 {
            prob *= 0.98;
        }
        // §4.2: bound the probability.
        self.drop_prob = prob.clamp(0.0, 1.0);
        self.update_burst_allowance(qdelay_ns);
        self.qdelay_old_ns = qdelay_ns;
    }

    /// §4.4: the allowance runs down by T_UPDATE at each update and refills once congestion
    /// is gone: p = 0 and both this and the previous delay below half the target.
    fn update_burst_allowance(&mut self, qdelay_ns: u64) {
        let p = &self.params;
        self.burst_allowance_ns = self.burst_allowance_ns.saturating_sub(p.tupdate_ns);
        let half = p.target_ns / 2;
        if self.drop_prob == 0.0 && qdelay_ns < half && self.qdelay_old_ns < half {
            self.burst_allowance_ns = p.max_burst_ns;
        }
    }

    /// Whether PIE chooses this arrival (§4.1, §4.4, §5.6).
    fn drop_early(&mut self, a: &Arrival) -> bool {
        let p = &self.params;
        // §4.4: a burst within the allowance passes untouched.
        if self.burst_allowance_ns > 0 {
            return false;
        }
        // §4.1: stay work-conserving while the delay is low and p is not high...
        if self.qdelay_old_ns < p.target_ns / 2 && self.drop_prob < 0.2 {
            return false;
        }
        // ... and while the queue holds less than a couple of packets (like RED's min_th).
        // Linux's test, fewer than 2 MTUs; the backlog here includes the packet in
        // transmission.
        if a.backlog_bytes < 2 * MTU_BYTES {
            return false;
        }
        let mut prob = self.drop_prob;
        if p.bytemode {
            // §5.6: a small packet is dropped less, in proportion to its size; size/MTU is
            // its transmission time over the longest one seen (the link's rate is fixed).
            prob *= a.packet_time_ns as f64 / self.max_packet_time_ns.max(1) as f64;
        }
        self.rng.random::<f64>() < prob
    }
}

fn secs(ns: u64) -> f64 {
    ns as f64 * 1e-9
}

/// §4.2's scaling of the update by the magnitude of `drop_prob`: below 0.0001% a 2048th, and
/// four times larger for each decade up to a half below 10%; in full from 10% up.
fn autotune(drop_prob: f64) -> f64 {
    const SCALE: [(f64, f64); 6] = [
        (0.000_001, 2048.0),
        (0.000_01, 512.0),
        (0.000_1, 128.0),
        (0.001, 32.0),
        (0.01, 8.0),
        (0.1, 2.0),
    ];
    SCALE
        .iter()
        .find(|&&(below, _)| drop_prob < below)
        .map_or(1.0, |&(_, divisor)| 1.0 / divisor)
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use super::*;
    use crate::Ecn;

    const PKT_BYTES: u64 = 1500;
    /// 1500 bytes at 10 Mb/s.
    const PKT_TIME_NS: u64 = 1_200_000;

    fn arrival(now_ns: u64, backlog_pkts: u64, busy_until_ns: u64, ecn: Ecn) -> Arrival {
        Arrival {
            now_ns,
            backlog_pkts,
            backlog_bytes: backlog_pkts * PKT_BYTES,
            busy_until_ns,
            packet_time_ns: PKT_TIME_NS,
            ecn,
        }
    }

    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() < 1e-12, "{got} != {want}");
    }

    /// PIE in the middle of congestion at probability `p`: the burst allowance spent, the
    /// last delay 20 ms (above half the target), and no update due for the test's arrivals.
    fn congested(params: PieParams, p: f64) -> Pie {
        let mut pie = Pie::new(params, 7);
        pie.drop_prob = p;
        pie.qdelay_old_ns = 20 * MS;
        pie.burst_allowance_ns = 0;
        pie.next_update_ns = Some(u64::MAX);
        pie.max_packet_time_ns = PKT_TIME_NS;
        pie
    }

    /// The verdicts on `n` arrivals of codepoint `ecn` onto a backlog of `backlog_bytes`.
    fn verdicts(pie: &mut Pie, n: usize, backlog_bytes: u64, ecn: Ecn) -> Vec<Verdict> {
        let a = Arrival {
            backlog_bytes,
            ..arrival(0, backlog_bytes / PKT_BYTES, 20 * MS, ecn)
        };
        (0..n).map(|_| pie.on_arrival(&a)).collect()
    }

    fn count(verdicts: &[Verdict], which: Verdict) -> usize {
        verdicts.iter().filter(|&&v| v == which).count()
    }

    /// The link PIE sits in front of: an analytic FIFO sending 1500-byte packets at
    /// 10 Mb/s, as the simulator's link does (each departure is known at the arrival).
    #[derive(Default)]
    struct Fifo {
        busy_until_ns: u64,
        /// When each packet queued or in transmission will have left.
        departures: VecDeque<u64>,
    }

    impl Fifo {
        fn arrival(&mut self, now_ns: u64, ecn: Ecn) -> Arrival {
            while self.departures.front().is_some_and(|&d| d <= now_ns) {
                self.departures.pop_front();
            }
            arrival(
                now_ns,
                self.departures.len() as u64,
                self.busy_until_ns,
                ecn,
            )
        }

        fn admit(&mut self, now_ns: u64) {
            self.busy_until_ns = self.busy_until_ns.max(now_ns) + PKT_TIME_NS;
            self.departures.push_back(self.busy_until_ns);
        }

        fn delay_ns(&self, now_ns: u64) -> u64 {
            self.busy_until_ns.saturating_sub(now_ns)
        }

        /// ∫ delay dt over [from, to] (ns²) with no arrival in between: the delay falls
        /// linearly to 0 at `busy_until_ns`.
        fn delay_area(&self, from_ns: u64, to_ns: u64) -> f64 {
            let end_ns = self.busy_until_ns.min(to_ns);
            if end_ns <= from_ns {
                return 0.0;
            }
            let (b, f, e) = (self.busy_until_ns as f64, from_ns as f64, end_ns as f64);
            ((b - f) + (b - e)) / 2.0 * (e - f)
        }
    }

    /// An unresponsive source: a Not-ECT packet every `gap_ns` over [from, to), each admitted
    /// unless PIE drops it (no hard limit). The arrival times and verdicts.
    fn flood(
        pie: &mut Pie,
        fifo: &mut Fifo,
        from_ns: u64,
        to_ns: u64,
        gap_ns: u64,
    ) -> Vec<(u64, Verdict)> {
        (from_ns..to_ns)
            .step_by(gap_ns as usize)
            .map(|now_ns| {
                let verdict = pie.on_arrival(&fifo.arrival(now_ns, Ecn::NotEct));
                if verdict != Verdict::Drop {
                    fifo.admit(now_ns);
                }
                (now_ns, verdict)
            })
            .collect()
    }

    #[test]
    fn the_update_step_scales_with_the_magnitude_of_p() {
        // §4.2's table: a 2048th below 0.0001%, then ×4 per decade, ½ below 10%, 1 above.
        let table = [
            (0.000_000_9, 2048.0),
            (0.000_001, 512.0),
            (0.000_01, 128.0),
            (0.000_1, 32.0),
            (0.001, 8.0),
            (0.01, 2.0),
            (0.099_999, 2.0),
            (0.1, 1.0),
            (0.9, 1.0),
        ];
        for (p, divisor) in table {
            assert_eq!(autotune(p), 1.0 / divisor, "p = {p}");
        }
    }

    #[test]
    fn one_update_computed_by_hand() {
        let at = |p: f64, qdelay_old_ms: u64, qdelay_ms: u64| {
            let mut pie = Pie::new(PieParams::default(), 1);
            pie.drop_prob = p;
            pie.qdelay_old_ns = qdelay_old_ms * MS;
            pie.update(qdelay_ms * MS);
            assert_eq!(pie.qdelay_ns(), qdelay_ms * MS);
            pie.probability()
        };
        // §4.2, proportional term alone (delay steady at 30 ms, p = 5% so scaled by ½):
        // α·(30 − 15 ms) = 0.125 Hz · 0.015 s = 0.001875, halved.
        assert_close(at(0.05, 30, 30), 0.05 + 0.000_937_5);
        // Derivative term alone (at target, up from 5 ms): β·10 ms = 0.0125, halved.
        assert_close(at(0.05, 5, 15), 0.05 + 0.006_25);
        // Both, p = 0.5% (scaled by ⅛): (0.125·0.005 + 1.25·0.010)/8 = 0.013125/8.
        assert_close(at(0.005, 10, 20), 0.005 + 0.001_640_625);
        // From p = 0 (scaled by 1/2048): 0.125·0.010/2048.
        assert_close(at(0.0, 25, 25), 0.00125 / 2048.0);
        // Falling delay lowers p: (0.125·(10 − 15 ms) + 1.25·(10 − 20 ms))/2 = −0.0065625.
        assert_close(at(0.05, 20, 10), 0.05 - 0.006_562_5);
        // §5.5: from 10% up a step is capped at 2%: 0.125·0.085 + 1.25·0.08 = 0.110625 → 0.02;
        // below 10% the same step is not capped (halved only).
        assert_close(at(0.2, 20, 100), 0.22);
        assert_close(at(0.05, 20, 100), 0.05 + 0.110_625 / 2.0);
        // Linux's 250 ms rule adds 2% after the cap: 0.02 + 0.02.
        assert_close(at(0.2, 300, 300), 0.24);
        // Bounded to [0, 1] (§4.2).
        assert_eq!(at(0.0, 20, 0), 0.0);
        assert_eq!(at(0.99, 300, 300), 1.0);
    }

    #[test]
    fn the_updates_run_lazily_at_the_ticks_with_the_fifo_drain_time_as_delay() {
        let mut pie = Pie::new(PieParams::default(), 1);
        // The first arrival starts the grid: ticks at 15, 30, 45, 60 ms...
        pie.on_arrival(&arrival(0, 0, 0, Ecn::NotEct));
        let mut by_hand = pie.clone();
        // ... so an arrival at 46 ms onto a FIFO busy until 100 ms runs three updates, which
        // saw delays of 100 − 15, 100 − 30 and 100 − 45 ms.
        pie.on_arrival(&arrival(46 * MS, 40, 100 * MS, Ecn::NotEct));
        for qdelay_ms in [85, 70, 55] {
            by_hand.update(qdelay_ms * MS);
        }
        assert_eq!(pie.controller(), by_hand.controller());
        assert_eq!(pie.qdelay_ns(), 55 * MS);
        // A tick at the arrival's own time runs, before the arrival joins the queue.
        pie.on_arrival(&arrival(60 * MS, 40, 100 * MS, Ecn::NotEct));
        assert_eq!(pie.qdelay_ns(), 40 * MS);
        assert_eq!(pie.next_update_ns, Some(75 * MS));
    }

    #[test]
    fn with_no_queue_p_decays_by_0_98_per_update_to_zero() {
        let mut pie = Pie::new(PieParams::default(), 1);
        pie.drop_prob = 0.5;
        // §4.2: qdelay and qdelay_old both 0: the step (−α·target, in full above 10%), then
        // ×0.98.
        pie.update(0);
        assert_close(pie.probability(), (0.5 - 0.001_875) * 0.98);
        // A delay of 1 ns is not "no queue": the step alone.
        let mut busy = pie.clone();
        busy.update(1);
        let q = 1e-9;
        let step = 0.125 * (q - 0.015) + 1.25 * q;
        assert_close(busy.probability(), (0.5 - 0.001_875) * 0.98 + step);
        // The empty queue takes p to exactly 0 within 10 s (667 updates), and the
        // burst allowance refills (§4.4).
        for tick in 0.. {
            assert!(tick < 667, "p = {} after 10 s", pie.probability());
            if pie.probability() == 0.0 {
                break;
            }
            pie.update(0);
        }
        assert_eq!(pie.burst_allowance_ns(), 150 * MS);
    }

    #[test]
    fn a_long_idle_spell_skips_its_ticks_with_the_same_outcome() {
        let mut pie = congested(PieParams::default(), 0.3);
        pie.next_update_ns = Some(15 * MS);
        let mut by_hand = pie.clone();
        // An hour after a FIFO that drained at 40 ms: 240 000 ticks, all but two on an empty
        // queue.
        let hour_ns = 3_600_000 * MS;
        pie.on_arrival(&arrival(hour_ns, 0, 40 * MS, Ecn::NotEct));
        by_hand.update(25 * MS);
        by_hand.update(10 * MS);
        for _ in 2..240_000 {
            by_hand.update(0);
        }
        assert_eq!(pie.controller(), by_hand.controller());
        assert_eq!(pie.controller(), (0.0, 0, 150 * MS));
        assert_eq!(pie.next_update_ns, Some(hour_ns + 15 * MS));
        // Only an update on the empty queue ends the catch-up early: at p = 0 a tick that
        // sees the same 5 ms as the last one changes nothing, yet the queue is still
        // draining, so the next tick, at 30 ms, must run and see it empty.
        let mut pie = Pie::new(PieParams::default(), 1);
        pie.qdelay_old_ns = 5 * MS;
        pie.next_update_ns = Some(15 * MS);
        pie.on_arrival(&arrival(100 * MS, 0, 20 * MS, Ecn::NotEct));
        assert_eq!(pie.controller(), (0.0, 0, 150 * MS));
    }

    #[test]
    fn a_burst_on_an_empty_queue_passes_for_the_burst_allowance() {
        // The burst begins with the update at 1005 ms (the grid starts at 0), which sees the
        // queue still empty and refills the allowance (§4.4); 10 updates later, at 1155 ms,
        // it is spent. (Off the grid the allowance counts from the last quiet update, up to
        // one tupdate before the burst: §4.4 lets MAX_BURST round to whole T_UPDATEs.)
        let burst_ns = 1_005 * MS;
        let drops = |params: PieParams, seed| {
            let (mut pie, mut fifo) = (Pie::new(params, seed), Fifo::default());
            flood(&mut pie, &mut fifo, 0, 1, 1);
            // Twice the link's rate (a packet each 0.6 ms) for 400 ms: the delay grows by
            // 1 ms per ms, and p with it.
            let verdicts = flood(&mut pie, &mut fifo, burst_ns, burst_ns + 400 * MS, 600_000);
            let drops = verdicts.into_iter().filter(|v| v.1 == Verdict::Drop);
            drops.map(|(t, _)| t - burst_ns).collect::<Vec<_>>()
        };
        let no_allowance = PieParams {
            max_burst_ns: 0,
            ..PieParams::default()
        };
        let mut early_without = 0;
        for seed in 0..20 {
            let first = drops(PieParams::default(), seed)[0];
            assert!(
                (150 * MS..200 * MS).contains(&first),
                "first drop {} ms in",
                first / MS
            );
            // The same bursts without the allowance: p is the same, and it drops early.
            let without = drops(no_allowance, seed);
            early_without += without.iter().filter(|&&t| t < 150 * MS).count();
        }
        assert!(early_without > 10, "{early_without} drops");
    }

    #[test]
    fn with_ecn_capable_packets_are_marked_below_the_threshold_and_dropped_above() {
        let ecn = PieParams {
            ecn: true,
            ..PieParams::default()
        };
        let backlog = 10 * PKT_BYTES;
        // §5.1: at p ≤ mark_ecnth (10%; at exactly 10% Linux still marks) an ECN-capable
        // packet PIE chooses is marked, never dropped; a Not-ECT one is dropped.
        for p in [0.05, 0.1] {
            for code in [Ecn::Ect0, Ecn::Ect1, Ecn::Ce] {
                let v = verdicts(&mut congested(ecn, p), 2000, backlog, code);
                assert!(count(&v, Verdict::Mark) > 50, "{code:?} at {p}");
                assert_eq!(count(&v, Verdict::Drop), 0, "{code:?} at {p}");
            }
            let v = verdicts(&mut congested(ecn, p), 2000, backlog, Ecn::NotEct);
            assert!(count(&v, Verdict::Drop) > 50);
            assert_eq!(count(&v, Verdict::Mark), 0);
        }
        // Above 10% ECN-capable packets are dropped too.
        let v = verdicts(&mut congested(ecn, 0.3), 2000, backlog, Ecn::Ect0);
        assert!(count(&v, Verdict::Drop) > 400);
        assert_eq!(count(&v, Verdict::Mark), 0);
        // Without `ecn`, PIE drops whatever the codepoint.
        let v = verdicts(
            &mut congested(PieParams::default(), 0.05),
            2000,
            backlog,
            Ecn::Ect0,
        );
        assert!(count(&v, Verdict::Drop) > 50);
        assert_eq!(count(&v, Verdict::Mark), 0);
    }

    #[test]
    fn pie_stays_work_conserving_on_a_low_delay_or_a_short_queue() {
        let drops = |pie: &mut Pie, backlog_bytes| {
            count(
                &verdicts(pie, 2000, backlog_bytes, Ecn::NotEct),
                Verdict::Drop,
            )
        };
        let deep = 10 * PKT_BYTES;
        // §4.1: last delay below half the target (5 < 7.5 ms) and p < 20%: no drop...
        let mut pie = congested(PieParams::default(), 0.15);
        pie.qdelay_old_ns = 5 * MS;
        assert_eq!(drops(&mut pie, deep), 0);
        // ... but from 20% on, PIE drops even then.
        pie.drop_prob = 0.25;
        assert!(drops(&mut pie, deep) > 300);
        // §4.1: fewer than two MTUs queued: no drop; two MTUs: drops.
        let mut pie = congested(PieParams::default(), 0.15);
        assert_eq!(drops(&mut pie, 2 * PKT_BYTES - 1), 0);
        assert!(drops(&mut pie, 2 * PKT_BYTES) > 200);
        // §4.4: any allowance left: no drop.
        pie.burst_allowance_ns = 1;
        assert_eq!(drops(&mut pie, deep), 0);
    }

    #[test]
    fn in_bytemode_small_packets_are_dropped_in_proportion_to_their_size() {
        let bytemode = PieParams {
            bytemode: true,
            ..PieParams::default()
        };
        let mut pie = congested(bytemode, 0.4);
        let rate = |pie: &mut Pie, packet_time_ns| {
            let a = Arrival {
                packet_time_ns,
                ..arrival(0, 10, 20 * MS, Ecn::NotEct)
            };
            let n = 20_000;
            let drops = (0..n)
                .filter(|_| pie.on_arrival(&a) == Verdict::Drop)
                .count();
            drops as f64 / n as f64
        };
        // §5.6: a quarter-MTU packet (375 B) at a quarter of p; a full-sized one at p.
        let small = rate(&mut pie, PKT_TIME_NS / 4);
        assert!((small - 0.1).abs() < 0.015, "{small}");
        let full = rate(&mut pie, PKT_TIME_NS);
        assert!((full - 0.4).abs() < 0.015, "{full}");
        // Without bytemode the size does not matter.
        let small = rate(&mut congested(PieParams::default(), 0.4), PKT_TIME_NS / 4);
        assert!((small - 0.4).abs() < 0.015, "{small}");
    }

    /// A TCP-like AIMD sender, fluid-ish: it paces `cwnd` packets per RTT (its base RTT plus
    /// the delay its last packet met), grows `cwnd` by 1/`cwnd` per packet that passes
    /// (Reno's congestion avoidance) and halves it on a drop, at most once per RTT (fast
    /// recovery). It learns of a drop at once rather than an RTT later.
    struct Aimd {
        base_rtt_ns: u64,
        cwnd: f64,
        next_send_ns: u64,
        recovery_until_ns: u64,
    }

    #[test]
    fn aimd_senders_settle_at_the_target_delay() {
        // Eight senders with base RTTs of 20 to 69 ms share the 10 Mb/s FIFO through PIE
        // (defaults, target 15 ms). From 10 s on, for 60 s, the time-average queueing delay
        // must lie within 20% of the target (the PI controller's integral action removes a
        // steady-state error), with the link kept busy.
        let (mut pie, mut fifo) = (Pie::new(PieParams::default(), 11), Fifo::default());
        let mut senders: Vec<_> = (0..8)
            .map(|i| Aimd {
                base_rtt_ns: (20 + 7 * i) * MS,
                cwnd: 2.0,
                next_send_ns: i * MS,
                recovery_until_ns: 0,
            })
            .collect();
        let (from_ns, to_ns) = (10_000 * MS, 70_000 * MS);
        let (mut area, mut prev_ns, mut sent, mut drops) = (0.0, 0, 0u64, 0u64);
        loop {
            let s = senders.iter_mut().min_by_key(|s| s.next_send_ns).unwrap();
            let now_ns = s.next_send_ns;
            if now_ns >= to_ns {
                break;
            }
            area += fifo.delay_area(prev_ns.max(from_ns), now_ns);
            prev_ns = now_ns;
            if pie.on_arrival(&fifo.arrival(now_ns, Ecn::NotEct)) == Verdict::Drop {
                drops += 1;
                if now_ns >= s.recovery_until_ns {
                    s.cwnd = (s.cwnd / 2.0).max(1.0);
                    s.recovery_until_ns = now_ns + s.base_rtt_ns + fifo.delay_ns(now_ns);
                }
            } else {
                fifo.admit(now_ns);
                s.cwnd += 1.0 / s.cwnd;
                sent += u64::from(now_ns >= from_ns);
            }
            let rtt_ns = s.base_rtt_ns + fifo.delay_ns(now_ns);
            s.next_send_ns = now_ns + (rtt_ns as f64 / s.cwnd) as u64;
        }
        area += fifo.delay_area(prev_ns.max(from_ns), to_ns);
        let window_ns = (to_ns - from_ns) as f64;
        let mean_ms = area / window_ns / MS as f64;
        let utilisation = (sent * PKT_TIME_NS) as f64 / window_ns;
        assert!(drops > 100, "{drops} drops");
        assert!((12.0..18.0).contains(&mean_ms), "mean delay {mean_ms} ms");
        assert!(utilisation > 0.95, "utilisation {utilisation}");
    }

    #[test]
    fn the_same_seed_gives_the_same_drops() {
        // An unresponsive source 25% above the link's rate for 3 s.
        let run = |seed| {
            let (mut pie, mut fifo) = (Pie::new(PieParams::default(), seed), Fifo::default());
            flood(&mut pie, &mut fifo, 0, 3_000 * MS, PKT_TIME_NS * 4 / 5)
        };
        let a = run(5);
        assert!(a.iter().filter(|v| v.1 == Verdict::Drop).count() > 100);
        assert_eq!(a, run(5));
        assert_ne!(a, run(6));
    }
}
