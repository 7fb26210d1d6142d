//! Scalable TCP (Kelly, "Scalable TCP: improving performance in highspeed wide area networks",
//! CCR 33(2), 2003), as Linux `tcp_scalable.c` runs it: multiplicative increase and decrease
//! above a low window, so the time to recover from a loss is the same at every window.
//!
//! In congestion avoidance each packet acknowledged adds `a` = 0.01 (×1.01 per RTT) once the
//! window is at least `low_window`, and Reno's 1/cwnd below it (Linux adds one packet per
//! `min(cwnd, 100)` acknowledged). A congestion event keeps `1 − b` = 7/8 of the window at every
//! size, as Linux does; Kelly's paper falls back to Reno's halving below its legacy window of 16.
//! Recovery after a loss takes `ln(1/0.875)/ln(1.01)` = 13.4 RTTs at any window, and the window
//! is inverse in the loss rate: about `a/(b·p)` = 0.08/p (Kelly, CCR 2003; docs/methodology.md §4; 0.07/p on
//! average once the round of recovery, which does not grow, is counted).

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::{Ack, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct ScalableParams {
    /// Window added per packet acknowledged at or above `low_window` (Kelly 2003: 0.01; Linux
    /// `TCP_SCALABLE_AI_CNT` = 100 packets per increment).
    pub a: f64,
    /// Fraction of the window given up on a congestion event (Kelly 2003: 0.125; Linux
    /// `TCP_SCALABLE_MD_SCALE` = 3, i.e. 1/8).
    pub b: f64,
    /// Below this window the increase is Reno's (Linux 100 = 1/a; 2.6 kernels 50; Kelly's
    /// legacy window 16).
    pub low_window: f64,
}

impl Default for ScalableParams {
    fn default() -> Self {
        Self {
            a: 0.01,
            b: 0.125,
            low_window: 100.0,
        }
    }
}

impl ScalableParams {
    fn checked(self) -> Result<Self, String> {
        check::positive("a", self.a)?;
        check::fraction("b", self.b)?;
        check::positive("low_window", self.low_window)?;
        Ok(self)
    }
}

#[derive(Debug, Clone)]
pub struct Scalable {
    params: ScalableParams,
    cwnd: f64,
    ssthresh: f64,
}

impl Scalable {
    pub fn new(params: ScalableParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
        }
    }

    /// Window added per packet acknowledged in congestion avoidance.
    fn increase_per_packet(&self) -> f64 {
        if self.cwnd < self.params.low_window {
            1.0 / self.cwnd
        } else {
            self.params.a
        }
    }

    /// The window after a congestion event: `(1 − b)·cwnd`, never below 2.
    fn reduced(&self) -> f64 {
        (self.cwnd * (1.0 - self.params.b)).max(MIN_SSTHRESH_PKTS)
    }
}

impl CongestionControl for Scalable {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if !may_grow(ack) || ack.acked == 0 {
            return;
        }
        let mut acked = f64::from(ack.acked);
        if self.cwnd < self.ssthresh {
            (self.cwnd, acked) = slow_start(self.cwnd, self.ssthresh, acked);
        }
        self.cwnd += acked * self.increase_per_packet();
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        // From cwnd, as Linux `tcp_scalable_ssthresh`.
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
    name: "scalable",
    source: "Kelly, CCR 33(2) 2003; Linux net/ipv4/tcp_scalable.c",
    defaults: default_params::<ScalableParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<ScalableParams>(params)?.checked()?;
        Ok(Box::new(Scalable::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, cwnds, init, loss, loss_rate, mean_window, path, Rounds};

    /// A Scalable flow in congestion avoidance at window `w`.
    fn scalable_at(w: f64) -> Scalable {
        Scalable {
            params: ScalableParams::default(),
            cwnd: w,
            ssthresh: w,
        }
    }

    #[test]
    fn above_low_window_each_packet_adds_one_hundredth() {
        let mut cc = scalable_at(200.0);
        for _ in 0..100 {
            cc.on_ack(&ack(1), &path());
        }
        assert!((cc.cwnd() - 201.0).abs() < 1e-9, "{}", cc.cwnd());
        cc.on_ack(&ack(2), &path()); // a delayed ACK counts both packets
        assert!((cc.cwnd() - 201.02).abs() < 1e-9, "{}", cc.cwnd());
    }

    #[test]
    fn a_loss_keeps_seven_eighths_at_any_window() {
        let mut cc = scalable_at(201.0);
        cc.on_congestion(&loss(), &path());
        assert_eq!((cc.cwnd(), cc.ssthresh()), (175.875, 175.875));
        let mut small = scalable_at(40.0);
        small.on_congestion(&loss(), &path());
        assert_eq!(small.cwnd(), 35.0); // Linux: no Reno halving below the low window
    }

    #[test]
    fn below_low_window_the_increase_is_renos() {
        let mut cc = scalable_at(50.0);
        for _ in 0..50 {
            cc.on_ack(&ack(1), &path());
        }
        assert!((cc.cwnd() - 50.99).abs() < 0.001, "{}", cc.cwnd()); // 1/50 + 1/50.02 + ...
    }

    #[test]
    fn slow_start_leftover_is_spent_in_congestion_avoidance() {
        let mut cc = Scalable {
            ssthresh: 200.0,
            ..scalable_at(199.0)
        };
        cc.on_ack(&ack(3), &path());
        assert!((cc.cwnd() - 200.02).abs() < 1e-9, "{}", cc.cwnd());
    }

    #[test]
    fn timeout_keeps_seven_eighths_as_ssthresh() {
        let mut cc = scalable_at(800.0);
        cc.on_timeout(0, &path());
        assert_eq!((cc.cwnd(), cc.ssthresh()), (1.0, 700.0));
    }

    /// ×1.01 per RTT from 7/8 of the window: back to it after ln(8/7)/ln(1.01) = 13.4 RTTs —
    /// the 14th round — whether the window is 1000 or 10 000 packets.
    #[test]
    fn recovery_takes_14_rounds_at_any_window() {
        for w in [1000.0, 10_000.0] {
            let mut cc = scalable_at(w);
            let mut path = Rounds::new(100.0);
            path.round(&mut cc, true);
            let back = path
                .run(&mut cc, 20, |_, _| false)
                .iter()
                .position(|r| r.cwnd >= w);
            assert_eq!(back, Some(13), "{w}"); // the 14th round after the loss round
        }
    }

    #[test]
    fn one_round_grows_the_window_by_one_percent() {
        let mut cc = scalable_at(1000.0);
        let rounds = Rounds::new(100.0).run(&mut cc, 3, |_, _| false);
        assert_eq!(cwnds(&rounds), [1010, 1020, 1030]);
    }

    /// Periodic loss p: growing from 7/8·W back to W takes `b·W/a` = 12.5·W packets, plus the
    /// W of the recovery round, which do not grow the window. One loss per 1/p packets puts
    /// the peak at W = a/((a + b)·p) = 0.074/p — a/(b·p) = 0.08/p (docs/methodology.md §4) without
    /// the recovery round — and the average at `b·W/ln(1/(1 − b))` = 0.936·W: 741 and 694
    /// packets at p = 1e-4.
    #[test]
    fn average_window_is_inverse_in_the_loss_rate() {
        let mut cc = Scalable::new(ScalableParams::default(), &init(10.0));
        let mut path = Rounds::new(100.0);
        // MIMD forgets the slow-start overshoot slowly: peaks fall by ~1 % per cycle.
        path.run(&mut cc, 1000, loss_rate(1e-4));
        let rounds = path.run(&mut cc, 2000, loss_rate(1e-4));
        let mean = mean_window(&rounds);
        assert!((mean / 694.0 - 1.0).abs() < 0.01, "{mean}");
        let peaks: Vec<_> = rounds.iter().filter(|r| r.lost).copied().collect();
        let peak = mean_window(&peaks); // cycles of 14 or 15 rounds peak at 742..754
        assert!((peak / 741.0 - 1.0).abs() < 0.015, "{peak}");
    }
}
