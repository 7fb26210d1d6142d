//! Standard TCP congestion control: slow start and congestion avoidance of RFC 5681 §3.1,
//! halving on loss, with optional Appropriate Byte Counting (RFC 3465).
//!
//! The loss-recovery half of NewReno (RFC 6582) and SACK recovery (RFC 6675) belongs to the
//! sender; this file only sets the window. Its rule is AIMD(1, 1/2), so Reno is built as
//! [`Aimd`] with those constants: the two can never drift apart.
//!
//! By default the window grows per packet acknowledged (ABC, at most `abc_limit` per ACK in
//! slow start, RFC 3465 §2.2), as Linux (`tcp_slow_start`, `tcp_cong_avoid_ai`), ns-3 and every
//! sender of the Hamilton testbed do (Li's thesis p. 149), and as the other stacks here
//! count: a baseline that counted differently would skew every comparison with it. Without
//! ABC (`abc = false`) it grows per ACK, as RFC 5681 writes it: `+1` per ACK in slow start and
//! `+1/cwnd` per ACK in congestion avoidance, so a delayed-ACK receiver halves the growth
//! (the model behind Mathis' `sqrt(3/4)` constant).

use serde::{Deserialize, Serialize};

use super::aimd::{Aimd, AimdParams};
use super::common::{default_params, parse_params};
use super::Init;
use super::{Algorithm, Params, LOSS_BASED_ECN};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RenoParams {
    /// Count packets acknowledged instead of ACKs (RFC 3465). Default true, as Linux; false is
    /// RFC 5681 as written.
    pub abc: bool,
    /// L, the most packets one ACK may add in slow start under ABC (RFC 3465 §2.2: 2).
    pub abc_limit: f64,
}

impl Default for RenoParams {
    fn default() -> Self {
        Self {
            abc: true,
            abc_limit: 2.0,
        }
    }
}

impl RenoParams {
    /// RFC 5681 §3.1: one packet per RTT, half the window on loss.
    fn as_aimd(self) -> AimdParams {
        AimdParams {
            a: 1.0,
            b: 0.5,
            abc: self.abc,
            abc_limit: self.abc_limit,
        }
    }
}

/// Standard TCP with these switches.
pub fn new(params: RenoParams, init: &Init) -> Aimd {
    Aimd::new(params.as_aimd(), init)
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "reno",
    source: "RFC 5681 §3.1; RFC 3465 (abc)",
    defaults: default_params::<RenoParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let aimd = parse_params::<RenoParams>(params)?.as_aimd().checked()?;
        Ok(Box::new(Aimd::new(aimd, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, init, loss, path};
    use crate::cc::{Ack, CaState, CongestionControl};

    fn reno(abc: bool) -> Aimd {
        new(
            RenoParams {
                abc,
                ..RenoParams::default()
            },
            &init(10.0),
        )
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

    #[test]
    fn packets_are_counted_by_default() {
        assert!(RenoParams::default().abc);
    }

    #[test]
    fn a_zero_abc_limit_is_refused() {
        let mut params = Params::new();
        params.insert("abc_limit".into(), 0.0.into());
        assert!((ALGORITHM.build)(&params, &init(10.0)).is_err());
    }
}
