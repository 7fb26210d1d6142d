//! HighSpeed TCP (RFC 3649, experimental): standard TCP up to `Low_Window`, above it an AIMD
//! whose increase a(w) grows and whose decrease b(w) shrinks with the window, so the response
//! function bends from Reno's `w = 1.2/p^0.5` to `w = 0.12/p^0.835`.
//!
//! a(w) and b(w) are the closed forms of RFC 3649 §5, computed from the four parameters. Linux
//! (`tcp_highspeed.c`) looks them up in the 72-row table of RFC 3649 Appendix B instead, which
//! differs in three small ways: its a(w) is a whole number stepped up to the
//! next row (a = 2 already just above 38); the table was computed with the rounded response
//! function `p = 0.078/w^1.2`, which puts its a(w) about 2 % below the closed form; and its b(w)
//! is truncated to 1/256. Above `High_Window` both hold a and b at their `High_Window` values
//! (Linux: the last row, a = 72, b = 24/256), where RFC 3649 leaves b(w) undefined.
//!
//! a(w) is credited once per ACK, as RFC 3649 §5 writes it and Linux does,
//! so delayed ACKs halve the increase; `per_ack = false` credits it per packet acknowledged.
//! Slow start counts packets (Linux `tcp_slow_start`).

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::{Ack, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HighSpeedParams {
    /// At or below this window HighSpeed is standard TCP: a = 1, b = 0.5 (RFC 3649 §5: 38).
    pub low_window: f64,
    /// The window the response function reaches at loss rate `high_p` (RFC 3649 §5: 83 000,
    /// 10 Gb/s at 100 ms with 1500-byte packets).
    pub high_window: f64,
    /// RFC 3649 §5: 1e-7.
    pub high_p: f64,
    /// b(w) at `high_window` (RFC 3649 §5: 0.1).
    pub high_decrease: f64,
    /// Credit a(w)/w once per ACK (RFC 3649 §5; Linux `hstcp_cong_avoid`). Default true;
    /// false credits it per packet acknowledged, like the other Linux modules.
    pub per_ack: bool,
}

impl Default for HighSpeedParams {
    fn default() -> Self {
        Self {
            low_window: 38.0,
            high_window: 83_000.0,
            high_p: 1e-7,
            high_decrease: 0.1,
            per_ack: true,
        }
    }
}

impl HighSpeedParams {
    fn checked(self) -> Result<Self, String> {
        check::positive("low_window", self.low_window)?;
        check::positive(
            "high_window - low_window",
            self.high_window - self.low_window,
        )?;
        check::fraction("high_p", self.high_p)?;
        check::positive("low_p - high_p", self.low_p() - self.high_p)?;
        check::fraction("high_decrease", self.high_decrease)?;
        Ok(self)
    }

    /// Low_P: standard TCP's loss rate at `low_window`, from its response function
    /// `w = 1.2/sqrt(p)` (RFC 3649 §5) — 1e-3 at 38.
    fn low_p(&self) -> f64 {
        (1.2 / self.low_window).powi(2)
    }

    /// How far up the log-scaled range from `low_window` to `high_window` the window is, 0..=1.
    fn log_position(&self, w: f64) -> f64 {
        let w = w.clamp(self.low_window, self.high_window);
        (w / self.low_window).ln() / (self.high_window / self.low_window).ln()
    }

    /// b(w): 0.5 at `low_window`, falling linearly in log w to `high_decrease` (RFC 3649 §5).
    pub fn decrease(&self, w: f64) -> f64 {
        0.5 + (self.high_decrease - 0.5) * self.log_position(w)
    }

    /// p(w): the loss rate at which the response function `W = (p/Low_P)^S · Low_Window`
    /// reaches w, log-linear from (Low_Window, Low_P) to (High_Window, High_P) (RFC 3649 §5).
    pub fn loss_rate(&self, w: f64) -> f64 {
        self.low_p() * (self.high_p / self.low_p()).powf(self.log_position(w))
    }

    /// a(w) = w² · p(w) · 2b(w)/(2 − b(w)) packets per RTT (RFC 3649 §5): the increase that,
    /// with decrease b(w), holds an AIMD flow at window w under loss rate p(w). 1 at or below
    /// `low_window`.
    pub fn increase(&self, w: f64) -> f64 {
        if w <= self.low_window {
            return 1.0;
        }
        let w = w.min(self.high_window);
        let b = self.decrease(w);
        w * w * self.loss_rate(w) * 2.0 * b / (2.0 - b)
    }
}

#[derive(Debug, Clone)]
pub struct HighSpeed {
    params: HighSpeedParams,
    cwnd: f64,
    ssthresh: f64,
}

impl HighSpeed {
    pub fn new(params: HighSpeedParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
        }
    }

    /// The window after a congestion event: `(1 − b(w))·w`, never below 2.
    fn reduced(&self) -> f64 {
        (self.cwnd * (1.0 - self.params.decrease(self.cwnd))).max(MIN_SSTHRESH_PKTS)
    }
}

impl CongestionControl for HighSpeed {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if !may_grow(ack) || ack.acked == 0 {
            return;
        }
        if self.cwnd < self.ssthresh {
            // Linux `hstcp_cong_avoid` spends the whole ACK on slow start.
            self.cwnd = slow_start(self.cwnd, self.ssthresh, f64::from(ack.acked)).0;
            return;
        }
        let credit = if self.params.per_ack {
            1.0
        } else {
            f64::from(ack.acked)
        };
        // RFC 3649 §5: w ← w + a(w)/w per ACK.
        self.cwnd += credit * self.params.increase(self.cwnd) / self.cwnd;
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        // RFC 3649 §5: w ← (1 − b(w))·w; from cwnd, as Linux `hstcp_ssthresh`.
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // Linux calls the same `ssthresh` hook on a timeout; the window restarts from 1.
        self.ssthresh = self.reduced();
        self.cwnd = 1.0;
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "highspeed",
    source: "RFC 3649 §5; Linux net/ipv4/tcp_highspeed.c (per-ACK credit)",
    defaults: default_params::<HighSpeedParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<HighSpeedParams>(params)?.checked()?;
        Ok(Box::new(HighSpeed::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::{self, RenoParams};
    use crate::cc::testing::{ack, init, loss, loss_rate, mean_window, path, Rounds};

    fn rfc() -> HighSpeedParams {
        HighSpeedParams::default()
    }

    fn within(actual: f64, expected: f64, tolerance: f64) -> bool {
        (actual / expected - 1.0).abs() <= tolerance
    }

    /// A HighSpeed flow in congestion avoidance at window `w`.
    fn highspeed_at(w: f64, params: HighSpeedParams) -> HighSpeed {
        HighSpeed {
            params,
            cwnd: w,
            ssthresh: w,
        }
    }

    #[test]
    fn decrease_falls_from_one_half_at_38_to_one_tenth_at_83000() {
        assert_eq!(rfc().decrease(10.0), 0.5);
        assert_eq!(rfc().decrease(38.0), 0.5);
        assert!((rfc().decrease(83_000.0) - 0.1).abs() < 1e-12);
        assert!(
            (rfc().decrease(1e6) - 0.1).abs() < 1e-12,
            "held above High_Window"
        );
        // RFC 3649 Appendix B (Linux md = b·256, truncated): the closed form lies within 1/256.
        for (w, md) in [
            (118.0, 112),
            (495.0, 93),
            (1793.0, 76),
            (10661.0, 52),
            (84035.0, 25),
        ] {
            let b = rfc().decrease(w);
            assert!(
                b * 256.0 - f64::from(md) < 1.0 && b * 256.0 >= f64::from(md),
                "{w}: {b}"
            );
        }
    }

    #[test]
    fn increase_matches_the_rfc_closed_form_and_its_value_at_high_window() {
        // RFC 3649 §5: "a(w) = 72" at w = 83000 (with b = 0.1); the closed form gives 72.5.
        assert!(within(rfc().increase(83_000.0), 72.0, 0.01));
        // The closed form by hand at w = 1000: b = 0.3299, p = 1e-3·(1e-4)^0.4246 = 2.008e-5.
        let b = 0.5 - 0.4 * (1000.0f64 / 38.0).ln() / (83_000.0f64 / 38.0).ln();
        let p = 1e-3 * (1e-7f64 / 1e-3).powf((1000.0f64 / 38.0).ln() / (83_000.0f64 / 38.0).ln());
        let a = 1000.0 * 1000.0 * p * 2.0 * b / (2.0 - b);
        assert!(within(rfc().increase(1000.0), a, 0.01), "{a}");
        assert!((a - 7.86).abs() < 0.01, "{a}");
    }

    /// RFC 3649 Appendix B row r is the window where a(w) reaches r. Its table was computed from
    /// the rounded `p = 0.078/w^1.2`, so the closed form sits 1.4–2.5 % above the row number.
    #[test]
    fn increase_tracks_the_appendix_b_table_within_its_rounding() {
        for (w, a) in [
            (118.0, 2.0),
            (495.0, 5.0),
            (1793.0, 11.0),
            (10661.0, 30.0),
            (79517.0, 70.0),
        ] {
            let closed_form = rfc().increase(w);
            assert!(
                within(closed_form, a, 0.025) && closed_form > a,
                "{w}: {closed_form}"
            );
        }
    }

    #[test]
    fn loss_rate_is_the_inverse_of_the_rfc_response_function() {
        // RFC 3649 §5: W = 0.12/p^0.835, i.e. p(w) = 0.078/w^1.2 — to the RFC's rounding.
        for w in [100.0, 1000.0, 10_000.0, 83_000.0] {
            assert!(
                within(rfc().loss_rate(w), 0.078 / f64::powf(w, 1.2), 0.035),
                "{w}"
            );
        }
        assert!(within(rfc().loss_rate(83_000.0), 1e-7, 1e-9));
    }

    #[test]
    fn below_low_window_it_is_reno() {
        let mut reno = reno::new(RenoParams::default(), &init(10.0));
        let mut hstcp = HighSpeed::new(rfc(), &init(10.0));
        reno.on_congestion(&loss(), &path()); // both to 5, in congestion avoidance
        hstcp.on_congestion(&loss(), &path());
        for _ in 0..300 {
            reno.on_ack(&ack(1), &path());
            hstcp.on_ack(&ack(1), &path());
            assert_eq!(hstcp.cwnd(), reno.cwnd());
        }
        assert!((hstcp.cwnd() - 25.0).abs() < 0.5, "{}", hstcp.cwnd());
        hstcp.on_congestion(&loss(), &path());
        reno.on_congestion(&loss(), &path());
        assert_eq!(hstcp.cwnd(), reno.cwnd());
    }

    #[test]
    fn at_1000_packets_a_loss_gives_up_b_and_an_ack_adds_a_over_w() {
        let mut cc = highspeed_at(1000.0, rfc());
        cc.on_ack(&ack(1), &path());
        assert!((cc.cwnd() - 1000.00785).abs() < 1e-5, "{}", cc.cwnd()); // a(1000) = 7.85
        cc.on_congestion(&loss(), &path());
        assert!((cc.cwnd() - 670.1).abs() < 0.1, "{}", cc.cwnd()); // b(1000) = 0.3299
    }

    #[test]
    fn delayed_acks_halve_the_per_ack_increase_unless_packets_are_counted() {
        let per_ack = |per_ack| {
            let mut cc = highspeed_at(1000.0, HighSpeedParams { per_ack, ..rfc() });
            Rounds::new(100.0)
                .delayed_acks(2)
                .run(&mut cc, 10, |_, _| false);
            cc.cwnd() - 1000.0
        };
        assert!((per_ack(true) - 39.6).abs() < 0.1, "{}", per_ack(true)); // 10 RTTs × a(w)/2
        assert!((per_ack(false) - 80.0).abs() < 0.1, "{}", per_ack(false)); // 10 RTTs × a
    }

    /// RFC 3649 Table 3: the average window under periodic loss is 263 packets at p = 1e-4 and
    /// 1795 at 1e-5 (Reno: 120 and 379).
    #[test]
    fn average_window_follows_the_highspeed_response_function() {
        for (p, table) in [(1e-4, 263.0), (1e-5, 1795.0)] {
            let mut cc = HighSpeed::new(rfc(), &init(10.0));
            let mut path = Rounds::new(100.0);
            path.run(&mut cc, 500, loss_rate(p));
            let mean = mean_window(&path.run(&mut cc, 3000, loss_rate(p)));
            assert!(within(mean, table, 0.03), "p = {p}: {mean}"); // 258 and 1799
        }
    }
}
