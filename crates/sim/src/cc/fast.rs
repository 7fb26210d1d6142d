//! FAST TCP (Jin, Wei & Low, INFOCOM 2004; IEEE/ACM ToN 2006).
//!
//! Periodically, not per ACK, the window moves a fraction γ of the way to the window that
//! keeps α packets queued:
//!
//! `w ← min{2w, (1−γ)·w + γ·(baseRTT/avgRTT · w + α)}`
//!
//! At the fixed point `w·(1 − baseRTT/avgRTT) = α`: each flow keeps α packets in the
//! bottleneck queue, so flows with equal α get equal rates whatever their RTTs, provided the
//! buffer holds N·α packets. From an empty queue the rule adds γα per update, at most doubling,
//! which is FAST's slow start. A loss halves the window.
//!
//! FAST was never merged into Linux; its prototype updated once every other RTT ("update in
//! one RTT, freeze in the next") so that the RTT it reads shows the queue its last update
//! made. avgRTT here is the mean RTT of the round just ended: with the default period of two
//! rounds, the frozen one.

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, parse_params, MIN_SSTHRESH_PKTS};
use super::{Ack, CaState, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct FastParams {
    /// α, the packets each flow keeps queued at equilibrium. Default 200, as in Caltech's
    /// Gb/s experiments (as recalled from the FAST papers, not re-read).
    pub alpha: f64,
    /// γ in (0, 1], the fraction of the way to the target each update moves. Default 0.5
    /// (Jin, Wei & Low, INFOCOM 2004).
    pub gamma: f64,
    /// Rounds between window updates. Default 2: update in one RTT, freeze in the next, as the
    /// Caltech prototype did (Jin, Wei & Low, INFOCOM 2004).
    pub update_period_rounds: u32,
}

impl Default for FastParams {
    fn default() -> Self {
        Self {
            alpha: 200.0,
            gamma: 0.5,
            update_period_rounds: 2,
        }
    }
}

impl FastParams {
    fn checked(self) -> Result<Self, String> {
        if !(self.gamma > 0.0 && self.gamma <= 1.0) {
            return Err(format!("gamma must be in (0, 1], not {}", self.gamma));
        }
        check::non_negative("alpha", self.alpha)?;
        check::at_least_one("update_period_rounds", self.update_period_rounds.into())?;
        Ok(self)
    }
}

#[derive(Debug, Clone)]
pub struct Fast {
    params: FastParams,
    cwnd: f64,
    ssthresh: f64,
    /// Smallest RTT ever: the propagation delay (`u64::MAX` before the first sample).
    base_rtt_ns: u64,
    round: RttMean,
    /// Mean RTT of the last round that had samples.
    avg_rtt_ns: Option<f64>,
    rounds_since_update: u32,
}

/// RTT samples of the round in progress.
#[derive(Debug, Clone, Copy, Default)]
struct RttMean {
    sum_ns: f64,
    samples: u32,
}

impl RttMean {
    fn mean_ns(&self) -> Option<f64> {
        (self.samples > 0).then(|| self.sum_ns / f64::from(self.samples))
    }
}

impl Fast {
    pub fn new(params: FastParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            base_rtt_ns: u64::MAX,
            round: RttMean::default(),
            avg_rtt_ns: None,
            rounds_since_update: 0,
        }
    }

    /// The window FAST steers toward next (the update rule of the module doc).
    fn next_window(&self, avg_rtt_ns: f64) -> f64 {
        let FastParams { alpha, gamma, .. } = self.params;
        let target = self.base_rtt_ns as f64 / avg_rtt_ns * self.cwnd + alpha;
        (2.0 * self.cwnd).min((1.0 - gamma) * self.cwnd + gamma * target)
    }

    /// A round ended: take its mean RTT and, once per period, update the window.
    fn on_round_end(&mut self, ack: &Ack) {
        if let Some(mean) = std::mem::take(&mut self.round).mean_ns() {
            self.avg_rtt_ns = Some(mean);
        }
        self.rounds_since_update += 1;
        if self.rounds_since_update < self.params.update_period_rounds {
            return;
        }
        self.rounds_since_update = 0;
        // The loss response owns the window until the reduction ends.
        let reducing = matches!(ack.ca_state, CaState::Recovery | CaState::Cwr);
        let Some(avg_rtt_ns) = self.avg_rtt_ns.filter(|_| !reducing) else {
            return;
        };
        let next = self.next_window(avg_rtt_ns);
        // Growth only while the window is what limits the sender (RFC 7661).
        if next < self.cwnd || ack.cwnd_limited {
            self.cwnd = next;
        }
    }
}

impl CongestionControl for Fast {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if let Some(rtt_ns) = ack.rtt_ns {
            self.base_rtt_ns = self.base_rtt_ns.min(rtt_ns);
            self.round.sum_ns += rtt_ns as f64;
            self.round.samples += 1;
        }
        if ack.round_start {
            self.on_round_end(ack);
        }
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        self.ssthresh = (self.cwnd / 2.0).max(MIN_SSTHRESH_PKTS);
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        self.ssthresh = (self.cwnd / 2.0).max(MIN_SSTHRESH_PKTS);
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
    name: "fast",
    source: "Jin, Wei & Low, INFOCOM 2004 and IEEE/ACM ToN 2006",
    defaults: default_params::<FastParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<FastParams>(params)?.checked()?;
        Ok(Box::new(Fast::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{self, cwnds, no_loss, path, Rounds};
    use crate::cc::Signal;
    use crate::time::NS_PER_MS;

    /// One packet acknowledged with an RTT sample of `rtt_ns`.
    fn ack(rtt_ns: u64) -> Ack {
        Ack {
            rtt_ns: Some(rtt_ns),
            ..testing::ack(1)
        }
    }

    fn fast(alpha: f64) -> Fast {
        let params = FastParams {
            alpha,
            ..FastParams::default()
        };
        Fast::new(params, &testing::init(10.0))
    }

    /// Scripted ACKs: a window's worth, all measuring `rtt_ns`; the last ends the round.
    fn round(f: &mut Fast, rtt_ns: u64) {
        let acks = f.cwnd().floor() as u32;
        for i in 1..=acks {
            f.on_ack(
                &Ack {
                    round_start: i == acks,
                    ..ack(rtt_ns)
                },
                &path(),
            );
        }
    }

    #[test]
    fn the_fixed_point_keeps_alpha_packets_queued() {
        // BDP 100 packets at 100 ms; with α = 20 the window settles at 120, where
        // w·(1 − baseRTT/avgRTT) = 120 · (1 − 100/120) = 20 packets wait in the queue.
        let mut f = fast(20.0);
        let rounds = Rounds::new(100.0)
            .bottleneck(100.0)
            .run(&mut f, 100, no_loss);
        let last = rounds.last().unwrap();
        let queued = f64::from(last.sent) * (1.0 - 100e6 / last.rtt_ns as f64);
        assert_eq!(last.sent, 120);
        assert!((queued - 20.0).abs() < 0.01, "{queued}");
    }

    #[test]
    fn from_an_empty_queue_each_update_adds_gamma_alpha_but_at_most_doubles() {
        let rounds = Rounds::new(100.0).run(&mut fast(20.0), 4, no_loss);
        assert_eq!(
            cwnds(&rounds),
            [10, 20, 20, 30],
            "10 + 0.5 · 20 every other round"
        );
        let rounds = Rounds::new(100.0).run(&mut fast(200.0), 4, no_loss);
        assert_eq!(
            cwnds(&rounds),
            [10, 20, 20, 40],
            "10 + 0.5 · 200, capped at 2 · 10"
        );
    }

    #[test]
    fn it_updates_every_other_round_from_the_mean_rtt_of_the_frozen_one() {
        let mut f = fast(20.0);
        round(&mut f, 100 * NS_PER_MS); // the update round: sets baseRTT
        assert_eq!(f.cwnd(), 10.0);
        // The frozen round: 5 samples at 100 ms and 5 at 300 ms, mean 200 ms. The window
        // moves halfway to 100/200 · 10 + 20 = 25.
        for i in 1..=10 {
            let rtt_ms = if i <= 5 { 100 } else { 300 };
            f.on_ack(
                &Ack {
                    round_start: i == 10,
                    ..ack(rtt_ms * NS_PER_MS)
                },
                &path(),
            );
        }
        assert_eq!(f.cwnd(), 17.5);
    }

    #[test]
    fn more_than_alpha_queued_shrinks_the_window() {
        let mut f = fast(20.0);
        f.cwnd = 200.0;
        round(&mut f, 100 * NS_PER_MS);
        round(&mut f, 200 * NS_PER_MS); // 100 packets queued: target 100/200 · 200 + 20 = 120
        assert_eq!(f.cwnd(), 160.0);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_or_in_recovery() {
        let mut f = fast(20.0);
        for i in 1..=20 {
            let limited = Ack {
                cwnd_limited: false,
                round_start: i % 10 == 0,
                ..ack(NS_PER_MS)
            };
            f.on_ack(&limited, &path());
        }
        assert_eq!(f.cwnd(), 10.0);
        for i in 1..=20 {
            let reducing = Ack {
                ca_state: CaState::Recovery,
                round_start: i % 10 == 0,
                ..ack(1)
            };
            f.on_ack(&reducing, &path());
        }
        assert_eq!(f.cwnd(), 10.0);
    }

    #[test]
    fn loss_halves_the_window() {
        let mut f = fast(20.0);
        f.on_congestion(
            &CongestionEvent {
                now_ns: 0,
                signal: Signal::Loss,
                in_flight: 10,
                lost: 1,
            },
            &path(),
        );
        assert_eq!((f.cwnd(), f.ssthresh()), (5.0, 5.0));
        f.on_timeout(0, &path());
        assert_eq!(f.cwnd(), 1.0);
    }

    #[test]
    fn gamma_outside_0_to_1_is_an_error() {
        let mut params = Params::new();
        params.insert("gamma".into(), 1.5.into());
        let err = (ALGORITHM.build)(&params, &testing::init(10.0)).unwrap_err();
        assert!(err.contains("gamma"), "{err}");
    }
}
