//! BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh & Jacobson, ACM Queue 2016), with the
//! behaviour of Linux `net/ipv4/tcp_bbr.c`.
//!
//! BBR models the path by two numbers, the bottleneck bandwidth (the largest delivery rate of
//! the last 10 rounds) and the propagation delay (the smallest RTT of the last 10 s), and sends
//! at `pacing_gain · bw` with at most `cwnd_gain · bw · min_rtt` in flight. The gains come
//! from the mode (`modes.rs`); the estimates from `filters.rs`; STARTUP ends when
//! `full_pipe.rs` says the bandwidth stopped growing; loss only limits recovery
//! (`recovery.rs`), which BBR runs itself (`owns_recovery`).
//!
//! cwnd keeps room for ACKs that come in bursts (`ack_aggregation.rs`, Linux 4.19 on). A
//! token-bucket policer, which drops rather than queues, is detected from lossy intervals at a
//! steady rate, and its rate then stands in for the bandwidth estimate (`lt_bw.rs`). The send
//! quantum cwnd keeps room for is Linux's floor of 2 packets. Linux sizes it as the sender
//! sizes its TSO frames (about 1 ms of the pacing rate, `bbr_tso_segs_goal`); the controller
//! is not told whether the host sends frames (`tcp/tso.rs`), so that is not followed yet.

mod filters;
mod full_pipe;
mod lt_bw;
mod modes;
mod recovery;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;
use serde::{Deserialize, Serialize};

use self::filters::MinRtt;
use self::full_pipe::FullPipe;
use self::lt_bw::{LtBw, LtChange, LtSample};
use self::modes::{GainCycle, Mode, ProbeRtt, HIGH_GAIN, MIN_CWND_PKTS};
use self::recovery::{Recovery, RecoveryCwnd};
use super::ack_aggregation::AckAggregation;
use super::check;
use super::common::{default_params, parse_params};
use super::max_filter::MaxFilter;
use super::{Ack, CongestionControl, CongestionEvent, Init, Path, RateSample};
use super::{Algorithm, Params};
use crate::tcp::ecn::EcnMode;
use crate::time::{NS_PER_MS, NS_PER_SEC};

/// Pace 1 % below the estimate so a queue the probe built can drain (Linux
/// `bbr_pacing_margin_percent`).
const PACING_MARGIN: f64 = 0.01;
/// The RTT assumed for the first pacing rate, before any sample (Linux: `USEC_PER_MSEC`).
const NOMINAL_RTT_NS: u64 = NS_PER_MS;
/// Packets per send burst (Linux `bbr_tso_segs_goal`, at least 2 above 1.2 Mb/s); cwnd keeps
/// room for three (`bbr_quantization_budget`).
const SEND_QUANTUM_PKTS: f64 = 2.0;
/// The probing phase's extra room, so it rises above the BDP even when the BDP is small.
const PROBE_EXTRA_PKTS: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct BbrParams {
    /// cwnd gain in PROBE_BW, leaving room for ACKs that arrive late or in bursts (Linux
    /// `bbr_cwnd_gain` = 2).
    pub cwnd_gain: f64,
    /// Rounds the bandwidth filter remembers: one gain cycle plus 2 (Linux `bbr_bw_rtts` = 10).
    pub bw_window_rounds: u64,
    /// How long a min_rtt lasts unconfirmed before PROBE_RTT (Linux `bbr_min_rtt_win_sec` =
    /// 10 s).
    pub min_rtt_window_ns: u64,
    /// Time PROBE_RTT holds 4 packets in flight (Linux `bbr_probe_rtt_mode_ms` = 200 ms).
    pub probe_rtt_duration_ns: u64,
    /// How much of the ACK aggregation measured cwnd keeps room for (Linux
    /// `bbr_extra_acked_gain` = 1); 0 turns the allowance off, as before Linux 4.19.
    pub extra_acked_gain: f64,
    /// Detect a token-bucket policer and send at its rate (Linux `lt_bw`, in v1 since 4.9);
    /// false turns it off.
    pub long_term_bw: bool,
}

impl Default for BbrParams {
    fn default() -> Self {
        Self {
            cwnd_gain: 2.0,
            bw_window_rounds: 10,
            min_rtt_window_ns: 10 * NS_PER_SEC,
            probe_rtt_duration_ns: 200 * NS_PER_MS,
            extra_acked_gain: 1.0,
            long_term_bw: true,
        }
    }
}

impl BbrParams {
    fn checked(self) -> Result<Self, String> {
        check::positive("cwnd_gain", self.cwnd_gain)?;
        check::at_least_one("bw_window_rounds", self.bw_window_rounds)?;
        check::at_least_one("min_rtt_window_ns", self.min_rtt_window_ns)?;
        check::at_least_one("probe_rtt_duration_ns", self.probe_rtt_duration_ns)?;
        check::non_negative("extra_acked_gain", self.extra_acked_gain)?;
        Ok(self)
    }
}

/// The BDP in packets and the estimates it comes from. The estimates change far less often than
/// ACKs arrive, and working it out again on each ACK took two divisions, a quarter of `on_ack`.
#[derive(Debug, Clone, Copy, Default)]
struct Bdp {
    bw_bps: f64,
    /// The same bandwidth in packets per nanosecond, as the ACK-aggregation estimate reads it.
    bw_pkts_per_ns: f64,
    min_rtt_ns: Option<u64>,
    /// `None` until there is an RTT sample.
    pkts: Option<f64>,
}

impl Bdp {
    /// Work it out again if an estimate changed.
    fn refresh(&mut self, bw_bps: f64, min_rtt_ns: Option<u64>, mss_bits: f64) {
        if bw_bps != self.bw_bps || min_rtt_ns != self.min_rtt_ns {
            let pkts =
                min_rtt_ns.map(|rtt_ns| bw_bps * rtt_ns as f64 / NS_PER_SEC as f64 / mss_bits);
            *self = Self {
                bw_bps,
                bw_pkts_per_ns: bw_bps / mss_bits / NS_PER_SEC as f64,
                min_rtt_ns,
                pkts,
            };
        }
    }

    /// `gain` times the BDP, whole packets rounded up (Linux `bbr_bdp`); `initial_cwnd` until
    /// there is an RTT sample.
    fn pkts(&self, gain: f64, initial_cwnd: f64) -> f64 {
        match self.pkts {
            Some(bdp_pkts) => (gain * bdp_pkts).ceil(),
            None => initial_cwnd,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Bbr {
    params: BbrParams,
    mss_bytes: u32,
    initial_cwnd: f64,
    rng: Xoshiro256PlusPlus,
    /// Bottleneck bandwidth, bit/s.
    max_bw: MaxFilter,
    min_rtt: MinRtt,
    /// The BDP at a gain of 1 for the current estimates (Linux `bbr_max_bw`)...
    bdp: Bdp,
    /// ...and for the model's bandwidth (Linux `bbr_bw`): the policed rate while that is in
    /// use, else a copy of `bdp`, so the ACK path needs not ask which.
    model_bdp: Bdp,
    lt_bw: LtBw,
    /// Packets marked lost since the start, as the ACKs reported them (Linux `tp->lost`).
    lost_pkts: u64,
    full_pipe: FullPipe,
    ack_aggregation: AckAggregation,
    mode: Mode,
    recovery: Recovery,
    cwnd: f64,
    /// The BDP when STARTUP ended (Linux sets `snd_ssthresh` then), for the time series.
    ssthresh: f64,
    pacing_rate_bps: f64,
    has_seen_rtt: bool,
    /// Samples count as application-limited until this many packets have been delivered, so
    /// PROBE_RTT's low rates are not taken as measurements. Linux sets `tp->app_limited` there
    /// and flags by send time, one round further; `Ack` does not say when a packet was sent.
    probe_rtt_limited_until: u64,
    /// Sending restarted after idle and no data has been acknowledged since.
    idle_restart: bool,
}

impl Bbr {
    pub fn new(params: BbrParams, init: &Init) -> Self {
        let mut bbr = Self {
            params,
            mss_bytes: init.mss_bytes,
            initial_cwnd: init.initial_cwnd_pkts,
            rng: Xoshiro256PlusPlus::seed_from_u64(init.seed),
            max_bw: MaxFilter::new(params.bw_window_rounds),
            min_rtt: MinRtt::new(params.min_rtt_window_ns),
            bdp: Bdp::default(),
            model_bdp: Bdp::default(),
            lt_bw: LtBw::default(),
            lost_pkts: 0,
            full_pipe: FullPipe::default(),
            ack_aggregation: AckAggregation::default(),
            mode: Mode::Startup,
            recovery: Recovery::default(),
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            pacing_rate_bps: 0.0,
            has_seen_rtt: false,
            probe_rtt_limited_until: 0,
            idle_restart: false,
        };
        bbr.pacing_rate_bps = bbr.startup_rate_bps(NOMINAL_RTT_NS);
        bbr
    }

    fn mss_bits(&self) -> f64 {
        f64::from(self.mss_bytes) * 8.0
    }

    /// STARTUP's rate for the initial window over `rtt_ns` (Linux
    /// `bbr_init_pacing_rate_from_rtt`).
    fn startup_rate_bps(&self, rtt_ns: u64) -> f64 {
        let bw_bps = self.cwnd * self.mss_bits() * NS_PER_SEC as f64 / rtt_ns as f64;
        HIGH_GAIN * bw_bps * (1.0 - PACING_MARGIN)
    }

    /// Work the BDPs out again: an estimate changed.
    fn refresh_bdp(&mut self) {
        let (min_rtt_ns, mss_bits) = (self.min_rtt.get(), self.mss_bits());
        self.bdp.refresh(self.max_bw.get(), min_rtt_ns, mss_bits);
        match self.lt_bw.bw_bps() {
            Some(lt_bw_bps) => self.model_bdp.refresh(lt_bw_bps, min_rtt_ns, mss_bits),
            None => self.model_bdp = self.bdp,
        }
    }

    /// The in-flight target for `gain` from the max filter's bandwidth (Linux `bbr_inflight`
    /// with `bbr_max_bw`, as the gain cycle and DRAIN use it).
    fn inflight_pkts(&self, gain: f64) -> f64 {
        self.quantization_budget(self.bdp.pkts(gain, self.initial_cwnd))
    }

    /// `pkts` plus three send quanta, rounded up to even (fewer delayed-ACK stalls), plus the
    /// probing phase's extra (Linux `bbr_quantization_budget`).
    fn quantization_budget(&self, pkts: f64) -> f64 {
        let with_quanta = pkts + 3.0 * SEND_QUANTUM_PKTS;
        let even = 2.0 * (with_quanta / 2.0).ceil();
        if self.mode.is_probing_up() {
            even + PROBE_EXTRA_PKTS
        } else {
            even
        }
    }

    fn is_app_limited(&self, rate: &RateSample, path: &Path) -> bool {
        rate.is_app_limited || path.delivered < self.probe_rtt_limited_until
    }

    /// Feed the bandwidth filter. A sample taken while the sender was short of data only
    /// says the path carries at least that much, so it may raise the estimate but never
    /// lower it (Linux `bbr_update_bw`).
    fn update_bw(&mut self, ack: &Ack, path: &Path) {
        let Some(rate) = ack.rate.filter(|r| r.interval_ns > 0) else {
            return;
        };
        let is_app_limited = self.is_app_limited(&rate, path);
        if self.params.long_term_bw && (ack.lost > 0 || !self.lt_bw.is_idle()) {
            self.update_lt_bw(&LtSample {
                now_ns: ack.now_ns,
                delivered_pkts: path.delivered,
                lost_pkts: self.lost_pkts,
                losses: ack.lost > 0,
                round_start: ack.round_start,
                is_app_limited,
                in_probe_bw: matches!(self.mode, Mode::ProbeBw(_)),
            });
        }
        let bw_bps = rate.bps(self.mss_bytes);
        let counts = !is_app_limited || bw_bps >= self.max_bw.get();
        if counts && self.max_bw.update(path.round, bw_bps) {
            self.refresh_bdp();
        }
    }

    /// Linux `bbr_lt_bw_sampling`; at the end of the policed rounds, gain cycling starts
    /// again from a random phase (Linux `bbr_reset_probe_bw_mode`).
    fn update_lt_bw(&mut self, sample: &LtSample) {
        match self.lt_bw.on_sample(sample, self.mss_bytes) {
            LtChange::None => {}
            LtChange::Policed => self.refresh_bdp(),
            LtChange::Released => {
                self.refresh_bdp();
                self.enter_probe_bw(sample.now_ns);
            }
        }
    }

    /// Linux `bbr_update_ack_aggregation`: on ACKs with a rate sample.
    fn update_ack_aggregation(&mut self, ack: &Ack) {
        if self.params.extra_acked_gain == 0.0 || ack.acked == 0 {
            return;
        }
        if ack.rate.is_some_and(|r| r.interval_ns > 0) {
            let (acked, bw) = (u64::from(ack.acked), self.model_bdp.bw_pkts_per_ns);
            let aggregation = &mut self.ack_aggregation;
            aggregation.on_ack(ack.now_ns, acked, ack.round_start, bw, self.cwnd);
        }
    }

    /// While policed the pacing gain is 1, whose phases last a min_rtt (Linux
    /// `bbr_is_next_cycle_phase` reads the gain `bbr_lt_bw_interval_done` set).
    fn update_cycle_phase(&mut self, ack: &Ack) {
        let (Mode::ProbeBw(cycle), Some(min_rtt_ns)) = (&self.mode, self.min_rtt.get()) else {
            return;
        };
        let done = if self.lt_bw.bw_bps().is_some() {
            cycle.full_length(ack.now_ns, min_rtt_ns)
        } else {
            cycle.phase_done(ack, min_rtt_ns, |gain| self.inflight_pkts(gain))
        };
        if done {
            let mut next = *cycle;
            next.advance(ack.now_ns);
            self.mode = Mode::ProbeBw(next);
        }
    }

    fn check_full_pipe(&mut self, ack: &Ack, path: &Path) {
        let measured_round = ack.rate.is_some_and(|r| !self.is_app_limited(&r, path));
        if ack.round_start && measured_round {
            self.full_pipe.on_round(self.max_bw.get());
        }
    }

    /// STARTUP → DRAIN once the pipe is full; DRAIN → PROBE_BW once in-flight is down to the
    /// BDP, possibly on the same ACK (Linux `bbr_check_drain`).
    fn check_drain(&mut self, ack: &Ack) {
        if matches!(self.mode, Mode::Startup) && self.full_pipe.reached() {
            self.mode = Mode::Drain;
            self.ssthresh = self.inflight_pkts(1.0);
        }
        if matches!(self.mode, Mode::Drain) && f64::from(ack.in_flight) <= self.inflight_pkts(1.0) {
            self.enter_probe_bw(ack.now_ns);
        }
    }

    fn enter_probe_bw(&mut self, now_ns: u64) {
        self.mode = Mode::ProbeBw(GainCycle::start(now_ns, &mut self.rng));
    }

    /// Leaving PROBE_RTT: back to where the pipe was (Linux `bbr_reset_mode`).
    fn leave_probe_rtt(&mut self, now_ns: u64) {
        self.min_rtt.restamp(now_ns);
        self.cwnd = self.cwnd.max(self.recovery.prior_cwnd());
        if self.full_pipe.reached() {
            self.enter_probe_bw(now_ns);
        } else {
            self.mode = Mode::Startup;
        }
    }

    /// Refresh min_rtt; enter PROBE_RTT when it went 10 s unconfirmed, and leave it after
    /// 200 ms and a round at 4 packets (Linux `bbr_update_min_rtt`).
    fn update_min_rtt(&mut self, ack: &Ack, path: &Path) {
        let expired = self.min_rtt.is_expired(ack.now_ns);
        if let Some(rtt_ns) = ack.rtt_ns {
            if self.min_rtt.update(ack.now_ns, rtt_ns) {
                self.refresh_bdp();
            }
        }
        let in_probe_rtt = matches!(self.mode, Mode::ProbeRtt(_));
        if expired && !self.idle_restart && !in_probe_rtt {
            // Linux switches mode before saving, so cwnd joins the saved one by max.
            self.mode = Mode::ProbeRtt(ProbeRtt::default());
            self.recovery.save_cwnd(self.cwnd, true);
        }
        if let Mode::ProbeRtt(probe) = &mut self.mode {
            self.probe_rtt_limited_until = path.delivered + u64::from(ack.in_flight) + 1;
            if probe.on_ack(ack, self.params.probe_rtt_duration_ns) {
                self.leave_probe_rtt(ack.now_ns);
            }
        }
    }

    /// The mode's pacing gain, 1 in PROBE_BW while policed (Linux `bbr_update_gains`).
    fn pacing_gain(&self) -> f64 {
        match self.mode {
            Mode::ProbeBw(_) if self.lt_bw.bw_bps().is_some() => 1.0,
            mode => mode.pacing_gain(),
        }
    }

    /// Linux `bbr_set_pacing_rate`: until the pipe is full the rate only rises, so a sample
    /// from a slow first round cannot stall STARTUP.
    fn set_pacing_rate(&mut self, gain: f64, path: &Path) {
        if !self.has_seen_rtt && path.srtt_ns > 0 {
            self.has_seen_rtt = true;
            self.pacing_rate_bps = self.startup_rate_bps(path.srtt_ns);
        }
        let rate_bps = gain * self.model_bdp.bw_bps * (1.0 - PACING_MARGIN);
        if self.full_pipe.reached() || rate_bps > self.pacing_rate_bps {
            self.pacing_rate_bps = rate_bps;
        }
    }

    /// Linux `bbr_set_cwnd`: recovery first, then grow by the packets acknowledged toward
    /// `cwnd_gain · BDP` (never shrinking before the pipe is full), at least 4 packets, and
    /// exactly 4 in PROBE_RTT.
    fn set_cwnd(&mut self, ack: &Ack, path: &Path) {
        self.cwnd = match self.recovery.on_ack(ack, self.cwnd) {
            RecoveryCwnd::Conserving(cwnd) => cwnd,
            RecoveryCwnd::Adjusted(cwnd) => self.grow_toward_target(cwnd, ack.acked, path),
        };
        if matches!(self.mode, Mode::ProbeRtt(_)) {
            self.cwnd = self.cwnd.min(MIN_CWND_PKTS);
        }
    }

    /// cwnd's target: `cwnd_gain · BDP`, once the pipe is full with room for the ACK
    /// aggregation measured, then the send quanta (Linux `bbr_set_cwnd`).
    fn cwnd_target_pkts(&self) -> f64 {
        let bdp = &self.model_bdp;
        let bdp_pkts = bdp.pkts(
            self.mode.cwnd_gain(self.params.cwnd_gain),
            self.initial_cwnd,
        );
        let gain = self.params.extra_acked_gain;
        let aggregation_pkts = if self.full_pipe.reached() && gain > 0.0 {
            let bw = bdp.bw_pkts_per_ns;
            self.ack_aggregation.cwnd_pkts(gain, bw)
        } else {
            0.0
        };
        self.quantization_budget(bdp_pkts + aggregation_pkts)
    }

    fn grow_toward_target(&self, cwnd: f64, acked: u32, path: &Path) -> f64 {
        let acked = f64::from(acked);
        let target = self.cwnd_target_pkts();
        let cwnd = if self.full_pipe.reached() {
            (cwnd + acked).min(target)
        } else if cwnd < target || (path.delivered as f64) < self.initial_cwnd {
            cwnd + acked
        } else {
            cwnd
        };
        cwnd.max(MIN_CWND_PKTS)
    }
}

impl CongestionControl for Bbr {
    /// Linux `bbr_main`, in its order: the model, then the mode, then the outputs.
    fn on_ack(&mut self, ack: &Ack, path: &Path) {
        self.lost_pkts += u64::from(ack.lost);
        self.update_bw(ack, path);
        self.update_ack_aggregation(ack);
        self.update_cycle_phase(ack);
        self.check_full_pipe(ack, path);
        self.check_drain(ack);
        self.update_min_rtt(ack, path);
        self.set_pacing_rate(self.pacing_gain(), path);
        if ack.acked > 0 {
            self.set_cwnd(ack, path);
            self.idle_restart = false;
        }
    }

    fn on_congestion(&mut self, _ev: &CongestionEvent, _path: &Path) {
        // v1 does not back off on loss; it remembers cwnd for the end of recovery.
        let in_probe_rtt = matches!(self.mode, Mode::ProbeRtt(_));
        self.recovery.save_cwnd(self.cwnd, in_probe_rtt);
    }

    fn on_timeout(&mut self, now_ns: u64, path: &Path) {
        // Linux `tcp_enter_loss` with `bbr_ssthresh` and `bbr_set_state(TCP_CA_Loss)`, which
        // takes the timeout for a lossy end of a round.
        let in_probe_rtt = matches!(self.mode, Mode::ProbeRtt(_));
        self.recovery.save_cwnd(self.cwnd, in_probe_rtt);
        self.recovery.on_timeout();
        self.full_pipe.forget_plateau();
        self.cwnd = 1.0;
        if self.params.long_term_bw {
            self.update_lt_bw(&LtSample {
                now_ns,
                delivered_pkts: path.delivered,
                lost_pkts: self.lost_pkts,
                losses: true,
                round_start: true,
                is_app_limited: false,
                in_probe_bw: matches!(self.mode, Mode::ProbeBw(_)),
            });
        }
    }

    fn on_idle_restart(&mut self, now_ns: u64, _idle_ns: u64, path: &Path) {
        // Linux `bbr_cwnd_event(CA_EVENT_TX_START)`: no queue built while idle, so pace at
        // the estimate rather than probe above it.
        self.idle_restart = true;
        match self.mode {
            Mode::ProbeBw(_) => self.set_pacing_rate(1.0, path),
            Mode::ProbeRtt(probe) if probe.held_long_enough(now_ns) => self.leave_probe_rtt(now_ns),
            _ => {}
        }
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.pacing_rate_bps)
    }

    fn owns_recovery(&self) -> bool {
        true
    }

    fn state_names(&self) -> &'static [&'static str] {
        &["cc_state", "cc_bw_bps", "cc_min_rtt_ms", "cc_pacing_gain"]
    }

    /// The mode as `Mode::code`, the model's bandwidth, min_rtt and the pacing gain.
    fn state_values(&self, out: &mut [f64]) {
        out.copy_from_slice(&[
            self.mode.code(),
            self.model_bdp.bw_bps,
            self.min_rtt
                .get()
                .map_or(f64::NAN, |ns| ns as f64 / NS_PER_MS as f64),
            self.pacing_gain(),
        ]);
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "bbr",
    source: "Cardwell et al., ACM Queue 2016 (BBR v1); Linux net/ipv4/tcp_bbr.c",
    defaults: default_params::<BbrParams>,
    ecn: &[EcnMode::Off],
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<BbrParams>(params)?.checked()?;
        Ok(Box::new(Bbr::new(params, init)))
    },
};

#[cfg(test)]
mod tests;
