//! DCTCP (RFC 8257; Alizadeh et al., "Data Center TCP (DCTCP)", SIGCOMM 2010), with the
//! choices of Linux `net/ipv4/tcp_dctcp.c` where the RFC leaves one open.
//!
//! The sender keeps α, a moving average of the fraction of its packets that came back CE-marked,
//! updated once per window of data (RFC 8257 §3.3), and on an ECN echo cuts the window by α/2
//! instead of by half: a queue that marks a few packets costs a little of the window, one that
//! marks every packet costs half, as a loss does (RFC 8257 §3.5). Between reductions the window
//! grows as Reno's (RFC 8257 §3.4, [`super::common::reno_growth`]).
//!
//! The marks come from the receiver's per-packet echo under `classic` ECN (RFC 8257 §3.2, asked
//! for by `per_packet_echo`) or from accurate feedback under `l4s` (`tcp/ecn.rs`): either way
//! [`Ack::ce_pkts`] counts the packets of the ACK that were marked.
//!
//! Choices where the RFC leaves room:
//! - The observation window (RFC 8257 §3.3 steps 4 and 7: until SND.NXT at the window's start is
//!   acknowledged) is the sender's round, [`Ack::round_start`]: a round ends when a packet sent
//!   after the previous round ended is delivered, which is the same boundary counted in packets
//!   (Linux: `snd_una` passing `next_seq`). The ACK that starts a round acknowledges a packet of
//!   the new window, so the old window is closed before that ACK is counted.
//! - Packets, not bytes, are counted (Linux counts `delivered` and `delivered_ce` packets).
//! - A window in which nothing was acknowledged carries no information and leaves α alone.
//! - α starts at `alpha_init` = 1 (RFC 8257 §3.3; Linux `dctcp_alpha_on_init` = 1024/1024), so a
//!   connection treats its first marks as severe until it has measured otherwise.

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, reno_growth, MIN_SSTHRESH_PKTS};
use super::{Ack, CongestionControl, CongestionEvent, Init, Path, Signal};
use super::{Algorithm, Params};
use crate::tcp::ecn::EcnMode;

/// The fraction of the window kept after a loss: RFC 8257 §3.5 makes DCTCP respond to loss as
/// standard TCP does (RFC 5681 §3.1 halves; Linux `dctcp_react_to_loss`), so it is fixed, not a
/// parameter.
pub(super) const LOSS_BETA: f64 = 0.5;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DctcpParams {
    /// g, the weight of the newest window in α, in (0, 1] (RFC 8257 §3.3: 1/16; Linux
    /// `dctcp_shift_g` = 4).
    pub g: f64,
    /// α before the first window is measured, in [0, 1] (RFC 8257 §3.3: 1; Linux
    /// `dctcp_alpha_on_init` = 1024, i.e. 1).
    pub alpha_init: f64,
    /// L, the most packets one ACK may add in slow start (RFC 3465 §2.2: 2), as Reno here.
    pub abc_limit: f64,
}

impl Default for DctcpParams {
    fn default() -> Self {
        Self {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            abc_limit: 2.0,
        }
    }
}

impl DctcpParams {
    fn checked(self) -> Result<Self, String> {
        gain("g", self.g)?;
        share("alpha_init", self.alpha_init)?;
        check::positive("abc_limit", self.abc_limit)?;
        Ok(self)
    }
}

/// `value` is an EWMA gain in (0, 1]: 1 keeps only the newest window, 0 would never learn.
pub(super) fn gain(name: &str, value: f64) -> Result<(), String> {
    if value > 0.0 && value <= 1.0 {
        Ok(())
    } else {
        Err(format!("{name} = {value} must lie in (0, 1]"))
    }
}

/// `value` is a fraction of packets, in [0, 1].
pub(super) fn share(name: &str, value: f64) -> Result<(), String> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(format!("{name} = {value} must lie in [0, 1]"))
    }
}

/// α and the window it is measured over (RFC 8257 §3.3), shared with Prague, whose estimate is
/// DCTCP's (draft-briscoe-iccrg-prague-congestion-control §2.3.2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct MarkedFraction {
    g: f64,
    alpha: f64,
    /// Packets acknowledged in the window so far (DCTCP.BytesAcked, in packets).
    acked: u64,
    /// Of those, packets the receiver reported CE-marked (DCTCP.BytesMarked).
    marked: u64,
}

impl MarkedFraction {
    pub(super) fn new(g: f64, alpha_init: f64) -> Self {
        Self {
            g,
            alpha: alpha_init,
            acked: 0,
            marked: 0,
        }
    }

    pub(super) fn alpha(&self) -> f64 {
        self.alpha
    }

    /// Steps 2–3: count an ACK's packets into the window.
    pub(super) fn count(&mut self, ack: &Ack) {
        self.acked += u64::from(ack.acked);
        self.marked += u64::from(ack.ce_pkts.min(ack.acked));
    }

    /// Steps 5–8: the window is over; fold its fraction M into α (if `fold`) and start the next.
    /// An empty window is no evidence either way, so α stays.
    pub(super) fn close(&mut self, fold: bool) {
        if fold && self.acked > 0 {
            let m = self.marked as f64 / self.acked as f64;
            self.alpha = (1.0 - self.g) * self.alpha + self.g * m;
        }
        self.acked = 0;
        self.marked = 0;
    }
}

#[derive(Debug, Clone)]
pub struct Dctcp {
    params: DctcpParams,
    cwnd: f64,
    ssthresh: f64,
    fraction: MarkedFraction,
}

impl Dctcp {
    pub fn new(params: DctcpParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            fraction: MarkedFraction::new(params.g, params.alpha_init),
        }
    }

    /// The estimate of the fraction of packets marked (RFC 8257 DCTCP.Alpha).
    pub fn alpha(&self) -> f64 {
        self.fraction.alpha()
    }

    /// Set cwnd and ssthresh to `keep` of the window, never below 2 (RFC 5681 §3.1).
    fn reduce_to(&mut self, keep: f64) {
        self.ssthresh = (self.cwnd * keep).max(MIN_SSTHRESH_PKTS);
        self.cwnd = self.ssthresh;
    }
}

impl CongestionControl for Dctcp {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        // RFC 8257 §3.3 step 4: a window ends when data sent after its start is acknowledged.
        // α is measured in every state, so marks seen during a reduction still count.
        if ack.round_start {
            self.fraction.close(true);
        }
        self.fraction.count(ack);
        // RFC 8257 §3.4: grow as standard TCP, outside reductions and only when cwnd-limited.
        if may_grow(ack) && ack.acked > 0 {
            let acked = f64::from(ack.acked);
            self.cwnd = reno_growth(self.cwnd, self.ssthresh, acked, self.params.abc_limit, 1.0);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent, _path: &Path) {
        match ev.signal {
            // RFC 8257 §3.3: cwnd = cwnd·(1 − α/2); ssthresh with it, as Linux `dctcp_ssthresh`
            // (the sender guarantees this once per window, as RFC 3168 §6.1.2 asks).
            Signal::Ecn => self.reduce_to(1.0 - self.alpha() / 2.0),
            // RFC 8257 §3.5: a loss is answered as standard TCP answers it.
            Signal::Loss => self.reduce_to(LOSS_BETA),
        }
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // RFC 8257 §3.5 and RFC 5681 §3.1: ssthresh as for a loss, then the loss window of 1.
        self.reduce_to(LOSS_BETA);
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
    name: "dctcp",
    source: "RFC 8257; Alizadeh et al., SIGCOMM 2010",
    defaults: default_params::<DctcpParams>,
    // Without marks DCTCP is Reno: it needs ECN, so no `off`.
    ecn: &[EcnMode::Classic, EcnMode::L4s],
    per_packet_echo: true,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<DctcpParams>(params)?.checked()?;
        Ok(Box::new(Dctcp::new(params, init)))
    },
};

/// A controller on a path that marks instead of dropping, driven a round at a time: the ECN
/// counterpart of [`super::testing::Rounds`], which only loses. Each round sends `floor(cwnd)`
/// packets (at least one), each acknowledged by its own ACK one RTT later, spread over the round;
/// a script says how many were CE-marked, spread evenly. The first marked ACK makes the sender's
/// ECN reduction (`on_congestion` with [`Signal::Ecn`]), and the rest of the round is CWR, which
/// the round's end leaves (`on_recovery_exit`) — once per window, as the sender guarantees.
#[cfg(test)]
pub(super) mod marking {
    use crate::cc::testing::MSS_BYTES;
    use crate::cc::{Ack, CaState, CongestionControl, CongestionEvent, Path, Signal};

    /// What one round did.
    #[derive(Debug, Clone, Copy, PartialEq)]
    pub struct EcnRound {
        pub sent: u32,
        pub marked: u32,
        /// cwnd before and after the round's ECN reduction, if it made one.
        pub cut: Option<(f64, f64)>,
        /// cwnd after the round's last ACK.
        pub cwnd: f64,
    }

    #[derive(Debug, Clone)]
    pub struct Marking {
        rtt_ns: u64,
        now_ns: u64,
        delivered: u64,
        round: u64,
        min_rtt_ns: u64,
    }

    impl Marking {
        pub fn new(rtt_ms: f64) -> Self {
            Self {
                rtt_ns: (rtt_ms * 1e6) as u64,
                now_ns: 0,
                delivered: 0,
                round: 0,
                min_rtt_ns: u64::MAX,
            }
        }

        /// The RTT of the rounds to come (a queue building or draining).
        pub fn set_rtt_ms(&mut self, rtt_ms: f64) {
            self.rtt_ns = (rtt_ms * 1e6) as u64;
        }

        /// The path as the sender describes it; srtt is the current round's RTT.
        pub fn path(&self) -> Path {
            Path {
                mss_bytes: MSS_BYTES,
                srtt_ns: if self.min_rtt_ns == u64::MAX {
                    0
                } else {
                    self.rtt_ns
                },
                min_rtt_ns: self.min_rtt_ns,
                delivered: self.delivered,
                round: self.round,
            }
        }

        /// One round; `marks(sent)` of the packets sent come back CE-marked.
        pub fn round(
            &mut self,
            cc: &mut dyn CongestionControl,
            marks: impl FnOnce(u32) -> u32,
        ) -> EcnRound {
            let sent = (cc.cwnd().floor() as u32).max(1);
            let marked = marks(sent).min(sent);
            self.min_rtt_ns = self.min_rtt_ns.min(self.rtt_ns);
            let start_ns = self.now_ns;
            let mut ca_state = CaState::Open;
            let mut cut = None;
            for i in 0..sent {
                self.now_ns = start_ns + self.rtt_ns * u64::from(i + 1) / u64::from(sent);
                let ce = marked_at(i, marked, sent);
                if ce && ca_state == CaState::Open {
                    let before = cc.cwnd();
                    cc.on_congestion(&self.echo(sent), &self.path());
                    cut = Some((before, cc.cwnd()));
                    ca_state = CaState::Cwr;
                }
                self.delivered += 1;
                let ack = Ack {
                    ce_pkts: u32::from(ce),
                    round_start: i == 0,
                    ca_state,
                    ..self.ack(sent)
                };
                cc.on_ack(&ack, &self.path());
            }
            if cut.is_some() {
                cc.on_recovery_exit(self.now_ns, &self.path());
            }
            self.round += 1;
            EcnRound {
                sent,
                marked,
                cut,
                cwnd: cc.cwnd(),
            }
        }

        fn echo(&self, in_flight: u32) -> CongestionEvent {
            CongestionEvent {
                now_ns: self.now_ns,
                signal: Signal::Ecn,
                in_flight,
                lost: 0,
            }
        }

        fn ack(&self, in_flight: u32) -> Ack {
            Ack {
                now_ns: self.now_ns,
                acked: 1,
                lost: 0,
                ce_pkts: 0,
                rtt_ns: Some(self.rtt_ns),
                prior_in_flight: in_flight,
                in_flight,
                round_start: false,
                ca_state: CaState::Open,
                cwnd_limited: true,
                rate: None,
            }
        }
    }

    /// Packet `i` of `sent` is one of `marked` spread evenly over the round.
    fn marked_at(i: u32, marked: u32, sent: u32) -> bool {
        let upto = |n: u32| u64::from(n) * u64::from(marked) / u64::from(sent);
        upto(i + 1) > upto(i)
    }
}

#[cfg(test)]
mod tests {
    use super::marking::Marking;
    use super::*;
    use crate::cc::reno::{self, RenoParams};
    use crate::cc::testing::{self, cwnds, init, loss, losses_in, path, Rounds};
    use crate::cc::CaState;

    const G: f64 = 1.0 / 16.0;

    fn dctcp(alpha_init: f64) -> Dctcp {
        let params = DctcpParams {
            alpha_init,
            ..DctcpParams::default()
        };
        Dctcp::new(params, &init(10.0))
    }

    /// An ACK of `acked` packets, `ce` of them marked; `round_start` ends the window before it.
    fn ack(acked: u32, ce: u32, round_start: bool) -> Ack {
        Ack {
            ce_pkts: ce,
            round_start,
            ..testing::ack(acked)
        }
    }

    /// One observation window of ten single-packet ACKs, `marked` of them CE; the next
    /// window's first ACK closes it.
    fn window(cc: &mut Dctcp, marked: u32) {
        for i in 0..10 {
            cc.on_ack(&ack(1, u32::from(i < marked), i == 0), &path());
        }
    }

    fn echo() -> CongestionEvent {
        CongestionEvent {
            signal: Signal::Ecn,
            ..loss()
        }
    }

    /// RFC 8257 §3.3: α starts at 1, and one window of F = 0.3 makes it (1 − g)·1 + g·0.3
    /// exactly (up to rounding, 1e-12).
    #[test]
    fn one_window_updates_alpha_by_the_ewma() {
        let mut cc = dctcp(1.0);
        assert_eq!(cc.alpha(), 1.0);
        window(&mut cc, 3);
        assert_eq!(cc.alpha(), 1.0, "the window is still open");
        cc.on_ack(&ack(1, 0, true), &path());
        assert!(
            (cc.alpha() - ((1.0 - G) + G * 0.3)).abs() < 1e-12,
            "{}",
            cc.alpha()
        );
    }

    /// RFC 8257 §3.3: α is a moving average of the marked fraction, so a constant F = 0.3 draws
    /// it to 0.3: the error shrinks by 15/16 per window, 0.7·(15/16)^100 < 0.002 (asserted
    /// within 0.01).
    #[test]
    fn alpha_converges_to_a_constant_marked_fraction() {
        let mut cc = dctcp(1.0);
        for _ in 0..100 {
            window(&mut cc, 3);
        }
        cc.on_ack(&ack(1, 0, true), &path());
        assert!((cc.alpha() - 0.3).abs() < 0.01, "{}", cc.alpha());
    }

    /// The ACK that starts a window belongs to it: ten marked packets on the first ACK and none
    /// after give F = 1 for the first window (α stays 1), then F = 0 (α = 15/16). An empty
    /// window (the connection's first boundary) leaves α alone.
    #[test]
    fn windows_are_closed_before_the_ack_that_starts_the_next() {
        let mut cc = dctcp(1.0);
        cc.on_ack(&ack(10, 10, true), &path());
        cc.on_ack(&ack(10, 0, true), &path());
        assert_eq!(cc.alpha(), 1.0);
        cc.on_ack(&ack(10, 10, true), &path());
        assert_eq!(cc.alpha(), 1.0 - G);
    }

    /// RFC 8257 §3.3: an echo cuts cwnd to cwnd·(1 − α/2), ssthresh with it (exact for
    /// α = 0.4: 10 → 8); α = 0 leaves cwnd as it was; never below 2 packets.
    #[test]
    fn an_echo_keeps_one_minus_half_alpha_of_the_window() {
        let mut cc = dctcp(0.4);
        cc.on_congestion(&echo(), &path());
        assert_eq!((cc.cwnd(), cc.ssthresh()), (8.0, 8.0));
        let mut unmarked = dctcp(0.0);
        unmarked.on_congestion(&echo(), &path());
        assert_eq!((unmarked.cwnd(), unmarked.ssthresh()), (10.0, 10.0));
        let mut small = Dctcp::new(DctcpParams::default(), &init(3.0));
        small.on_congestion(&echo(), &path());
        assert_eq!(small.cwnd(), 2.0);
    }

    /// RFC 8257 §3.5: a loss halves the window whatever α says; a timeout keeps half as
    /// ssthresh and restarts from one packet.
    #[test]
    fn a_loss_halves_the_window_whatever_alpha() {
        let mut cc = dctcp(0.1);
        cc.on_congestion(&loss(), &path());
        assert_eq!((cc.cwnd(), cc.ssthresh()), (5.0, 5.0));
        let mut rto = dctcp(0.1);
        rto.on_timeout(0, &path());
        assert_eq!((rto.cwnd(), rto.ssthresh()), (1.0, 5.0));
    }

    /// RFC 8257 §3.4 via Linux `tcp_may_raise_cwnd`: no growth while a reduction is under way
    /// (CWR or Recovery) or when the application, not cwnd, limits the sender; α still learns.
    #[test]
    fn no_growth_in_cwr_or_recovery_or_when_not_cwnd_limited() {
        let mut cc = dctcp(1.0);
        for ca_state in [CaState::Cwr, CaState::Recovery] {
            cc.on_ack(
                &Ack {
                    ca_state,
                    ..ack(1, 0, true)
                },
                &path(),
            );
        }
        let idle = Ack {
            cwnd_limited: false,
            ..ack(1, 0, true)
        };
        cc.on_ack(&idle, &path());
        assert_eq!(cc.cwnd(), 10.0);
        // Three boundaries: the first window was empty, the next two had F = 0.
        assert_eq!(cc.alpha(), (1.0 - G) * (1.0 - G), "windows in CWR count");
    }

    /// RFC 8257 §3.4: with no marks DCTCP is Reno — slow start, congestion avoidance, halving
    /// on loss — packet for packet (equal windows, every round).
    #[test]
    fn without_marks_the_window_follows_reno() {
        let mut cc = dctcp(1.0);
        let mut reno = reno::new(RenoParams::default(), &init(10.0));
        let script = [3, 9, 20];
        let ours = Rounds::new(10.0).run(&mut cc, 40, losses_in(&script));
        let theirs = Rounds::new(10.0).run(&mut reno, 40, losses_in(&script));
        assert_eq!(cwnds(&ours), cwnds(&theirs));
        assert!(ours.iter().zip(&theirs).all(|(a, b)| a.cwnd == b.cwnd));
    }

    /// Alizadeh et al. 2010 §3.3: with every packet marked once the window exceeds
    /// W* = C·RTT + K, the window saws between (W* + 1)(1 − α/2) and W* + 1, with
    /// α ≈ sqrt(2/W*) and amplitude D = (W* + 1)·α/2. At W* = 100: α ≈ 0.141, D ≈ 7.1 packets;
    /// the measured mean α and mean cut are asserted within 20 % of them. Measured: α = 0.139,
    /// D = 6.1, a period of 7.2 rounds. D is 14 % short because the paper holds α constant
    /// (g → 0) while with g = 1/16 and a 7-round period α swings, and each cut uses it at its
    /// low, just before the marked round is folded in.
    #[test]
    fn the_sawtooth_matches_the_sigcomm_2010_steady_state() {
        const W_STAR: u32 = 100;
        let mut cc = dctcp(1.0);
        let mut path = Marking::new(1.0);
        let step = |sent: u32| if sent > W_STAR { sent } else { 0 };
        for _ in 0..1000 {
            path.round(&mut cc, step); // slow start and convergence of α
        }
        let (mut alpha_sum, mut cuts) = (0.0, vec![]);
        let rounds = 3000;
        for _ in 0..rounds {
            let round = path.round(&mut cc, step);
            alpha_sum += cc.alpha();
            cuts.extend(round.cut.map(|(before, after)| before - after));
        }
        let alpha = alpha_sum / f64::from(rounds);
        let amplitude = cuts.iter().sum::<f64>() / cuts.len() as f64;
        let paper_alpha = (2.0 / f64::from(W_STAR)).sqrt();
        let paper_d = f64::from(W_STAR + 1) * paper_alpha / 2.0;
        assert!((alpha / paper_alpha - 1.0).abs() < 0.2, "α = {alpha}");
        assert!((amplitude / paper_d - 1.0).abs() < 0.2, "D = {amplitude}");
        // The period is the amplitude climbed at one packet per round, plus the marked round.
        let period = f64::from(rounds) / cuts.len() as f64;
        assert!(
            (period / (amplitude + 1.0) - 1.0).abs() < 0.2,
            "{period} rounds"
        );
    }

    /// Registered under its name; it needs ECN (classic by default) and asks for RFC 8257 §3.2's
    /// per-packet echo.
    #[test]
    fn it_is_registered_needs_ecn_and_asks_for_the_per_packet_echo() {
        let entry = crate::cc::registry::find("dctcp").expect("registered");
        assert_eq!(entry.ecn, &[EcnMode::Classic, EcnMode::L4s]);
        assert!(entry.per_packet_echo);
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        for (name, value) in [
            ("g", 0.0),
            ("g", 1.5),
            ("alpha_init", -0.1),
            ("alpha_init", 2.0),
        ] {
            let mut params = Params::new();
            params.insert(name.into(), value.into());
            let err = (ALGORITHM.build)(&params, &init(10.0)).unwrap_err();
            assert!(err.starts_with(name), "{err}");
        }
        let mut g_one = Params::new();
        g_one.insert("g".into(), 1.0.into());
        assert!((ALGORITHM.build)(&g_one, &init(10.0)).is_ok());
    }
}
