//! Standard TCP congestion control: slow start and congestion avoidance of RFC 5681 §3.1,
//! halving on loss, with optional Appropriate Byte Counting (RFC 3465).
//!
//! The loss-recovery half of NewReno (RFC 6582) and SACK recovery (RFC 6675) belongs to the
//! sender; this file only sets the window.
//!
//! Without ABC the window grows per ACK, as RFC 5681 writes it: `+1` per ACK in slow start and
//! `+1/cwnd` per ACK in congestion avoidance, so a delayed-ACK receiver halves the growth
//! (the model behind Mathis' `sqrt(3/4)` constant). With ABC it grows per packet acknowledged
//! (at most `abc_limit` per ACK in slow start, RFC 3465 §2.2), as Linux does.

use serde::{Deserialize, Serialize};

use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::registry::{Algorithm, Params};
use super::{Ack, CongestionControl, CongestionEvent, Init, Path};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoParams {
    /// Count packets acknowledged instead of ACKs (RFC 3465). Default false: RFC 5681 as written.
    pub abc: bool,
    /// L, the most packets one ACK may add in slow start under ABC (RFC 3465 §2.2: 2).
    pub abc_limit: f64,
}

impl Default for RenoParams {
    fn default() -> Self {
        Self {
            abc: false,
            abc_limit: 2.0,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Reno {
    params: RenoParams,
    cwnd: f64,
    ssthresh: f64,
}

impl Reno {
    pub fn new(params: RenoParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
        }
    }

    /// What this ACK counts for: packets under ABC, one per ACK otherwise.
    fn credit(&self, acked: u32) -> f64 {
        if self.params.abc {
            f64::from(acked)
        } else {
            1.0
        }
    }
}

impl CongestionControl for Reno {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if !may_grow(ack) || ack.acked == 0 {
            return;
        }
        let mut credit = self.credit(ack.acked);
        if self.cwnd < self.ssthresh {
            let ss_credit = if self.params.abc {
                credit.min(self.params.abc_limit)
            } else {
                credit
            };
            let (cwnd, left) = slow_start(self.cwnd, self.ssthresh, ss_credit);
            self.cwnd = cwnd;
            credit = left;
        }
        // RFC 5681 eq. (3): cwnd += SMSS*SMSS/cwnd per ACK, i.e. +1/cwnd packets per credit.
        self.cwnd += credit / self.cwnd;
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        // RFC 5681 eq. (4) with cwnd for FlightSize, as Linux `tcp_reno_ssthresh`: the two are
        // equal whenever the sender is cwnd-limited, which is the only time cwnd grows.
        self.ssthresh = (self.cwnd / 2.0).max(MIN_SSTHRESH_PKTS);
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // RFC 5681 §3.1: ssthresh as for a loss, then restart from the loss window of 1.
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
    name: "reno",
    source: "RFC 5681 §3.1; RFC 3465 (abc)",
    defaults: default_params::<RenoParams>,
    build: |params: &Params, init: &Init| Ok(Box::new(Reno::new(parse_params(params)?, init))),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::CaState;

    fn path() -> Path {
        Path {
            mss_bytes: 1448,
            srtt_ns: 0,
            min_rtt_ns: u64::MAX,
            delivered: 0,
            round: 0,
        }
    }

    fn ack(acked: u32) -> Ack {
        Ack {
            now_ns: 0,
            acked,
            lost: 0,
            rtt_ns: None,
            prior_in_flight: 0,
            in_flight: 0,
            round_start: false,
            ca_state: CaState::Open,
            cwnd_limited: true,
            rate: None,
        }
    }

    fn reno(abc: bool) -> Reno {
        let init = Init {
            mss_bytes: 1448,
            initial_cwnd_pkts: 10.0,
            seed: 0,
        };
        Reno::new(
            RenoParams {
                abc,
                ..RenoParams::default()
            },
            &init,
        )
    }

    fn loss() -> CongestionEvent {
        CongestionEvent {
            now_ns: 0,
            in_flight: 0,
            lost: 1,
        }
    }

    #[test]
    fn slow_start_doubles_per_round_with_one_ack_per_packet() {
        let mut r = reno(false);
        for _ in 0..10 {
            r.on_ack(&ack(1), &path());
        }
        assert_eq!(r.cwnd(), 20.0);
    }

    #[test]
    fn delayed_acks_slow_rfc5681_slow_start_to_1_5x_per_round() {
        let mut r = reno(false);
        for _ in 0..5 {
            r.on_ack(&ack(2), &path());
        }
        assert_eq!(r.cwnd(), 15.0);
    }

    #[test]
    fn abc_counts_packets_up_to_l_per_ack() {
        let mut r = reno(true);
        r.on_ack(&ack(2), &path());
        r.on_ack(&ack(5), &path()); // a stretch ACK: L = 2 caps it
        assert_eq!(r.cwnd(), 14.0);
    }

    #[test]
    fn congestion_avoidance_adds_one_packet_per_window_of_acks() {
        let mut r = reno(false);
        r.on_congestion(&loss(), &path());
        assert_eq!((r.cwnd(), r.ssthresh()), (5.0, 5.0));
        // One window of ACKs, each adding 1/cwnd: just under +1 (1/5 + 1/5.2 + ...).
        for _ in 0..5 {
            r.on_ack(&ack(1), &path());
        }
        assert!((r.cwnd() - 5.0 - 0.9).abs() < 0.05, "{}", r.cwnd());
    }

    #[test]
    fn no_growth_in_recovery_or_when_not_cwnd_limited() {
        let mut r = reno(false);
        r.on_ack(
            &Ack {
                ca_state: CaState::Recovery,
                ..ack(1)
            },
            &path(),
        );
        r.on_ack(
            &Ack {
                cwnd_limited: false,
                ..ack(1)
            },
            &path(),
        );
        assert_eq!(r.cwnd(), 10.0);
    }

    #[test]
    fn timeout_restarts_from_one_packet() {
        let mut r = reno(false);
        r.on_timeout(0, &path());
        assert_eq!((r.cwnd(), r.ssthresh()), (1.0, 5.0));
    }
}
