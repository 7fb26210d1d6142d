//! BBRv3 as draft-ietf-ccwg-bbr specifies it (sections cited per rule; docs/bbr3.md lists
//! where it differs from Google's published code and from this simulator's BBR v1).
//!
//! The model is the bandwidth (`max_bw`, a max over the last two ProbeBW cycles, bounded by the
//! short-term `bw_lo`) and min_rtt; the volume bounds are the long-term `inflight_hi`, set where
//! a probe lost more than 2 % or saw more than half its packets CE-marked, and the short-term
//! `inflight_lo`, cut by β = 0.7 per lossy round while not probing (`congestion.rs`). The
//! states (`state.rs`) are STARTUP and DRAIN (`startup.rs`), the ProbeBW cycle DOWN → CRUISE →
//! REFILL → UP (`probe_bw.rs`, with `probe_up.rs` raising inflight_hi) and ProbeRTT
//! (`probe_rtt.rs`, `min_rtt.rs`). Rounds are packet-timed and restart where the draft calls
//! `StartRound()`.
//!
//! Two inputs the draft reads per packet are read per ACK here, as the controller sees no
//! packets: `RS.tx_in_flight` is the in-flight count when the ACK arrived, and `RS.lost` the
//! packets marked lost since the current round began (docs/bbr3.md).

mod congestion;
mod full_bw;
mod min_rtt;
mod params;
mod probe_bw;
mod probe_rtt;
mod probe_up;
mod startup;
mod state;

use rand::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

use self::congestion::Congestion;
use self::full_bw::FullBw;
use self::min_rtt::MinRtt;
pub use self::params::Bbr3Params;
use self::probe_bw::AckPhase;
use self::probe_up::ProbeUpGrowth;
use self::state::State;
use super::ack_aggregation::AckAggregation;
use super::common::{default_params, parse_params};
use super::max_filter::MaxFilter;
use super::round_from_now::RoundFromNow;
use super::{Ack, CongestionControl, CongestionEvent, Init, Path, Signal};
use super::{Algorithm, Params};
use crate::tcp::ecn::EcnMode;
use crate::time::{NS_PER_MS, NS_PER_SEC};

/// The largest send quantum (§5.6.3: 64 KB).
const MAX_SEND_QUANTUM_BYTES: f64 = 65536.0;
/// The smallest send quantum, packets (§5.6.3: 2 SMSS).
const MIN_SEND_QUANTUM_PKTS: f64 = 2.0;
/// ProbeBW_UP's extra room (§5.6.4.2 `QuantizationBudget`: 2 SMSS).
const PROBE_UP_EXTRA_PKTS: f64 = 2.0;

/// What one ACK's rate sample said, in the units the model uses.
#[derive(Debug, Clone, Copy, Default)]
struct Sample {
    rate_bps: f64,
    delivered_pkts: u32,
    is_app_limited: bool,
}

#[derive(Debug, Clone)]
pub struct Bbr3 {
    params: Bbr3Params,
    mss_bytes: u32,
    initial_cwnd: f64,
    rng: Xoshiro256PlusPlus,
    state: State,
    /// `BBR.max_bw`, keyed by `cycle_count`.
    max_bw: MaxFilter,
    cycle_count: u64,
    /// `BBR.bw`: max_bw bounded by bw_lo.
    bw_bps: f64,
    min_rtt: MinRtt,
    full_bw: FullBw,
    congestion: Congestion,
    ack_aggregation: AckAggregation,
    round: RoundFromNow,
    round_count: u64,
    round_start: bool,
    /// `BBR.inflight_longterm`, packets; infinite until a probe finds a limit.
    inflight_hi: f64,
    probe_up: ProbeUpGrowth,
    ack_phase: AckPhase,
    is_bw_probe_sample: bool,
    prev_probe_too_high: bool,
    prev_probe_precautionary: bool,
    rounds_since_probe_up: u64,
    bw_probe_wait_ns: u64,
    cycle_stamp_ns: u64,
    drain_start_round: u64,
    /// Rounds in a row STARTUP saw more than `ecn_thresh` of its packets marked.
    startup_ecn_rounds: u32,
    /// When ProbeRTT may end (`probe_rtt_done_stamp`), and whether its round has passed.
    probe_rtt_done_ns: Option<u64>,
    probe_rtt_round_done: bool,
    /// Samples count as application-limited until this many packets are delivered
    /// (§5.3.4.3 `MarkConnectionAppLimited` in ProbeRTT).
    app_limited_until: u64,
    /// Loss recovery (fast recovery or after a timeout) is under way, since this round.
    recovery_since_round: Option<u64>,
    prior_cwnd: f64,
    idle_restart: bool,
    cwnd: f64,
    pacing_rate_bps: f64,
    has_seen_rtt: bool,
}

impl Bbr3 {
    /// §5.2.1 `OnInit`.
    pub fn new(params: Bbr3Params, init: &Init) -> Self {
        let mut bbr = Self {
            params,
            mss_bytes: init.mss_bytes,
            initial_cwnd: init.initial_cwnd_pkts,
            rng: Xoshiro256PlusPlus::seed_from_u64(init.seed),
            state: State::Startup,
            max_bw: MaxFilter::new(params.max_bw_filter_cycles - 1),
            cycle_count: 0,
            bw_bps: 0.0,
            min_rtt: MinRtt::new(params.probe_rtt_interval_ns, params.min_rtt_window_ns),
            full_bw: FullBw::default(),
            congestion: Congestion::default(),
            ack_aggregation: AckAggregation::default(),
            round: RoundFromNow::start(0),
            round_count: 0,
            round_start: false,
            inflight_hi: f64::INFINITY,
            probe_up: ProbeUpGrowth::default(),
            ack_phase: AckPhase::Init,
            is_bw_probe_sample: false,
            prev_probe_too_high: false,
            prev_probe_precautionary: false,
            rounds_since_probe_up: 0,
            bw_probe_wait_ns: 0,
            cycle_stamp_ns: 0,
            drain_start_round: 0,
            startup_ecn_rounds: 0,
            probe_rtt_done_ns: None,
            probe_rtt_round_done: false,
            app_limited_until: 0,
            recovery_since_round: None,
            prior_cwnd: 0.0,
            idle_restart: false,
            cwnd: init.initial_cwnd_pkts,
            pacing_rate_bps: 0.0,
            has_seen_rtt: false,
        };
        bbr.pacing_rate_bps = bbr.initial_pacing_rate_bps(NS_PER_MS);
        bbr
    }

    fn mss_bits(&self) -> f64 {
        f64::from(self.mss_bytes) * 8.0
    }

    /// §5.6.2 `InitPacingRate`: STARTUP's gain times the initial window over `rtt_ns`.
    fn initial_pacing_rate_bps(&self, rtt_ns: u64) -> f64 {
        let nominal_bps = self.initial_cwnd * self.mss_bits() * NS_PER_SEC as f64 / rtt_ns as f64;
        self.params.startup_pacing_gain * nominal_bps
    }

    /// `gain` times the BDP of `BBR.bw` and min_rtt, packets; the initial window before an
    /// RTT sample (§5.6.4.2 `BDPMultiple`).
    fn bdp_multiple(&self, gain: f64) -> f64 {
        match self.min_rtt.get() {
            Some(rtt_ns) => {
                gain * self.bw_bps * rtt_ns as f64 / NS_PER_SEC as f64 / self.mss_bits()
            }
            None => self.initial_cwnd,
        }
    }

    /// §5.6.4.2 `QuantizationBudget`: room for three send quanta (§5.5.8.1 TCP offload
    /// budget), at least `MinPipeCwnd`, 2 packets more in ProbeBW_UP.
    fn quantization_budget(&self, inflight_cap: f64) -> f64 {
        let quantum_pkts = (self.pacing_rate_bps * 1e-3 / self.mss_bits())
            .min(MAX_SEND_QUANTUM_BYTES / f64::from(self.mss_bytes))
            .max(MIN_SEND_QUANTUM_PKTS);
        let cap = inflight_cap
            .max(3.0 * quantum_pkts)
            .max(self.params.min_pipe_cwnd_pkts);
        if self.state == State::ProbeBwUp {
            cap + PROBE_UP_EXTRA_PKTS
        } else {
            cap
        }
    }

    /// §5.6.4.2 `Inflight(gain)`.
    fn inflight(&self, gain: f64) -> f64 {
        self.quantization_budget(self.bdp_multiple(gain))
    }

    /// §5.3.3.8.3 `TargetInflight`: the BDP, unless congestion cut cwnd.
    fn target_inflight(&self) -> f64 {
        self.bdp_multiple(1.0).min(self.cwnd)
    }

    /// §5.3.3.9 `InflightWithHeadroom`: inflight_hi less 15 %, at least a packet.
    fn inflight_with_headroom(&self) -> f64 {
        if self.inflight_hi.is_infinite() {
            return f64::INFINITY;
        }
        let headroom = (self.params.headroom * self.inflight_hi).max(1.0);
        (self.inflight_hi - headroom).max(self.params.min_pipe_cwnd_pkts)
    }

    fn sample(&self, ack: &Ack, path: &Path) -> Option<Sample> {
        let rate = ack.rate.filter(|r| r.interval_ns > 0)?;
        Some(Sample {
            rate_bps: rate.bps(self.mss_bytes),
            delivered_pkts: rate.delivered,
            is_app_limited: rate.is_app_limited || path.delivered < self.app_limited_until,
        })
    }

    /// §5.5.1 `UpdateRound`, packet-timed.
    fn update_round(&mut self, ack: &Ack) {
        self.round_start = self.round.on_ack(ack);
        if self.round_start {
            self.round_count += 1;
            self.rounds_since_probe_up += 1;
            self.round = RoundFromNow::start(ack.in_flight);
        }
    }

    /// §5.5.1 `StartRound`: the next round ends with the first packet sent from now.
    fn start_round(&mut self, in_flight: u32) {
        self.round = RoundFromNow::start(in_flight);
    }

    /// §5.5.5 `UpdateMaxBw`: application-limited samples count only if they raise it.
    fn update_max_bw(&mut self, sample: Option<Sample>) {
        if let Some(s) = sample.filter(|s| s.rate_bps > 0.0) {
            if s.rate_bps >= self.max_bw.get() || !s.is_app_limited {
                self.max_bw.update(self.cycle_count, s.rate_bps);
            }
        }
    }

    /// ECN is answered where marks were seen and min_rtt is small (docs/bbr3.md).
    fn ecn_applies(&self) -> bool {
        self.congestion.ecn_seen
            && self
                .min_rtt
                .get()
                .is_some_and(|rtt_ns| rtt_ns <= self.params.ecn_max_rtt_ns)
    }

    /// §5.5.10.3 `UpdateCongestionSignals`: the once-per-round response.
    fn update_congestion_signals(&mut self, sample: Option<Sample>) {
        self.update_max_bw(sample);
        if !self.round_start {
            return;
        }
        self.congestion.end_round(self.params.ecn_alpha_gain);
        if !self.state.is_probing_bw() {
            let (max_bw, cwnd, ecn) = (self.max_bw.get(), self.cwnd, self.ecn_applies());
            self.congestion
                .adapt_lower_bounds(&self.params, max_bw, cwnd, ecn);
        }
        self.congestion.clear_loss_in_round();
    }

    /// §5.6.2 `SetPacingRateWithGain`: the rate only rises until the pipe is full.
    fn set_pacing_rate_with_gain(&mut self, gain: f64, path: &Path) {
        if !self.has_seen_rtt && path.srtt_ns > 0 {
            self.has_seen_rtt = true;
            self.pacing_rate_bps = self.initial_pacing_rate_bps(path.srtt_ns);
        }
        let rate_bps = gain * self.bw_bps * (1.0 - self.params.pacing_margin);
        if self.full_bw.reached() || rate_bps > self.pacing_rate_bps {
            self.pacing_rate_bps = rate_bps;
        }
    }

    /// §5.6.4.6 `SetCwnd`, then the ProbeRTT and model bounds (§5.6.4.5, §5.6.4.7).
    fn set_cwnd(&mut self, ack: &Ack, path: &Path) {
        let extra_acked = self.ack_aggregation.cwnd_pkts(1.0, self.bw_pkts_per_ns());
        let gain = self.state.cwnd_gain(&self.params);
        let max_inflight = self.quantization_budget(self.bdp_multiple(gain) + extra_acked);
        let acked = f64::from(ack.acked);
        if self.full_bw.reached() {
            self.cwnd = (self.cwnd + acked).min(max_inflight);
        } else if self.cwnd < max_inflight || (path.delivered as f64) < self.initial_cwnd {
            self.cwnd += acked;
        }
        self.cwnd = self.cwnd.max(self.params.min_pipe_cwnd_pkts);
        if self.state == State::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
        self.cwnd = self.cwnd.min(self.model_cwnd_cap());
    }

    /// §5.6.4.7 `BoundCwndForModel`.
    fn model_cwnd_cap(&self) -> f64 {
        let cap = match self.state {
            State::ProbeBwCruise | State::ProbeRtt => self.inflight_with_headroom(),
            s if s.is_probe_bw() => self.inflight_hi,
            _ => f64::INFINITY,
        };
        cap.min(self.congestion.inflight_lo_pkts)
            .max(self.params.min_pipe_cwnd_pkts)
    }

    fn bw_pkts_per_ns(&self) -> f64 {
        self.bw_bps / self.mss_bits() / NS_PER_SEC as f64
    }

    /// §5.6.4.4 `SaveCwnd`: the last cwnd not cut by recovery or ProbeRTT.
    fn save_cwnd(&mut self) {
        if self.recovery_since_round.is_none() && self.state != State::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// §5.6.4.4 `RestoreCwnd`.
    fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }
}

impl CongestionControl for Bbr3 {
    /// §5.2.3 `UpdateOnACK`, in the draft's order.
    fn on_ack(&mut self, ack: &Ack, path: &Path) {
        let sample = self.sample(ack, path);
        let signal = sample.map(|s| (s.rate_bps, s.delivered_pkts));
        self.update_round(ack);
        self.congestion
            .on_ack(ack.acked, ack.lost, ack.ce_pkts, signal);
        self.update_congestion_signals(sample);
        if ack.acked > 0 && sample.is_some() {
            let bw = self.bw_pkts_per_ns();
            let (acked, round_start) = (u64::from(ack.acked), self.round_start);
            self.ack_aggregation
                .on_ack(ack.now_ns, acked, round_start, bw, self.cwnd);
        }
        self.check_full_bw_reached(sample);
        self.check_startup_done();
        self.check_drain_done(ack);
        self.update_probe_bw_cycle_phase(ack, sample);
        self.min_rtt.update(ack.now_ns, ack.rtt_ns);
        self.check_probe_rtt(ack, path);
        if self.round_start {
            self.congestion.advance_latest(signal);
        }
        self.bw_bps = self.max_bw.get().min(self.congestion.bw_lo_bps);
        self.set_pacing_rate_with_gain(self.state.pacing_gain(&self.params), path);
        if ack.acked > 0 {
            self.set_cwnd(ack, path);
        }
    }

    fn on_congestion(&mut self, ev: &CongestionEvent, _path: &Path) {
        // CE marks are counted per ACK (`Ack::ce_pkts`); only a loss starts recovery
        // (§5.6.4.4 `OnEnterFastRecovery`).
        if ev.signal == Signal::Loss {
            self.save_cwnd();
            self.recovery_since_round.get_or_insert(self.round_count);
        }
    }

    /// §5.6.4.4 `OnEnterRTO`: everything in flight is marked lost, so cwnd becomes 1.
    fn on_timeout(&mut self, _now_ns: u64, _path: &Path) {
        self.save_cwnd();
        self.recovery_since_round.get_or_insert(self.round_count);
        self.cwnd = 1.0;
    }

    fn on_recovery_exit(&mut self, _now_ns: u64, _path: &Path) {
        if self.recovery_since_round.take().is_some() {
            self.restore_cwnd();
        }
    }

    /// §5.4.1 `HandleRestartFromIdle`.
    fn on_idle_restart(&mut self, now_ns: u64, _idle_ns: u64, path: &Path) {
        self.idle_restart = true;
        if self.state.is_probe_bw() {
            self.set_pacing_rate_with_gain(1.0, path);
        } else if self.state == State::ProbeRtt {
            self.check_probe_rtt_done(now_ns, 0); // idle: nothing in flight
        }
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn pacing_rate_bps(&self) -> Option<f64> {
        Some(self.pacing_rate_bps)
    }

    fn owns_recovery(&self) -> bool {
        true
    }

    fn state_names(&self) -> &'static [&'static str] {
        &[
            "cc_state",
            "cc_bw_bps",
            "cc_min_rtt_ms",
            "cc_pacing_gain",
            "cc_inflight_hi_pkts",
            "cc_inflight_lo_pkts",
        ]
    }

    /// The state as `State::code`; `BBR.bw` (max_bw bounded by bw_lo); the bounds NaN while
    /// unset.
    fn state_values(&self, out: &mut [f64]) {
        let bound = |pkts: f64| if pkts.is_finite() { pkts } else { f64::NAN };
        out.copy_from_slice(&[
            self.state.code(),
            self.bw_bps,
            self.min_rtt
                .get()
                .map_or(f64::NAN, |ns| ns as f64 / NS_PER_MS as f64),
            self.state.pacing_gain(&self.params),
            bound(self.inflight_hi),
            bound(self.congestion.inflight_lo_pkts),
        ]);
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "bbr3",
    source: "draft-ietf-ccwg-bbr (BBRv3); ECN response after Google's BBRv3",
    defaults: default_params::<Bbr3Params>,
    // ECN is optional; marks are read per packet (DCTCP's echo under classic ECN, or accurate
    // feedback), as Google's BBRv3 reads them.
    ecn: &[EcnMode::Off, EcnMode::Classic, EcnMode::L4s],
    per_packet_echo: true,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<Bbr3Params>(params)?.checked()?;
        Ok(Box::new(Bbr3::new(params, init)))
    },
};

#[cfg(test)]
mod tests;
