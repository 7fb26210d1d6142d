//! AIMD(a, b): standard TCP with its two constants free — `+a` packets per RTT in congestion
//! avoidance, `cwnd·(1 − b)` on a congestion event — as GridDT tunes them (Ravot, Xia, Martin,
//! "GridDT", PFLDnet 2003) and as the AIMD analysis of Floyd, Handley & Padhye (2000) writes them.
//!
//! Everything else is Reno's (RFC 5681 §3.1): slow start, the timeout, and how an ACK is
//! credited (once per ACK, or per packet under RFC 3465 `abc`); [`super::reno`] is built as
//! AIMD(1, 0.5). Under periodic loss p the average window is `sqrt(a(2 − b)/(2bp))` (RFC 9438
//! §4.3 eq. 3 with β = 1 − b; RFC 3649 §5).

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, reno_growth, MIN_SSTHRESH_PKTS};
use super::{Ack, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct AimdParams {
    /// Packets added per RTT in congestion avoidance. Default 1 (Reno, RFC 5681 §3.1).
    pub a: f64,
    /// Fraction of the window given up on a congestion event. Default 0.5 (Reno).
    pub b: f64,
    /// Count packets acknowledged instead of ACKs (RFC 3465). Default true, as Reno.
    pub abc: bool,
    /// L, the most packets one ACK may add in slow start under ABC (RFC 3465 §2.2: 2).
    pub abc_limit: f64,
}

impl Default for AimdParams {
    fn default() -> Self {
        Self {
            a: 1.0,
            b: 0.5,
            abc: true,
            abc_limit: 2.0,
        }
    }
}

impl AimdParams {
    pub(super) fn checked(self) -> Result<Self, String> {
        check::positive("a", self.a)?;
        check::fraction("b", self.b)?;
        check::positive("abc_limit", self.abc_limit)?;
        Ok(self)
    }
}

#[derive(Debug, Clone)]
pub struct Aimd {
    params: AimdParams,
    cwnd: f64,
    ssthresh: f64,
}

impl Aimd {
    pub fn new(params: AimdParams, init: &Init) -> Self {
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

    /// The window after a congestion event: `(1 − b)·cwnd`, never below 2 (RFC 5681 §3.1).
    fn reduced(&self) -> f64 {
        (self.cwnd * (1.0 - self.params.b)).max(MIN_SSTHRESH_PKTS)
    }
}

impl CongestionControl for Aimd {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        if !may_grow(ack) || ack.acked == 0 {
            return;
        }
        // A window's worth of credit adds `a`: +a/cwnd per credit (Reno's RFC 5681 eq. (3) × a).
        let abc_limit = if self.params.abc {
            self.params.abc_limit
        } else {
            f64::INFINITY
        };
        let credit = self.credit(ack.acked);
        self.cwnd = reno_growth(self.cwnd, self.ssthresh, credit, abc_limit, self.params.a);
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        // From cwnd, as Reno here and Linux `ssthresh` hooks: equal to FlightSize whenever the
        // sender is cwnd-limited, the only time cwnd grows.
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // RFC 5681 §3.1: ssthresh as for a loss, then slow start from the loss window of 1.
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
    name: "aimd",
    source: "Floyd, Handley & Padhye 2000 (AIMD(a, b)); GridDT (Ravot et al., PFLDnet 2003)",
    defaults: default_params::<AimdParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<AimdParams>(params)?.checked()?;
        Ok(Box::new(Aimd::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, init, loss, loss_rate, mean_window, path, Rounds};

    fn aimd(a: f64, b: f64) -> Aimd {
        Aimd::new(
            AimdParams {
                a,
                b,
                ..AimdParams::default()
            },
            &init(10.0),
        )
    }

    #[test]
    fn griddt_a4_b025_adds_four_packets_per_rtt_and_gives_up_a_quarter() {
        let mut cc = aimd(4.0, 0.25);
        cc.on_congestion(&loss(), &path());
        assert_eq!((cc.cwnd(), cc.ssthresh()), (7.5, 7.5));
        // A round of seven ACKs (floor(7.5) packets), each +4/cwnd: 4/7.5 + 4/8.03 + ... = 3.16,
        // a little under 4 because the window grows under the ACKs and 7 < 7.5 were sent.
        for _ in 0..7 {
            cc.on_ack(&ack(1), &path());
        }
        assert!((cc.cwnd() - 10.66).abs() < 0.005, "{}", cc.cwnd());
    }

    #[test]
    fn timeout_keeps_1_minus_b_as_ssthresh_and_restarts_from_one() {
        let mut cc = aimd(4.0, 0.25);
        cc.on_timeout(0, &path());
        assert_eq!((cc.cwnd(), cc.ssthresh()), (1.0, 7.5));
    }

    /// AIMD(4, 0.25) at p = 1e-4: sqrt(4·1.75/(0.5·1e-4)) = 374 packets (RFC 9438 §4.3 eq. 3).
    #[test]
    fn average_window_follows_the_aimd_response_function() {
        let mut cc = aimd(4.0, 0.25);
        let mut path = Rounds::new(100.0);
        path.run(&mut cc, 200, loss_rate(1e-4));
        let mean = mean_window(&path.run(&mut cc, 1000, loss_rate(1e-4)));
        assert!((mean / 374.2 - 1.0).abs() < 0.03, "{mean}");
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        let mut params = Params::new();
        params.insert("b".into(), 1.5.into());
        let err = (ALGORITHM.build)(&params, &init(10.0)).unwrap_err();
        assert_eq!(err, "b = 1.5 must lie strictly between 0 and 1");
    }
}
