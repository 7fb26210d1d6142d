//! BIC-TCP (Xu, Harfoush, Rhee, "Binary Increase Congestion Control for Fast, Long Distance
//! Networks", INFOCOM 2004) with the constants and rules of Linux `tcp_bic.c`.
//!
//! After a loss BIC searches for the window that caused it, W_max, by bisection: each RTT it
//! closes a quarter of the gap (Linux `BICTCP_B` = 4), at most `max_increment` packets (S_max:
//! a straight line while far away) and at least S_min = B/`smooth_part` = 0.2 packets (a plateau
//! just below W_max). Past W_max it probes for more, mirror-wise: 0.2 packets per RTT for the
//! first B packets, then a third of the distance beyond W_max, then S_max. Up to `low_window`
//! it is Reno. Fast convergence lowers W_max when a loss comes below the previous one, so an
//! incumbent flow yields to a newcomer.
//!
//! Rates are per RTT, spent per packet acknowledged (`+inc/cwnd`, Linux `tcp_cong_avoid_ai`).
//! Linux also scales them by an average of packets per ACK, a correction from the days it
//! counted ACKs which now makes delayed ACKs double BIC's growth; kept, as the testbeds ran it.

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::{Ack, CaState, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

/// The bisection divisor: each RTT closes 1/B of the distance to W_max (Linux `BICTCP_B`).
const B: f64 = 4.0;
/// Before any loss the window grows by at least cwnd/20 per RTT (Linux: `cnt` ≤ 20).
const MIN_GROWTH_BEFORE_LOSS: f64 = 1.0 / 20.0;
/// Weight of a new sample in the packets-per-ACK average (Linux: 1/16, `ACK_RATIO_SHIFT`).
const ACK_RATIO_GAIN: f64 = 1.0 / 16.0;
/// Where the packets-per-ACK average starts (Linux `2 << ACK_RATIO_SHIFT`).
const INITIAL_ACK_RATIO: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BicParams {
    /// Fraction of the window kept on a congestion event above `low_window` (Linux `beta` =
    /// 819/1024, the fixed-point form of 0.8).
    pub beta: f64,
    /// S_max, the most the search adds per RTT (Linux `max_increment` = 16).
    pub max_increment: f64,
    /// Up to this window BIC is Reno: +1 per RTT, halving on loss (Linux `low_window` = 14).
    pub low_window: f64,
    /// Sets S_min = B/`smooth_part` packets per RTT near W_max (Linux `smooth_part` = 20).
    pub smooth_part: f64,
    /// Lower W_max to (1 + β)/2 of the window when a loss comes below it (Linux
    /// `fast_convergence` = 1).
    pub fast_convergence: bool,
    /// Slow-start threshold at the start; none means infinite (Linux `initial_ssthresh` = 0,
    /// unset; 2.6-era kernels: 100).
    pub initial_ssthresh: Option<f64>,
}

impl Default for BicParams {
    fn default() -> Self {
        Self {
            beta: 0.8,
            max_increment: 16.0,
            low_window: 14.0,
            smooth_part: 20.0,
            fast_convergence: true,
            initial_ssthresh: None,
        }
    }
}

impl BicParams {
    fn checked(self) -> Result<Self, String> {
        check::fraction("beta", self.beta)?;
        check::positive("max_increment", self.max_increment)?;
        check::positive("low_window", self.low_window)?;
        check::positive("smooth_part", self.smooth_part)?;
        if let Some(ssthresh) = self.initial_ssthresh {
            check::positive("initial_ssthresh", ssthresh)?;
        }
        Ok(self)
    }

    /// S_min: the increase per RTT next to W_max.
    fn min_increment(&self) -> f64 {
        B / self.smooth_part
    }

    /// Packets per RTT while below W_max: bisection, clamped to [S_min, S_max].
    fn binary_search(&self, below_w_max: f64) -> f64 {
        // Linux divides whole packets, so within 2B packets of W_max the step is already S_min.
        let dist = (below_w_max / B).floor();
        if dist > self.max_increment {
            self.max_increment
        } else if dist <= 1.0 {
            self.min_increment()
        } else {
            dist
        }
    }

    /// Packets per RTT at or above W_max: slow, then faster, then S_max.
    fn max_probing(&self, above_w_max: f64) -> f64 {
        if above_w_max < B {
            self.min_increment()
        } else if above_w_max < self.max_increment * (B - 1.0) {
            above_w_max / (B - 1.0)
        } else {
            self.max_increment
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bic {
    params: BicParams,
    cwnd: f64,
    ssthresh: f64,
    /// W_max: where the last loss happened (after fast convergence); 0 before any loss.
    w_max: f64,
    /// Average packets per ACK in Open state (Linux `delayed_ack`).
    ack_ratio: f64,
}

impl Bic {
    pub fn new(params: BicParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: params.initial_ssthresh.unwrap_or(f64::INFINITY),
            w_max: 0.0,
            ack_ratio: INITIAL_ACK_RATIO,
        }
    }

    /// Packets to add over the next RTT in congestion avoidance (Linux `bictcp_update`).
    fn increase_per_rtt(&self) -> f64 {
        if self.cwnd <= self.params.low_window {
            return 1.0;
        }
        let mut per_rtt = if self.cwnd < self.w_max {
            self.params.binary_search(self.w_max - self.cwnd)
        } else {
            self.params.max_probing(self.cwnd - self.w_max)
        };
        if self.w_max == 0.0 {
            per_rtt = per_rtt.max(self.cwnd * MIN_GROWTH_BEFORE_LOSS);
        }
        // At most +1 per packet acknowledged (Linux `cnt` ≥ 1).
        (per_rtt * self.ack_ratio).min(self.cwnd)
    }

    /// The window after a congestion event: half up to `low_window`, β of it above.
    fn reduced(&self) -> f64 {
        let kept = if self.cwnd <= self.params.low_window {
            0.5
        } else {
            self.params.beta
        };
        (self.cwnd * kept).max(MIN_SSTHRESH_PKTS)
    }

    /// Remember where the loss happened (Linux `bictcp_recalc_ssthresh`).
    fn remember_w_max(&mut self) {
        let shrinking = self.cwnd < self.w_max;
        self.w_max = if shrinking && self.params.fast_convergence {
            self.cwnd * (1.0 + self.params.beta) / 2.0
        } else {
            self.cwnd
        };
    }
}

impl CongestionControl for Bic {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if ack.ca_state == CaState::Open {
            self.ack_ratio += (f64::from(ack.acked) - self.ack_ratio) * ACK_RATIO_GAIN;
        }
        if !may_grow(ack) || ack.acked == 0 {
            return;
        }
        let mut acked = f64::from(ack.acked);
        if self.cwnd < self.ssthresh {
            (self.cwnd, acked) = slow_start(self.cwnd, self.ssthresh, acked);
        }
        self.cwnd += acked * self.increase_per_rtt() / self.cwnd;
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        self.remember_w_max();
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // Linux: ssthresh from the same hook as a loss, then entering Loss resets the search.
        self.ssthresh = self.reduced();
        self.cwnd = 1.0;
        self.w_max = 0.0;
        self.ack_ratio = INITIAL_ACK_RATIO;
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "bic",
    source: "Xu, Harfoush & Rhee, INFOCOM 2004; Linux net/ipv4/tcp_bic.c",
    defaults: default_params::<BicParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<BicParams>(params)?.checked()?;
        Ok(Box::new(Bic::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, cwnds, init, loss, no_loss, path, Rounds};

    fn bic() -> Bic {
        Bic::new(BicParams::default(), &init(10.0))
    }

    /// A BIC flow just reduced from a loss at `w_max`, its ACK average settled at one packet.
    fn bic_after_loss_at(w_max: f64) -> Bic {
        let mut cc = Bic {
            cwnd: w_max,
            ssthresh: w_max,
            ack_ratio: 1.0,
            ..bic()
        };
        cc.on_congestion(&loss(), &path());
        cc
    }

    #[test]
    fn a_loss_keeps_four_fifths_and_remembers_the_window() {
        let cc = bic_after_loss_at(1000.0);
        assert_eq!((cc.cwnd(), cc.ssthresh(), cc.w_max), (800.0, 800.0, 1000.0));
        let small = bic_after_loss_at(14.0);
        assert_eq!(small.cwnd(), 7.0); // Reno's halving up to low_window
    }

    #[test]
    fn up_to_low_window_the_increase_is_renos() {
        let mut cc = bic_after_loss_at(12.0); // halved to 6, in congestion avoidance
        cc.cwnd = 10.0;
        for _ in 0..10 {
            cc.on_ack(&ack(1), &path());
        }
        assert!((cc.cwnd() - 10.96).abs() < 0.01, "{}", cc.cwnd());
    }

    /// From 800 after a loss at 1000: +16 a round while the gap is over 64 (S_max), then a
    /// quarter of the gap, then 0.2 a round from 8 below W_max to 4 above it (60 rounds), then
    /// a third of the excess, then +16 again. (A round adds a little less than its rate: the
    /// window grows under the round's ACKs.)
    #[test]
    fn the_window_climbs_to_w_max_by_bisection_then_probes_beyond() {
        let mut cc = bic_after_loss_at(1000.0);
        let mut path = Rounds::new(100.0);
        let climb = cwnds(&path.run(&mut cc, 14, no_loss));
        assert_eq!(
            climb,
            [816, 832, 848, 863, 879, 895, 911, 927, 942, 954, 964, 971, 977, 982]
        );
        assert_eq!(cwnds(&path.run(&mut cc, 4, no_loss)), [985, 988, 990, 992]);
        // Within 2B = 8 packets below W_max and B = 4 above it: S_min = 0.2 packets a round.
        let plateau = path.run(&mut cc, 60, no_loss);
        assert!(
            (plateau[59].cwnd - 1004.0).abs() < 0.2,
            "{}",
            plateau[59].cwnd
        );
        // Then a third of the excess a round, until 48 above W_max, then S_max.
        let probing = cwnds(&path.run(&mut cc, 12, no_loss));
        assert_eq!(
            probing,
            [1006, 1008, 1011, 1016, 1022, 1030, 1042, 1058, 1074, 1089, 1105, 1121]
        );
    }

    #[test]
    fn fast_convergence_lowers_w_max_below_a_shrinking_peak() {
        let mut cc = bic_after_loss_at(1000.0);
        cc.cwnd = 900.0;
        cc.on_congestion(&loss(), &path());
        assert_eq!((cc.w_max, cc.cwnd()), (900.0 * 0.9, 720.0));
        let mut without = Bic {
            params: BicParams {
                fast_convergence: false,
                ..cc.params
            },
            ..cc
        };
        without.cwnd = 700.0;
        without.on_congestion(&loss(), &path());
        assert_eq!(without.w_max, 700.0);
    }

    #[test]
    fn before_any_loss_it_grows_at_least_five_percent_a_round() {
        let mut cc = Bic {
            ssthresh: 800.0,
            cwnd: 800.0,
            ack_ratio: 1.0,
            ..bic()
        };
        let rounds = Rounds::new(100.0).run(&mut cc, 3, no_loss);
        assert_eq!(cwnds(&rounds), [840, 882, 926]); // +1/20 per packet, above S_max = 16
    }

    /// Linux scales the increase by its packets-per-ACK average: with delayed ACKs the 16
    /// packets per RTT of the linear phase become 32.
    #[test]
    fn delayed_acks_double_the_increase_as_in_linux() {
        let mut cc = bic_after_loss_at(2000.0); // 1600, 400 below W_max: S_max
        cc.ack_ratio = 2.0;
        let rounds = Rounds::new(100.0).delayed_acks(2).run(&mut cc, 2, no_loss);
        assert_eq!(cwnds(&rounds), [1632, 1663]);
    }

    #[test]
    fn timeout_restarts_the_search() {
        let mut cc = bic_after_loss_at(1000.0);
        cc.on_timeout(0, &path());
        assert_eq!((cc.cwnd(), cc.ssthresh(), cc.w_max), (1.0, 640.0, 0.0));
    }

    #[test]
    fn initial_ssthresh_ends_the_first_slow_start_early() {
        let params = BicParams {
            initial_ssthresh: Some(100.0),
            ..BicParams::default()
        };
        let mut cc = Bic::new(params, &init(10.0));
        let rounds = Rounds::new(100.0).run(&mut cc, 5, no_loss);
        // Slow start stops at 100 and spends the rest of the round's ACKs probing from W_max = 0
        // at S_max = 16 per round.
        assert_eq!(cwnds(&rounds), [20, 40, 80, 109, 124]);
    }
}
