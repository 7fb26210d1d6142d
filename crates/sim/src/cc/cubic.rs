//! CUBIC (RFC 9438), with the choices of Linux `tcp_cubic.c` where the RFC leaves one open.
//!
//! After a congestion event the window follows `W_cubic(t) = C(t − K)³ + W_max` (§4.2): concave
//! up to the window of the last loss, W_max, reached K seconds into the epoch, then convex beyond
//! it. Each ACK moves cwnd towards `W_cubic(t + RTT)`, never by more than half a packet per
//! packet acknowledged (≤ 1.5× per RTT). Where Reno would be faster, CUBIC follows Reno's
//! estimate W_est instead (the Reno-friendly region, §4.3). A loss keeps β = 0.7 of the window
//! (§4.6); fast convergence lowers W_max when a loss comes below it (§4.7). The first slow start
//! runs HyStart++ (RFC 9406, [`super::hystart`]), as §4.10 recommends.
//!
//! Linux's choices (`net/ipv4/tcp_cubic.c`), followed here:
//! - growth is credited per packet acknowledged, where §4.4 writes "per ACK";
//! - the look-ahead is the minimum RTT (`delay_min`), where §4.2 uses the smoothed RTT;
//! - ssthresh comes from cwnd, not FlightSize (allowed by §4.6 when cwnd only grows while
//!   cwnd-limited, which [`super::common::may_grow`] ensures);
//! - until the first loss (and again after a timeout) the window grows at least 5 % per RTT
//!   (`cnt` ≤ 20), so CA after a HyStart++ exit does not crawl from K = 0;
//! - W_est grows by α_cubic throughout, where §4.3 raises α to 1 once W_est passes the window
//!   before the reduction (the `reno_alpha_past_prior` switch).
//!
//! Linux's own HyStart is the 2008 original (ACK trains and a delay threshold, leaving slow start
//! for CA at once); RFC 9406's HyStart++ is the one modelled. Spurious-loss undo (§4.9) needs a
//! hook the sender does not offer yet.

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::hystart::{HyStartPlusPlus, Phase, CSS_GROWTH_DIVISOR};
use super::{Ack, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};

/// Before any loss the window grows by at least this per packet acknowledged (Linux: `cnt` ≤ 20).
const MIN_GROWTH_BEFORE_LOSS: f64 = 1.0 / 20.0;
/// Growth per packet acknowledged never exceeds this: target ≤ 1.5·cwnd (RFC 9438 §4.2).
const MAX_GROWTH_PER_PACKET: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct CubicParams {
    /// C, packets/s³ (RFC 9438 §5.1: 0.4; Linux `bic_scale` = 41 → 0.4004).
    pub c: f64,
    /// β_cubic, the fraction of the window kept on a congestion event (RFC 9438 §4.6: 0.7;
    /// Linux `beta` = 717/1024).
    pub beta: f64,
    /// Lower W_max to (1 + β)/2 of the window when a loss comes below it (RFC 9438 §4.7:
    /// SHOULD; Linux `fast_convergence` = 1).
    pub fast_convergence: bool,
    /// Never grow slower than Reno would (RFC 9438 §4.3; Linux `tcp_friendliness` = 1).
    pub reno_friendly: bool,
    /// Once W_est passes the window before the last reduction, grow it by 1 per RTT, as Reno
    /// (RFC 9438 §4.3: SHOULD). Default false: Linux `tcp_cubic.c` keeps α_cubic throughout,
    /// and under 1e-3 random loss the RFC's rule makes CUBIC 11% faster than Reno, where the
    /// kernel's is 2% slower (docs/hosts.md, the fidelity table).
    pub reno_alpha_past_prior: bool,
    /// Run HyStart++ (RFC 9406) in the first slow start. Default true: RFC 9438 §4.10 says
    /// SHOULD, and Linux runs its own HyStart by default (`hystart` = 1).
    pub hystart: bool,
}

impl Default for CubicParams {
    fn default() -> Self {
        Self {
            c: 0.4,
            beta: 0.7,
            fast_convergence: true,
            reno_friendly: true,
            reno_alpha_past_prior: false,
            hystart: true,
        }
    }
}

impl CubicParams {
    fn checked(self) -> Result<Self, String> {
        check::positive("c", self.c)?;
        check::fraction("beta", self.beta)?;
        Ok(self)
    }

    /// α_cubic = 3(1 − β)/(1 + β): the Reno-friendly estimate's increase per RTT, which matches
    /// Reno's average window under β (RFC 9438 §4.3) — 0.529 for β = 0.7.
    fn alpha(&self) -> f64 {
        3.0 * (1.0 - self.beta) / (1.0 + self.beta)
    }
}

/// One congestion-avoidance stage: the cubic curve and the Reno estimate beside it.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Epoch {
    start_ns: u64,
    /// K, seconds from the start to the plateau.
    k_s: f64,
    /// The plateau: W_max, or the starting window if that is larger (RFC 9438 §4.8, §4.10).
    plateau: f64,
    /// W_est, Reno's window had it started with this stage (RFC 9438 §4.3).
    w_est: f64,
}

impl Epoch {
    /// K = cbrt((W_max − cwnd_epoch)/C) (RFC 9438 §4.2 eq. 2). A stage starting at or above
    /// W_max — after a timeout, a HyStart++ exit, or fast convergence — starts on the plateau:
    /// K = 0, W_max = cwnd (§4.8, §4.10).
    fn begin(now_ns: u64, cwnd: f64, w_max: f64, c: f64) -> Self {
        let plateau = w_max.max(cwnd);
        Self {
            start_ns: now_ns,
            k_s: ((plateau - cwnd) / c).cbrt(),
            plateau,
            w_est: cwnd,
        }
    }

    /// W_cubic(t) = C(t − K)³ + W_max, t seconds into the stage (RFC 9438 §4.2 eq. 1).
    fn w_cubic(&self, c: f64, t_s: f64) -> f64 {
        c * (t_s - self.k_s).powi(3) + self.plateau
    }

    fn elapsed_s(&self, now_ns: u64) -> f64 {
        now_ns.saturating_sub(self.start_ns) as f64 * 1e-9
    }
}

#[derive(Debug, Clone)]
pub struct Cubic {
    params: CubicParams,
    cwnd: f64,
    ssthresh: f64,
    /// The window before the last reduction, after fast convergence; 0 before any loss and
    /// after a timeout.
    w_max: f64,
    /// cwnd when ssthresh was last set (RFC 9438 `cwnd_prior`).
    cwnd_prior: f64,
    epoch: Option<Epoch>,
    /// Present during the initial slow start when HyStart++ is on.
    hystart: Option<HyStartPlusPlus>,
}

impl Cubic {
    pub fn new(params: CubicParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            w_max: 0.0,
            cwnd_prior: 0.0,
            epoch: None,
            hystart: params.hystart.then(HyStartPlusPlus::default),
        }
    }

    /// The window after a congestion event: β of it, never below 2 (RFC 9438 §4.6).
    fn reduced(&self) -> f64 {
        (self.cwnd * self.params.beta).max(MIN_SSTHRESH_PKTS)
    }

    /// Remember where the loss happened, lowered by fast convergence (RFC 9438 §4.7).
    fn remember_w_max(&mut self) {
        let shrinking = self.cwnd < self.w_max;
        self.w_max = if shrinking && self.params.fast_convergence {
            self.cwnd * (1.0 + self.params.beta) / 2.0
        } else {
            self.cwnd
        };
    }

    /// HyStart++ reads every ACK of the initial slow start; returns the divisor of slow-start
    /// growth, and ends slow start when it is done.
    fn hystart_divisor(&mut self, ack: &Ack) -> f64 {
        let Some(hystart) = &mut self.hystart else {
            return 1.0;
        };
        match hystart.on_ack(ack) {
            Phase::SlowStart => 1.0,
            Phase::Conservative => CSS_GROWTH_DIVISOR,
            Phase::Done => {
                // RFC 9438 §4.10: cwnd_prior = cwnd; CA starts on the plateau (K = 0).
                self.ssthresh = self.cwnd;
                self.cwnd_prior = self.cwnd;
                self.hystart = None;
                1.0
            }
        }
    }

    /// Congestion avoidance for `acked` packets (RFC 9438 §4.2–4.5).
    fn congestion_avoidance(&mut self, acked: f64, now_ns: u64, path: &Path) {
        let (c, cwnd) = (self.params.c, self.cwnd);
        let epoch = self
            .epoch
            .get_or_insert_with(|| Epoch::begin(now_ns, cwnd, self.w_max, c));
        let target = epoch.w_cubic(c, epoch.elapsed_s(now_ns) + lookahead_s(path));
        let mut per_packet = ((target - cwnd) / cwnd).clamp(0.0, MAX_GROWTH_PER_PACKET);
        if self.w_max == 0.0 {
            per_packet = per_packet.max(MIN_GROWTH_BEFORE_LOSS);
        }
        let cubic = cwnd + acked * per_packet;

        // W_est grows by α_cubic per RTT; by 1 once past the window before the last reduction
        // if the RFC's rule is on.
        let alpha = if self.params.reno_alpha_past_prior && epoch.w_est >= self.cwnd_prior {
            1.0
        } else {
            self.params.alpha()
        };
        epoch.w_est += alpha * acked / cwnd;
        // "Choose the higher of the two" (§4.2); Linux likewise takes the faster growth.
        self.cwnd = if self.params.reno_friendly {
            cubic.max(epoch.w_est)
        } else {
            cubic
        };
    }
}

/// How far ahead the target is read: the minimum RTT, as Linux (`delay_min`); 0 before a sample.
fn lookahead_s(path: &Path) -> f64 {
    if path.min_rtt_ns == u64::MAX {
        0.0
    } else {
        path.min_rtt_ns as f64 * 1e-9
    }
}

impl CongestionControl for Cubic {
    fn on_ack(&mut self, ack: &Ack, path: &Path) {
        let divisor = self.hystart_divisor(ack);
        if !may_grow(ack) || ack.acked == 0 {
            return;
        }
        let mut acked = f64::from(ack.acked);
        if self.cwnd < self.ssthresh {
            let (cwnd, left) = slow_start(self.cwnd, self.ssthresh, acked / divisor);
            self.cwnd = cwnd;
            acked = left * divisor;
            if acked <= 0.0 {
                return;
            }
        }
        self.congestion_avoidance(acked, ack.now_ns, path);
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        self.remember_w_max();
        self.cwnd_prior = self.cwnd;
        self.ssthresh = self.reduced();
        self.cwnd = self.ssthresh;
        self.epoch = None;
        self.hystart = None;
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // RFC 9438 §4.8: ssthresh by β, Reno's restart from 1; the next stage starts on the
        // plateau at the window it starts from (K = 0), as after Linux's reset of W_max.
        self.cwnd_prior = self.cwnd;
        self.ssthresh = self.reduced();
        self.cwnd = 1.0;
        self.w_max = 0.0;
        self.epoch = None;
        self.hystart = None;
    }

    fn on_idle_restart(&mut self, now_ns: u64, idle_ns: u64, _path: &Path) {
        // RFC 9438 §5.8: t excludes the time the application left the window unused (Linux
        // shifts the epoch on `CA_EVENT_TX_START`).
        if let Some(epoch) = &mut self.epoch {
            epoch.start_ns = (epoch.start_ns + idle_ns).min(now_ns);
        }
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "cubic",
    source: "RFC 9438; RFC 9406 (hystart); Linux net/ipv4/tcp_cubic.c",
    defaults: default_params::<CubicParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<CubicParams>(params)?.checked()?;
        Ok(Box::new(Cubic::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{ack, cwnds, init, loss, loss_rate, mean_window, no_loss, path};
    use crate::cc::testing::{Round, Rounds};

    fn params() -> CubicParams {
        CubicParams::default()
    }

    /// A CUBIC flow in congestion avoidance at window `w`, no loss seen yet.
    fn cubic_at(w: f64, params: CubicParams) -> Cubic {
        Cubic {
            cwnd: w,
            ssthresh: w,
            hystart: None,
            ..Cubic::new(params, &init(10.0))
        }
    }

    fn seconds(ns: u64) -> f64 {
        ns as f64 * 1e-9
    }

    #[test]
    fn k_is_the_time_back_to_w_max() {
        // RFC 9438 §4.2 eq. 2 after a loss from W_max: cbrt(0.3·W_max/0.4).
        let k = |w_max: f64| Epoch::begin(0, 0.7 * w_max, w_max, 0.4).k_s;
        assert!((k(1000.0) - 9.086).abs() < 0.001, "{}", k(1000.0));
        assert!((k(10_000.0) - 19.574).abs() < 0.001, "{}", k(10_000.0));
        assert_eq!(Epoch::begin(0, 500.0, 400.0, 0.4).k_s, 0.0); // above W_max: on the plateau
    }

    #[test]
    fn a_loss_keeps_seven_tenths_and_remembers_the_window() {
        let mut cc = cubic_at(1000.0, params());
        cc.on_congestion(&loss(), &path());
        assert_eq!(
            (cc.cwnd(), cc.ssthresh(), cc.w_max, cc.cwnd_prior),
            (700.0, 700.0, 1000.0, 1000.0)
        );
        cc.cwnd = 900.0; // the next loss comes below W_max: fast convergence
        cc.on_congestion(&loss(), &path());
        assert_eq!((cc.w_max, cc.cwnd()), (900.0 * 0.85, 630.0));
        let mut slow = cubic_at(
            900.0,
            CubicParams {
                fast_convergence: false,
                ..params()
            },
        );
        slow.w_max = 1000.0;
        slow.on_congestion(&loss(), &path());
        assert_eq!(slow.w_max, 900.0);
    }

    /// After a loss at 1000 packets (RTT 100 ms), each round ends within 1 % of C(t − K)³ + W_max
    /// at that time, t counted from the first ACK after recovery; the window is back at W_max
    /// after K = 9.09 s and keeps climbing, convex, beyond.
    #[test]
    fn the_window_follows_the_cubic_function_after_a_loss() {
        let mut cc = cubic_at(
            1000.0,
            CubicParams {
                reno_friendly: false,
                ..params()
            },
        );
        let mut path = Rounds::new(100.0);
        path.round(&mut cc, true);
        let epoch_start = path.now_ns() + 100_000_000 / 700;
        let k = Epoch::begin(0, 700.0, 1000.0, 0.4).k_s;
        for round in path.run(&mut cc, 150, no_loss) {
            let t = seconds(path_now(&round, epoch_start));
            let formula = 0.4 * (t - k).powi(3) + 1000.0;
            assert!(
                (round.cwnd / formula - 1.0).abs() < 0.01,
                "t = {t:.1}: {} vs {formula}",
                round.cwnd
            );
        }
        assert!(cc.cwnd() > 1080.0, "convex beyond W_max: {}", cc.cwnd()); // W(15 s) = 1083
    }

    /// Time from the epoch start to the end of a round, whose rounds follow each other.
    fn path_now(round: &Round, epoch_start_ns: u64) -> u64 {
        100_000_000 * (round.index + 1) - epoch_start_ns
    }

    /// With a 1 ms RTT the cubic curve barely moves in a round and Reno's estimate leads: the
    /// window grows by α_cubic = 0.529 a round (RFC 9438 §4.3), past the window before the loss
    /// too, as Linux does; with the RFC's rule on, by 1 a round once past it, as Reno does.
    #[test]
    fn on_short_paths_it_grows_as_reno_would() {
        for (rfc_rule, past_prior) in [(false, 0.529), (true, 0.99)] {
            let mut cc = cubic_at(
                100.0,
                CubicParams {
                    reno_alpha_past_prior: rfc_rule,
                    ..params()
                },
            );
            let mut path = Rounds::new(1.0);
            path.round(&mut cc, true);
            let rounds = path.run(&mut cc, 80, no_loss);
            assert_eq!(cwnds(&rounds[..4]), [71, 71, 72, 72]); // 70.53, 71.05, 71.58, ...
            let slope = |a: usize, b: usize| (rounds[b].cwnd - rounds[a].cwnd) / (b - a) as f64;
            assert!((slope(0, 40) - 0.525).abs() < 0.01, "{}", slope(0, 40));
            let late = slope(70, 79);
            assert!((late - past_prior).abs() < 0.02, "{rfc_rule}: {late}");
        }
    }

    #[test]
    fn growth_never_exceeds_half_a_packet_per_packet() {
        let mut cc = cubic_at(100.0, params());
        cc.epoch = Some(Epoch::begin(0, 100.0, 100.0, 0.4));
        for _ in 0..100 {
            cc.on_ack(
                &Ack {
                    now_ns: 60_000_000_000,
                    ..ack(1)
                },
                &path(),
            ); // W_cubic(60 s) ≫ 150
        }
        assert_eq!(cc.cwnd(), 150.0);
    }

    #[test]
    fn before_any_loss_growth_is_at_least_five_percent_a_round() {
        let mut cc = cubic_at(1000.0, params());
        let rounds = Rounds::new(100.0).run(&mut cc, 2, no_loss);
        assert_eq!(cwnds(&rounds), [1050, 1102]); // from K = 0 the curve would add 0.4·t³
    }

    #[test]
    fn timeout_restarts_from_one_and_the_next_stage_from_the_plateau() {
        let mut cc = cubic_at(1000.0, params());
        cc.on_timeout(0, &path());
        assert_eq!((cc.cwnd(), cc.ssthresh(), cc.w_max), (1.0, 700.0, 0.0));
        let mut path = Rounds::new(100.0);
        path.run(&mut cc, 11, no_loss); // slow start 1 → 700 in ten rounds, then CA
        assert_eq!(cc.epoch.unwrap().k_s, 0.0);
        assert!(
            cc.hystart.is_none(),
            "HyStart++ only in the initial slow start"
        );
    }

    #[test]
    fn idle_time_does_not_count_towards_the_curve() {
        let mut cc = cubic_at(1000.0, params());
        let mut path = Rounds::new(100.0);
        path.round(&mut cc, true);
        path.run(&mut cc, 10, no_loss);
        let start = cc.epoch.unwrap().start_ns;
        path.idle(&mut cc, 5000.0);
        assert_eq!(cc.epoch.unwrap().start_ns, start + 5_000_000_000);
    }

    /// A 500-packet pipe at 20 ms (and an endless buffer): slow start doubles until the queue
    /// stretches the round's minimum RTT by at least 4 ms — 640 packets take 25.6 ms — then
    /// Conservative Slow Start grows ×1.25 a round, and after five CSS rounds congestion
    /// avoidance takes over with ssthresh = cwnd, without a loss (RFC 9406 §4.2).
    #[test]
    fn hystart_leaves_slow_start_near_the_bdp_without_a_loss() {
        let mut cc = Cubic::new(params(), &init(10.0));
        let rounds = Rounds::new(20.0)
            .bottleneck(500.0)
            .run(&mut cc, 12, no_loss);
        let sent: Vec<_> = rounds.iter().map(|r| r.sent).collect();
        assert_eq!(
            sent,
            [10, 20, 40, 80, 160, 320, 640, 805, 1006, 1258, 1572, 1965]
        );
        assert_eq!(rounds[10].ssthresh, f64::INFINITY);
        assert!(
            (rounds[11].ssthresh - 1965.5).abs() < 1.0,
            "{}",
            rounds[11].ssthresh
        );
        assert!(cc.hystart.is_none() && cc.epoch.unwrap().k_s == 0.0);
    }

    #[test]
    fn without_hystart_slow_start_runs_until_a_loss() {
        let mut cc = Cubic::new(
            CubicParams {
                hystart: false,
                ..params()
            },
            &init(10.0),
        );
        let rounds = Rounds::new(20.0).bottleneck(500.0).run(&mut cc, 9, no_loss);
        assert_eq!(cwnds(&rounds)[8], 5120);
        assert_eq!(cc.ssthresh(), f64::INFINITY);
    }

    /// RFC 9438 Table 1 (RTT 100 ms): the average window is 1054 packets at p = 1e-5 and 5926 at
    /// 1e-6 (Reno: 379 and 1200), from the deterministic-loss analysis of §5: each loss comes as
    /// the window regains W_max, K after the last, and AVG_W = W_max·(3 + β)/4 =
    /// 1.054·(RTT/p)^0.75. Fast convergence off, as §4.7 says for a lone flow; starting from that
    /// W_max, since without fast convergence the sawtooth forgets a start far from it slowly.
    #[test]
    fn average_window_follows_the_cubic_response_function() {
        for (p, table) in [(1e-5, 1054.0), (1e-6, 5926.0)] {
            let mut cc = cubic_at(
                table * 4.0 / 3.7,
                CubicParams {
                    fast_convergence: false,
                    ..params()
                },
            );
            let mut path = Rounds::new(100.0);
            path.round(&mut cc, true);
            let mean = mean_window(&path.run(&mut cc, 1000, loss_rate(p)));
            assert!((mean / table - 1.0).abs() < 0.01, "p = {p}: {mean}");
        }
    }

    /// RFC 9438 Table 2 (RTT 10 ms): at p = 1e-4 CUBIC's average window is Reno's, 120 — the
    /// cycle is too short for the curve to matter, and AIMD(α_cubic, β) averages as Reno does.
    #[test]
    fn on_short_paths_the_average_window_is_renos() {
        let mut cc = cubic_at(100.0, params());
        let mut path = Rounds::new(10.0);
        path.run(&mut cc, 500, loss_rate(1e-4));
        let mean = mean_window(&path.run(&mut cc, 3000, loss_rate(1e-4)));
        assert!((mean / 120.0 - 1.0).abs() < 0.02, "{mean}"); // 121.5
    }
}
