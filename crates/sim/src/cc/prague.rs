//! TCP Prague (draft-briscoe-iccrg-prague-congestion-control-04, the latest version; Linux
//! `net/ipv4/tcp_prague.c` of the L4S team's tree where the draft leaves a choice): DCTCP made
//! fit for the Internet's L4S service (RFC 9331 §4.3, the "Prague L4S requirements").
//!
//! What it keeps of DCTCP ([`super::dctcp`]): α, the moving average of the fraction of packets
//! marked, updated once per round with g = 1/16 (draft §2.3.2), here from accurate ECN
//! feedback (RFC 9768; [`Ack::ce_pkts`]); a cut of cwnd·(1 − α/2) on an echo, at most once per
//! round trip (draft §2.4.2; the sender's CWR makes it once per window); halving on loss
//! (RFC 9331 §4.3: fall back to Reno-friendly on loss).
//!
//! What it adds:
//! - **Reduced RTT-dependence** (draft §2.4.4; Linux `RTT_CONTROL_RATE`, the default): a flow
//!   whose srtt is below `rtt_ref` (25 ms) behaves as if its RTT were `rtt_virt = max(srtt,
//!   rtt_ref)`. Its additive increase per packet is scaled by `(srtt/rtt_virt)²`: per round it
//!   adds `(srtt/rtt_virt)²` packets, so its rate grows by `1/rtt_virt²` packets/s per second,
//!   as a flow at `rtt_virt` grows. α is folded in, and an echo answered, at most once per
//!   `rtt_virt`. As in Linux this starts only after `rtt_transition_rounds` (500) rounds out of
//!   slow start, so short flows keep their speed; never in slow start.
//! - **Pacing** (draft "Packet Pacing": required): `ratio · max(cwnd, in flight) · MSS / srtt`,
//!   ratio `pacing_ss_ratio` = 2 in the first half of slow start (cwnd < ssthresh/2, Linux's
//!   test: doubling cannot overshoot) and `pacing_ca_ratio` = 1.2 after — Linux's generic
//!   `tcp_pacing_ss_ratio`/`tcp_pacing_ca_ratio`. Linux `tcp_prague.c` and the draft pace at
//!   1.0 after slow start; set `pacing_ca_ratio` = 1 for theirs.
//! - **Additive increase from unmarked packets** (Linux `prague_update_cwnd` subtracts the CE
//!   count from `acked`, "unsaturated marking"), so growth per round is `(1 − p)` of Reno's at
//!   marking probability p and marks near saturation do not also push the window up; growth goes on
//!   during CWR (Linux: Prague's `cong_control` runs in CWR; over DualPI2's random marks a
//!   Prague flow spends most of its time in CWR and would otherwise stall). `grow_in_cwr` =
//!   false stops it, as for DCTCP.
//! - **Fall-back on a classic ECN AQM** (RFC 9331 §4.3 requires it; Linux's research code
//!   follows Briscoe & Ahmed, "TCP Prague Fall-back on Detection of a Classic ECN AQM",
//!   arXiv:1911.00710: it scores RTT variation and queue depth on a log scale with hysteresis
//!   and then raises α towards a classic response; Linux leaves it off by default
//!   and its 6.x tree dropped it). Simplified here: a queue delay estimate `srtt − min_rtt`
//!   above `classic_qdelay_threshold` (5 ms; an L4S queue marks at about 1 ms) marks the
//!   bottleneck as classic, and an echo then keeps at most `classic_beta` (0.5, Reno's) of the
//!   window. No hysteresis, no RTT-variation term; jitter or a route change that raises the
//!   RTT will be taken for a classic queue. `classic_fallback` = false turns it off.
//!
//! Also as Linux: α starts at `alpha_init` = 1 and learns nothing until the first mark, so the
//! first echo halves. Left out: the other RTT-scaling heuristics (`scalable`, `additive`), the
//! fractional-window regime below 2 packets, TSO burst sizing (the sender's business).

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, parse_params, reno_growth, MIN_SSTHRESH_PKTS};
use super::dctcp::{gain, share, MarkedFraction, LOSS_BETA};
use super::{Ack, CaState, CongestionControl, CongestionEvent, Init, Path, Signal};
use super::{Algorithm, Params};
use crate::tcp::ecn::EcnMode;
use crate::time::{NS_PER_MS, NS_PER_SEC};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct PragueParams {
    /// g, the weight of the newest round in α, in (0, 1] (draft §2.3.2: 1/16, as DCTCP).
    pub g: f64,
    /// α before the first mark, in [0, 1] (Linux: 1).
    pub alpha_init: f64,
    /// L, the most packets one ACK may add in slow start (RFC 3465 §2.2: 2), as Reno here.
    pub abc_limit: f64,
    /// Scale growth so a flow below `rtt_ref_ns` gains rate as one at it does (draft §2.4.4;
    /// Linux `prague_rtt_scaling` = 1, `RTT_CONTROL_RATE`).
    pub rtt_scaling: bool,
    /// The reference RTT, ns (draft §2.4.4 and Linux `prague_rtt_target`: 25 ms).
    pub rtt_ref_ns: u64,
    /// Rounds out of slow start before the scaling starts (Linux `prague_rtt_transition`: 500).
    pub rtt_transition_rounds: u64,
    /// Grow during CWR, as Linux Prague does; false grows only in Open, as DCTCP.
    pub grow_in_cwr: bool,
    /// Pacing rate over cwnd/srtt while cwnd < ssthresh/2 (Linux `tcp_pacing_ss_ratio`: 200 %).
    pub pacing_ss_ratio: f64,
    /// Pacing rate over cwnd/srtt otherwise (Linux `tcp_pacing_ca_ratio`: 120 %; Linux Prague
    /// and the draft: 100 %).
    pub pacing_ca_ratio: f64,
    /// Answer echoes as a classic flow when the queue looks classic (RFC 9331 §4.3).
    pub classic_fallback: bool,
    /// Queue delay, `srtt − min_rtt` in ns, above which the bottleneck is taken for a classic
    /// ECN AQM (5 ms: a classic AQM's target; an L4S queue marks at about 1 ms).
    pub classic_qdelay_threshold_ns: u64,
    /// The most of the window an echo leaves when the queue is classic, in (0, 1) (Reno: 0.5).
    pub classic_beta: f64,
}

impl Default for PragueParams {
    fn default() -> Self {
        Self {
            g: 1.0 / 16.0,
            alpha_init: 1.0,
            abc_limit: 2.0,
            rtt_scaling: true,
            rtt_ref_ns: 25 * NS_PER_MS,
            rtt_transition_rounds: 500,
            grow_in_cwr: true,
            pacing_ss_ratio: 2.0,
            pacing_ca_ratio: 1.2,
            classic_fallback: true,
            classic_qdelay_threshold_ns: 5 * NS_PER_MS,
            classic_beta: 0.5,
        }
    }
}

impl PragueParams {
    fn checked(self) -> Result<Self, String> {
        gain("g", self.g)?;
        share("alpha_init", self.alpha_init)?;
        check::positive("abc_limit", self.abc_limit)?;
        check::at_least_one("rtt_ref_ns", self.rtt_ref_ns)?;
        check::positive("pacing_ss_ratio", self.pacing_ss_ratio)?;
        check::positive("pacing_ca_ratio", self.pacing_ca_ratio)?;
        check::at_least_one(
            "classic_qdelay_threshold_ns",
            self.classic_qdelay_threshold_ns,
        )?;
        check::fraction("classic_beta", self.classic_beta)?;
        Ok(self)
    }
}

#[derive(Debug, Clone)]
pub struct Prague {
    params: PragueParams,
    cwnd: f64,
    ssthresh: f64,
    fraction: MarkedFraction,
    /// A mark has been seen: until then α keeps its initial value (Linux `saw_ce`).
    saw_ce: bool,
    /// When the current α window began.
    window_start_ns: u64,
    /// Rounds ended out of slow start (Linux `prague.round`), for the RTT-scaling transition.
    ca_rounds: u64,
    /// When an echo last cut the window.
    last_cut_ns: Option<u64>,
    /// The newest srtt and pipe, for the pacing rate.
    srtt_ns: u64,
    in_flight: u32,
    mss_bytes: u32,
}

impl Prague {
    pub fn new(params: PragueParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            fraction: MarkedFraction::new(params.g, params.alpha_init),
            saw_ce: false,
            window_start_ns: 0,
            ca_rounds: 0,
            last_cut_ns: None,
            srtt_ns: 0,
            in_flight: 0,
            mss_bytes: init.mss_bytes,
        }
    }

    /// The estimate of the fraction of packets marked (draft §2.3.2).
    pub fn alpha(&self) -> f64 {
        self.fraction.alpha()
    }

    fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Reduced RTT-dependence is in force: on, out of slow start, past the transition.
    pub fn rtt_independent(&self) -> bool {
        self.params.rtt_scaling
            && !self.in_slow_start()
            && self.ca_rounds >= self.params.rtt_transition_rounds
    }

    /// The RTT the flow behaves as if it had: max(srtt, rtt_ref) once RTT-independent.
    fn rtt_virt_ns(&self, srtt_ns: u64) -> u64 {
        if self.rtt_independent() {
            srtt_ns.max(self.params.rtt_ref_ns)
        } else {
            srtt_ns
        }
    }

    /// Draft §2.4.4 (Linux `prague_rate_scaled_ai_ack_increase`): the increase per packet is
    /// Reno's times (srtt/rtt_virt)², so growth in rate per second matches a flow at rtt_virt.
    fn ai_scale(&self, srtt_ns: u64) -> f64 {
        let rtt_virt_ns = self.rtt_virt_ns(srtt_ns);
        if srtt_ns == 0 || rtt_virt_ns == srtt_ns {
            return 1.0;
        }
        (srtt_ns as f64 / rtt_virt_ns as f64).powi(2)
    }

    /// Draft §2.3.2: a window ends at a round boundary ([`super::dctcp`] explains the choice),
    /// and, once RTT-independent, no sooner than rtt_virt after it began (Linux
    /// `prague_target_rtt_elapsed`).
    fn maybe_end_window(&mut self, ack: &Ack, path: &Path) {
        if !ack.round_start {
            return;
        }
        let elapsed_ns = ack.now_ns.saturating_sub(self.window_start_ns);
        if self.rtt_independent() && elapsed_ns < self.rtt_virt_ns(path.srtt_ns) {
            return;
        }
        self.fraction.close(self.saw_ce);
        self.window_start_ns = ack.now_ns;
        if !self.in_slow_start() {
            self.ca_rounds += 1;
        }
    }

    /// Growth happens outside Recovery (and CWR unless `grow_in_cwr`), only when cwnd-limited.
    fn may_grow(&self, ack: &Ack) -> bool {
        let state_allows = match ack.ca_state {
            CaState::Recovery => false,
            CaState::Cwr => self.params.grow_in_cwr,
            CaState::Open | CaState::Disorder | CaState::Loss => true,
        };
        state_allows && ack.cwnd_limited
    }

    /// The bottleneck looks like a classic ECN AQM: a standing queue deeper than an L4S queue
    /// keeps (the module comment says what is simplified).
    fn classic_queue(&self, path: &Path) -> bool {
        let queue_ns = (path.min_rtt_ns != u64::MAX && path.srtt_ns > 0)
            .then(|| path.srtt_ns.saturating_sub(path.min_rtt_ns));
        self.params.classic_fallback
            && queue_ns.is_some_and(|q| q > self.params.classic_qdelay_threshold_ns)
    }

    /// An echo within rtt_virt of the last cut is not answered again (draft §2.4.2 with §2.4.4;
    /// Linux `prague_enter_cwr`); before RTT-independence the sender's once-per-window suffices.
    fn cut_suppressed(&self, now_ns: u64, path: &Path) -> bool {
        self.rtt_independent()
            && self
                .last_cut_ns
                .is_some_and(|t| now_ns.saturating_sub(t) < self.rtt_virt_ns(path.srtt_ns))
    }

    /// Set cwnd and ssthresh to `keep` of the window, never below 2 (RFC 5681 §3.1).
    fn reduce_to(&mut self, keep: f64) {
        self.ssthresh = (self.cwnd * keep).max(MIN_SSTHRESH_PKTS);
        self.cwnd = self.ssthresh;
    }
}

impl CongestionControl for Prague {
    fn on_ack(&mut self, ack: &Ack, path: &Path) {
        self.srtt_ns = path.srtt_ns;
        self.in_flight = ack.in_flight;
        self.maybe_end_window(ack, path);
        self.fraction.count(ack);
        // After counting: the window holding the first mark is the first folded into α.
        self.saw_ce |= ack.ce_pkts > 0;
        let unmarked = ack.acked.saturating_sub(ack.ce_pkts);
        if self.may_grow(ack) && unmarked > 0 {
            let ai = if self.in_slow_start() {
                1.0
            } else {
                self.ai_scale(path.srtt_ns)
            };
            let acked = f64::from(unmarked);
            self.cwnd = reno_growth(self.cwnd, self.ssthresh, acked, self.params.abc_limit, ai);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent, path: &Path) {
        match ev.signal {
            Signal::Ecn => {
                if self.cut_suppressed(ev.now_ns, path) {
                    return;
                }
                self.last_cut_ns = Some(ev.now_ns);
                // Draft §2.4.2: keep 1 − α/2; over a classic queue, no more than a classic
                // flow keeps (RFC 9331 §4.3).
                let mut keep = 1.0 - self.alpha() / 2.0;
                if self.classic_queue(path) {
                    keep = keep.min(self.params.classic_beta);
                }
                self.reduce_to(keep);
            }
            // RFC 9331 §4.3 (fall back to Reno-friendly on loss; Linux `prague_enter_loss`).
            Signal::Loss => self.reduce_to(LOSS_BETA),
        }
    }

    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        // RFC 5681 §3.1: ssthresh as for a loss, then the loss window of 1.
        self.reduce_to(LOSS_BETA);
        self.cwnd = 1.0;
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Payload bit/s: `ratio · max(cwnd, pipe) · MSS / srtt` (Linux `prague_update_pacing_rate`
    /// with the generic ratios); none before the first RTT sample.
    fn pacing_rate_bps(&self) -> Option<f64> {
        if self.srtt_ns == 0 {
            return None;
        }
        let ratio = if self.cwnd < self.ssthresh / 2.0 {
            self.params.pacing_ss_ratio
        } else {
            self.params.pacing_ca_ratio
        };
        let window_bits =
            self.cwnd.max(f64::from(self.in_flight)) * f64::from(self.mss_bytes) * 8.0;
        Some(ratio * window_bits * NS_PER_SEC as f64 / self.srtt_ns as f64)
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "prague",
    source: "draft-briscoe-iccrg-prague-congestion-control-04; RFC 9331 §4.3; Linux tcp_prague.c",
    defaults: default_params::<PragueParams>,
    // ECT(1) with accurate feedback, or nothing (RFC 9331 §4.1: a scalable stack uses ECT(1)).
    ecn: &[EcnMode::L4s],
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<PragueParams>(params)?.checked()?;
        Ok(Box::new(Prague::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::dctcp::marking::Marking;
    use crate::cc::testing::{self, init, loss, no_loss, path, Rounds, MSS_BYTES};

    const G: f64 = 1.0 / 16.0;
    const MS: u64 = NS_PER_MS;

    fn prague(params: PragueParams) -> Prague {
        Prague::new(params, &init(10.0))
    }

    /// Defaults with the RTT-scaling transition skipped and α starting at `alpha_init`.
    fn scaled_at_once(alpha_init: f64) -> Prague {
        prague(PragueParams {
            alpha_init,
            rtt_transition_rounds: 0,
            ..PragueParams::default()
        })
    }

    fn ack(now_ms: u64, acked: u32, ce: u32, round_start: bool) -> Ack {
        Ack {
            now_ns: now_ms * MS,
            ce_pkts: ce,
            round_start,
            ..testing::ack(acked)
        }
    }

    /// A path whose smoothed RTT is `srtt_ms` over a minimum of `min_rtt_ms`.
    fn path_at(srtt_ms: u64, min_rtt_ms: u64) -> Path {
        Path {
            srtt_ns: srtt_ms * MS,
            min_rtt_ns: min_rtt_ms * MS,
            ..path()
        }
    }

    fn echo(now_ms: u64) -> CongestionEvent {
        CongestionEvent {
            now_ns: now_ms * MS,
            signal: Signal::Ecn,
            ..loss()
        }
    }

    /// Draft §2.3.2 with Linux's `saw_ce`: windows before the first mark leave α at 1 (DCTCP's
    /// would have decayed); the window holding the first mark, F = 0.3, makes it
    /// (1 − g) + 0.3·g exactly (1e-12).
    #[test]
    fn alpha_learns_from_the_first_marked_window_on() {
        let mut cc = prague(PragueParams::default());
        for t in 0..20 {
            cc.on_ack(&ack(t, 10, 0, true), &path());
        }
        assert_eq!(cc.alpha(), 1.0);
        cc.on_ack(&ack(20, 7, 0, true), &path());
        cc.on_ack(&ack(21, 3, 3, false), &path());
        cc.on_ack(&ack(22, 1, 0, true), &path());
        assert!(
            (cc.alpha() - (1.0 - G + G * 0.3)).abs() < 1e-12,
            "{}",
            cc.alpha()
        );
    }

    /// Draft §2.4.2: an echo keeps 1 − α/2 of the window (α = 0.4: 10 → 8, exact); a loss
    /// halves it whatever α; a timeout restarts from one packet with half as ssthresh.
    #[test]
    fn an_echo_keeps_one_minus_half_alpha_and_a_loss_halves() {
        let mut cc = scaled_at_once(0.4);
        cc.on_congestion(&echo(0), &path_at(10, 10));
        assert_eq!((cc.cwnd(), cc.ssthresh()), (8.0, 8.0));
        let mut lossy = scaled_at_once(0.1);
        lossy.on_congestion(&loss(), &path());
        assert_eq!((lossy.cwnd(), lossy.ssthresh()), (5.0, 5.0));
        lossy.on_timeout(0, &path());
        assert_eq!((lossy.cwnd(), lossy.ssthresh()), (1.0, 2.5));
    }

    /// Draft §2.4.4: once RTT-independent (out of slow start, past the transition), a 5 ms flow
    /// adds (5/25)² = 0.04 of what Reno adds per packet (Reno: 1/cwnd); at srtt ≥ rtt_ref, or
    /// before the transition, Reno's. The increase per packet times cwnd is asserted to 1e-9.
    #[test]
    fn additive_increase_is_scaled_by_srtt_over_rtt_ref_squared() {
        let ai = |cc: &mut Prague, srtt_ms| {
            let before = cc.cwnd();
            cc.on_ack(&ack(0, 1, 0, false), &path_at(srtt_ms, srtt_ms));
            (cc.cwnd() - before) * before
        };
        let mut cc = scaled_at_once(1.0);
        cc.on_congestion(&loss(), &path()); // out of slow start at 5
        assert!((ai(&mut cc, 5) - 0.04).abs() < 1e-9);
        assert!((ai(&mut cc, 30) - 1.0).abs() < 1e-9);
        let mut young = prague(PragueParams {
            rtt_transition_rounds: 2,
            ..PragueParams::default()
        });
        young.on_congestion(&loss(), &path());
        assert!((ai(&mut young, 5) - 1.0).abs() < 1e-9, "not yet scaled");
        for t in 0..2 {
            young.on_ack(&ack(t, 1, 0, true), &path_at(5, 5));
        }
        assert!(
            (ai(&mut young, 5) - 0.04).abs() < 1e-9,
            "scaled after two rounds"
        );
    }

    /// Draft §2.4.4: the aim — flows of 5 ms and 25 ms RTT gain rate at the same pace. Over one
    /// simulated second of congestion avoidance from the same rate (20 000 packets/s) each gains
    /// about 1/(25 ms)² · 1 s = 1600 packets/s (asserted within 5 % of each other); without
    /// the scaling the 5 ms flow gains 25 times as much (asserted > 20×).
    #[test]
    fn flows_below_rtt_ref_gain_rate_as_a_flow_at_rtt_ref_does() {
        let rate_gain = |rtt_ms: u64, rtt_scaling: bool| {
            let params = PragueParams {
                rtt_scaling,
                rtt_transition_rounds: 0,
                ..PragueParams::default()
            };
            // Halved by the loss to 20 000 packets/s: 100 and 500 packets, where a round's
            // whole packets (floor(cwnd)) are within 1 % of cwnd.
            let mut cc = Prague::new(params, &init(40.0 * rtt_ms as f64));
            cc.on_congestion(&loss(), &path());
            let start = cc.cwnd() / rtt_ms as f64;
            Rounds::new(rtt_ms as f64).run(&mut cc, 1000 / rtt_ms, no_loss);
            (cc.cwnd() / rtt_ms as f64 - start) * 1000.0
        };
        let (short, reference) = (rate_gain(5, true), rate_gain(25, true));
        assert!(
            (short / reference - 1.0).abs() < 0.05,
            "{short} vs {reference}"
        );
        assert!(rate_gain(5, false) > 20.0 * short);
    }

    /// Draft §2.4.4 (Linux `prague_target_rtt_elapsed`): a 5 ms flow, RTT-independent, folds a
    /// window into α once per 25 ms, not per 5 ms round. Rounds of F = 1 at 0, 5, … 50 ms give
    /// two updates: α = 1 − (15/16)² exactly (1e-12), not 1 − (15/16)^10.
    #[test]
    fn alpha_is_updated_once_per_virtual_rtt() {
        let mut cc = scaled_at_once(0.0);
        cc.on_congestion(&loss(), &path());
        for t in (0..=50).step_by(5) {
            cc.on_ack(&ack(t, 1, 1, true), &path_at(5, 5));
        }
        assert!(
            (cc.alpha() - (1.0 - (1.0 - G) * (1.0 - G))).abs() < 1e-12,
            "{}",
            cc.alpha()
        );
    }

    /// Draft §2.4.2 with §2.4.4: once RTT-independent, an echo within rtt_virt (25 ms) of the
    /// last cut is not answered; without the scaling the sender's once-per-window rules alone.
    #[test]
    fn echoes_cut_at_most_once_per_virtual_rtt() {
        let fast = path_at(5, 5);
        let mut cc = scaled_at_once(0.4);
        cc.on_congestion(&loss(), &path()); // 5 packets, out of slow start
        cc.on_congestion(&echo(0), &fast);
        cc.on_congestion(&echo(10), &fast);
        assert_eq!(cc.cwnd(), 4.0);
        cc.on_congestion(&echo(30), &fast);
        assert_eq!(cc.cwnd(), 3.2);
        let mut unscaled = prague(PragueParams {
            alpha_init: 0.4,
            rtt_scaling: false,
            ..PragueParams::default()
        });
        unscaled.on_congestion(&echo(0), &fast);
        unscaled.on_congestion(&echo(10), &fast);
        assert!((unscaled.cwnd() - 6.4).abs() < 1e-12);
    }

    /// Linux `prague_update_cwnd`: only unmarked packets grow the window, during CWR too
    /// (`grow_in_cwr`), never in Recovery. Two packets, one marked, at cwnd 5 in CWR: +1/5.
    #[test]
    fn unmarked_packets_grow_the_window_in_cwr_but_not_in_recovery() {
        let cwr = |cc: &mut Prague, ca_state| {
            cc.on_congestion(&loss(), &path());
            let before = cc.cwnd();
            let ack = Ack {
                ca_state,
                ..ack(0, 2, 1, false)
            };
            cc.on_ack(&ack, &path_at(30, 30));
            cc.cwnd() - before
        };
        assert!((cwr(&mut scaled_at_once(1.0), CaState::Cwr) - 0.2).abs() < 1e-12);
        assert_eq!(cwr(&mut scaled_at_once(1.0), CaState::Recovery), 0.0);
        let strict = PragueParams {
            grow_in_cwr: false,
            ..PragueParams::default()
        };
        assert_eq!(cwr(&mut prague(strict), CaState::Cwr), 0.0);
    }

    /// Draft "Packet Pacing": 2 · cwnd · MSS / srtt in the first half of slow start, 1.2 after
    /// (payload bit/s, exact to 1e-6 relative); none before an RTT sample.
    #[test]
    fn paces_at_twice_the_window_in_slow_start_and_1_2_times_after() {
        let mut cc = scaled_at_once(1.0);
        assert_eq!(cc.pacing_rate_bps(), None);
        cc.on_ack(&ack(0, 0, 0, false), &path_at(10, 10));
        let per_window = f64::from(MSS_BYTES) * 8.0 / 0.010; // one packet per 10 ms
        let close = |a: Option<f64>, b: f64| (a.unwrap() / b - 1.0).abs() < 1e-6;
        assert!(close(cc.pacing_rate_bps(), 2.0 * 10.0 * per_window));
        cc.on_congestion(&loss(), &path());
        assert!(close(cc.pacing_rate_bps(), 1.2 * 5.0 * per_window));
    }

    /// RFC 9331 §4.3 fall-back: over 20 ms of queue (srtt 30 ms, min 10 ms) an echo at α = 0.2
    /// keeps half the window, as Reno's would, instead of 0.9; 2 ms of queue, or the switch off,
    /// keeps 0.9 (exact).
    #[test]
    fn a_deep_queue_makes_an_echo_cut_like_a_classic_flow() {
        let cut = |classic_fallback: bool, srtt_ms: u64| {
            let mut cc = prague(PragueParams {
                alpha_init: 0.2,
                classic_fallback,
                ..PragueParams::default()
            });
            cc.on_congestion(&echo(0), &path_at(srtt_ms, 10));
            cc.cwnd()
        };
        assert_eq!(cut(true, 30), 5.0);
        assert_eq!(cut(true, 12), 9.0);
        assert_eq!(cut(false, 30), 9.0);
    }

    /// End to end on a step-marking queue (every packet marked above W* = 100): with no queue
    /// delay visible Prague cuts by α/2, a few percent of the window (asserted < 15 %); when the
    /// RTT shows 10 ms of queue it takes the queue for a classic one and halves (asserted
    /// within 1 % of 0.5 on average).
    #[test]
    fn the_fallback_follows_the_queue_delay_the_path_shows() {
        let mean_keep = |queue_ms: f64| {
            let mut cc = scaled_at_once(1.0);
            let mut path = Marking::new(25.0);
            let step = |sent: u32| if sent > 100 { sent } else { 0 };
            path.round(&mut cc, step); // the base RTT is seen first
            path.set_rtt_ms(25.0 + queue_ms);
            let cuts: Vec<f64> = (0..2000)
                .filter_map(|_| path.round(&mut cc, step).cut)
                .skip(20)
                .map(|(before, after)| after / before)
                .collect();
            cuts.iter().sum::<f64>() / cuts.len() as f64
        };
        assert!(mean_keep(0.0) > 0.85, "{}", mean_keep(0.0));
        assert!((mean_keep(10.0) - 0.5).abs() < 0.005, "{}", mean_keep(10.0));
    }

    /// Registered under its name; ECT(1) with accurate feedback only.
    #[test]
    fn it_is_registered_and_runs_only_over_l4s() {
        let entry = crate::cc::registry::find("prague").expect("registered");
        assert_eq!(entry.ecn, &[EcnMode::L4s]);
        assert!(!entry.per_packet_echo);
    }

    #[test]
    fn out_of_range_parameters_are_refused() {
        let refused = [
            ("g", 0.0),
            ("alpha_init", 1.5),
            ("rtt_ref_ns", 0.0),
            ("pacing_ca_ratio", 0.0),
            ("classic_beta", 1.0),
            ("classic_qdelay_threshold_ns", 0.0),
        ];
        for (name, value) in refused {
            let mut params = Params::new();
            let value = if name.ends_with("_ns") {
                serde_json::Value::from(value as u64)
            } else {
                serde_json::Value::from(value)
            };
            params.insert(name.into(), value);
            let err = (ALGORITHM.build)(&params, &init(10.0)).unwrap_err();
            assert!(err.starts_with(name), "{err}");
        }
    }
}
