//! TCP Vegas (Brakmo & Peterson, IEEE JSAC 1995) with the behaviour of Linux
//! `net/ipv4/tcp_vegas.c`.
//!
//! Once per round Vegas estimates the packets it keeps queued,
//! `diff = cwnd·(rtt − baseRTT)/baseRTT`, from baseRTT (the smallest RTT ever) and rtt (the
//! smallest RTT of the round just ended, which filters out delayed ACKs). In congestion
//! avoidance it adds a packet when diff < α, takes one off when diff > β and holds in between;
//! slow start ends as soon as diff > γ, with cwnd cut to the rate actually achieved. Linux
//! compares the integer part of diff, so the band it holds in is 2 ≤ queue < 5 packets; we do
//! the same. A round with at most two RTT samples (one delayed ACK per round) and every ACK
//! outside Open fall back to Reno, and a loss halves the window as in Reno.

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::{Ack, CaState, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

/// Linux never lets Vegas's own adjustment take cwnd below 2 packets.
const MIN_CWND_PKTS: f64 = 2.0;
/// A round needs more than this many RTT samples for the Vegas calculation: two samples per
/// round are almost certainly delayed ACKs (Linux `cntRTT <= 2`).
const MIN_ROUND_SAMPLES: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct VegasParams {
    /// α, packets: with fewer queued, cwnd grows by one per round (Linux `alpha` = 2).
    pub alpha: f64,
    /// β, packets: with more queued, cwnd shrinks by one per round (Linux `beta` = 4).
    pub beta: f64,
    /// γ, packets: with more queued, slow start ends (Linux `gamma` = 1).
    pub gamma: f64,
}

impl Default for VegasParams {
    fn default() -> Self {
        Self {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
        }
    }
}

impl VegasParams {
    fn checked(self) -> Result<Self, String> {
        check::non_negative("alpha", self.alpha)?;
        check::non_negative("beta", self.beta)?;
        check::non_negative("gamma", self.gamma)?;
        if self.alpha > self.beta {
            return Err(format!(
                "alpha = {} must not exceed beta = {}",
                self.alpha, self.beta
            ));
        }
        Ok(self)
    }
}

#[derive(Debug, Clone)]
pub struct Vegas {
    params: VegasParams,
    cwnd: f64,
    ssthresh: f64,
    /// Smallest RTT ever: the propagation delay (`u64::MAX` before the first sample).
    base_rtt_ns: u64,
    round: RoundRtt,
}

/// RTT samples of the round in progress.
#[derive(Debug, Clone, Copy)]
struct RoundRtt {
    min_ns: u64,
    samples: u32,
}

impl Default for RoundRtt {
    fn default() -> Self {
        Self {
            min_ns: u64::MAX,
            samples: 0,
        }
    }
}

impl Vegas {
    pub fn new(params: VegasParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            base_rtt_ns: u64::MAX,
            round: RoundRtt::default(),
        }
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Linux `tcp_reno_cong_avoid`: slow start, then +1 per window of packets acknowledged.
    fn reno_increase(&mut self, acked: u32) {
        let (cwnd, left) = slow_start(self.cwnd, self.ssthresh, f64::from(acked));
        self.cwnd = cwnd + left / cwnd;
    }

    /// The once-per-round adjustment from the smallest RTT of the round.
    fn adjust(&mut self, rtt_ns: u64, ack: &Ack) {
        let (base, rtt) = (self.base_rtt_ns as f64, rtt_ns.max(1) as f64);
        let queued = (self.cwnd * (rtt - base) / base).floor();
        let grow = ack.cwnd_limited;
        if self.in_slow_start() && queued > self.params.gamma {
            // Going too fast: send at the rate actually achieved, +1 for Linux's truncation.
            let achieved = (self.cwnd * base / rtt).floor() + 1.0;
            self.cwnd = self.cwnd.min(achieved);
            self.ssthresh = self.ssthresh.min(self.cwnd);
        } else if self.in_slow_start() {
            if grow {
                self.reno_increase(ack.acked);
            }
        } else if queued > self.params.beta {
            self.cwnd -= 1.0;
            self.ssthresh = self.ssthresh.min(self.cwnd);
        } else if queued < self.params.alpha && grow {
            self.cwnd += 1.0;
        }
        self.cwnd = self.cwnd.max(MIN_CWND_PKTS);
    }
}

impl CongestionControl for Vegas {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if let Some(rtt_ns) = ack.rtt_ns {
            self.base_rtt_ns = self.base_rtt_ns.min(rtt_ns);
        }
        if ack.ca_state != CaState::Open {
            // Linux runs Vegas only in Open (`vegas_disable`) and starts a fresh round on
            // return (`vegas_enable`); meanwhile Reno grows the window.
            self.round = RoundRtt::default();
            if may_grow(ack) {
                self.reno_increase(ack.acked);
            }
            return;
        }
        if let Some(rtt_ns) = ack.rtt_ns {
            self.round.min_ns = self.round.min_ns.min(rtt_ns);
            self.round.samples += 1;
        }
        if ack.round_start {
            let round = std::mem::take(&mut self.round);
            if round.samples >= MIN_ROUND_SAMPLES {
                self.adjust(round.min_ns, ack);
            } else if may_grow(ack) {
                self.reno_increase(ack.acked);
            }
        } else if self.in_slow_start() && may_grow(ack) {
            self.cwnd = slow_start(self.cwnd, self.ssthresh, f64::from(ack.acked)).0;
        }
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        // Linux `tcp_reno_ssthresh`.
        self.ssthresh = (self.cwnd / 2.0).max(MIN_SSTHRESH_PKTS);
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        self.ssthresh = (self.cwnd / 2.0).max(MIN_SSTHRESH_PKTS);
        self.cwnd = 1.0;
    }

    fn on_idle_restart(&mut self, _now_ns: u64, _idle_ns: u64, _path: &Path) {
        // Linux `tcp_vegas_init` on CA_EVENT_TX_START: the path may have changed while idle.
        self.base_rtt_ns = u64::MAX;
        self.round = RoundRtt::default();
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "vegas",
    source: "Brakmo & Peterson, IEEE JSAC 1995; Linux net/ipv4/tcp_vegas.c",
    defaults: default_params::<VegasParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<VegasParams>(params)?.checked()?;
        Ok(Box::new(Vegas::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{self, no_loss, path, Rounds};
    use crate::cc::Signal;
    use crate::time::NS_PER_MS;

    /// One packet acknowledged with an RTT sample of `rtt_ms`.
    fn ack(rtt_ms: u64) -> Ack {
        Ack {
            rtt_ns: Some(rtt_ms * NS_PER_MS),
            ..testing::ack(1)
        }
    }

    fn vegas() -> Vegas {
        Vegas::new(VegasParams::default(), &testing::init(10.0))
    }

    /// Scripted ACKs: `acks` packets that all measure `rtt_ms`; the last ends the round.
    fn round(v: &mut Vegas, acks: u32, rtt_ms: u64) {
        for i in 1..=acks {
            v.on_ack(
                &Ack {
                    round_start: i == acks,
                    ..ack(rtt_ms)
                },
                &path(),
            );
        }
    }

    /// Out of slow start at 32 packets with baseRTT 100 ms (the second test's story).
    fn in_congestion_avoidance() -> Vegas {
        let mut v = vegas();
        round(&mut v, 10, 100);
        round(&mut v, 20, 125);
        assert_eq!((v.cwnd(), v.ssthresh()), (32.0, 32.0));
        v
    }

    #[test]
    fn slow_start_doubles_each_round_while_nothing_queues() {
        let mut v = vegas();
        round(&mut v, 10, 100);
        assert_eq!(v.cwnd(), 20.0);
        assert_eq!(v.base_rtt_ns, 100 * NS_PER_MS);
    }

    #[test]
    fn slow_start_ends_at_the_achieved_rate_once_more_than_gamma_packets_queue() {
        let mut v = vegas();
        round(&mut v, 10, 100);
        // 19 ACKs of slow start take cwnd to 39; the round's RTT is 125 ms, so
        // diff = 39 · 25/100 = 9.75 > γ and cwnd becomes 39 · 100/125 = 31.2 → 31 + 1.
        round(&mut v, 20, 125);
        assert_eq!((v.cwnd(), v.ssthresh()), (32.0, 32.0));
    }

    #[test]
    fn more_than_beta_packets_queued_take_one_packet_off_per_round() {
        let mut v = in_congestion_avoidance();
        round(&mut v, 32, 130); // diff = 32 · 0.3 = 9.6
        assert_eq!((v.cwnd(), v.ssthresh()), (31.0, 31.0));
    }

    #[test]
    fn fewer_than_alpha_packets_queued_add_one_packet_per_round() {
        let mut v = in_congestion_avoidance();
        round(&mut v, 32, 105); // diff = 32 · 0.05 = 1.6
        assert_eq!(v.cwnd(), 33.0);
    }

    #[test]
    fn between_alpha_and_beta_the_window_holds() {
        let mut v = in_congestion_avoidance();
        round(&mut v, 32, 110); // diff = 3.2
        round(&mut v, 32, 114); // diff = 4.48: Linux's integer diff is 4, not above β
        assert_eq!(v.cwnd(), 32.0);
    }

    #[test]
    fn the_round_rtt_is_its_smallest_sample() {
        let mut v = in_congestion_avoidance();
        v.on_ack(&ack(180), &path()); // delayed ACKs inflate some samples
        v.on_ack(&ack(150), &path());
        round(&mut v, 3, 105);
        assert_eq!(v.cwnd(), 33.0);
    }

    #[test]
    fn two_samples_in_a_round_are_delayed_acks_so_reno_decides() {
        let mut v = in_congestion_avoidance();
        round(&mut v, 2, 130);
        assert_eq!(v.cwnd(), 32.0 + 1.0 / 32.0);
    }

    #[test]
    fn outside_open_reno_grows_and_the_round_restarts() {
        let mut v = in_congestion_avoidance();
        round(&mut v, 10, 130);
        assert_eq!(v.cwnd(), 31.0);
        for _ in 0..31 {
            v.on_ack(
                &Ack {
                    ca_state: CaState::Disorder,
                    ..ack(130)
                },
                &path(),
            );
        }
        assert!((v.cwnd() - 32.0).abs() < 0.02, "{}", v.cwnd());
        // Only the two Open samples count: too few for Vegas.
        round(&mut v, 2, 130);
        assert!(v.cwnd() > 32.0);
    }

    #[test]
    fn no_growth_when_not_cwnd_limited_but_a_queue_still_shrinks_the_window() {
        let mut v = in_congestion_avoidance();
        let idle = |rtt_ms, last| Ack {
            cwnd_limited: false,
            round_start: last,
            ..ack(rtt_ms)
        };
        for i in 1..=3 {
            v.on_ack(&idle(100, i == 3), &path());
        }
        assert_eq!(v.cwnd(), 32.0);
        for i in 1..=3 {
            v.on_ack(&idle(150, i == 3), &path());
        }
        assert_eq!(v.cwnd(), 31.0);
    }

    #[test]
    fn loss_halves_like_reno_and_a_timeout_restarts_from_one() {
        let mut v = in_congestion_avoidance();
        v.on_congestion(
            &CongestionEvent {
                now_ns: 0,
                signal: Signal::Loss,
                in_flight: 32,
                lost: 1,
            },
            &path(),
        );
        assert_eq!((v.cwnd(), v.ssthresh()), (16.0, 16.0));
        v.on_timeout(0, &path());
        assert_eq!((v.cwnd(), v.ssthresh()), (1.0, 8.0));
    }

    #[test]
    fn idle_restart_forgets_base_rtt() {
        let mut v = in_congestion_avoidance();
        v.on_idle_restart(0, 1_000_000_000, &path());
        round(&mut v, 32, 130); // the new path's RTT: nothing queued
        assert_eq!(v.base_rtt_ns, 130 * NS_PER_MS);
        assert_eq!(v.cwnd(), 33.0);
    }

    #[test]
    fn on_a_bottleneck_vegas_settles_with_alpha_to_beta_packets_queued() {
        // BDP 100 packets at 100 ms. Slow start overshoots to 201 packets, then congestion
        // avoidance takes one packet off per round until 2–4 packets wait in the queue
        // (Linux's integer diff is W·(W − 100)/100: 2 at W = 102, 4 at W = 104).
        let mut v = vegas();
        let rounds = Rounds::new(100.0)
            .bottleneck(100.0)
            .run(&mut v, 250, no_loss);
        let queued: Vec<u32> = rounds[200..].iter().map(|r| r.sent - 100).collect();
        assert!(queued.iter().all(|q| (2..=4).contains(q)), "{queued:?}");
    }
}
