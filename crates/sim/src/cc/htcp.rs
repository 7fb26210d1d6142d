//! H-TCP (Leith & Shorten, PFLDnet 2004; draft-leith-tcp-htcp-06), with the behaviour of
//! Linux `net/ipv4/tcp_htcp.c`.
//!
//! The increase α grows with Δ, the time since the last congestion event: 1 packet per RTT for
//! the first Δ_L = 1 s, then `1 + 10(Δ−Δ_L) + c(Δ−Δ_L)²`. The quadratic coefficient c is 0.25 in
//! the PFLDnet 2004 paper, Linux and FreeBSD, and 0.5 in the IETF drafts (draft-leith-tcp-htcp-06);
//! the default is Linux's and `alpha_quadratic` records the choice. Three refinements
//! are switchable, all on by default as in Linux: RTT scaling of α, adaptive backoff
//! β = RTTmin/RTTmax in [0.5, 0.8], and the bandwidth switch that falls back to β = 0.5 when the
//! throughput moved by more than 20 % between congestion events. α is multiplied by 2(1−β) so
//! the AIMD pair stays as friendly as Reno's (1, 0.5).
//!
//! The arithmetic is in `f64`, not Linux's 7-bit fixed point, so α(2 s) is 11.25 where Linux
//! truncates to 11.

use serde::{Deserialize, Serialize};

use super::check;
use super::common::{default_params, may_grow, parse_params, slow_start, MIN_SSTHRESH_PKTS};
use super::{Ack, CaState, CongestionControl, CongestionEvent, Init, Path};
use super::{Algorithm, Params, LOSS_BASED_ECN};
use crate::time::{secs, NS_PER_MS, NS_PER_SEC};

/// Δ_L, the time after a congestion event spent in low-speed mode (draft: "at least 1 second").
const LOW_SPEED_NS: u64 = NS_PER_SEC;
/// The linear coefficient of α(Δ), packets per RTT per second (paper, drafts, Linux).
const ALPHA_LINEAR: f64 = 10.0;
/// RTT_ref of the RTT scaling, and the clamp of minRTT/RTT_ref (draft §5; Linux clamps its
/// inverse to [0.5, 10]).
const RTT_REF_NS: u64 = 100 * NS_PER_MS;
const RTT_SCALE_MIN: f64 = 0.1;
const RTT_SCALE_MAX: f64 = 2.0;
/// Bounds of the adaptive backoff factor (paper; Linux `BETA_MIN` 64/128, `BETA_MAX` 102/128,
/// its 7-bit rendering of 0.8).
const BETA_MIN: f64 = 0.5;
const BETA_MAX: f64 = 0.8;
/// RTT samples more than this above maxRTT are spikes, not queueing (Linux `measure_rtt`).
const RTT_SPIKE_NS: u64 = 20 * NS_PER_MS;
/// β comes from RTTs only when minRTT exceeds this: below it the queueing delay cannot be
/// told from timer granularity (Linux `htcp_beta_update`).
const MIN_RTT_FOR_BETA_NS: u64 = 10 * NS_PER_MS;
/// maxRTT keeps 95 % of its excess over minRTT at each congestion event, so it forgets an old
/// route slowly (Linux `htcp_param_update`).
const MAX_RTT_MEMORY: f64 = 0.95;
/// The bandwidth switch fires when the throughput left [0.8, 1.2] of its previous value
/// (paper: |ΔB|/B > 0.2; Linux: `4·old ≤ 5·maxB ≤ 6·old`).
const THROUGHPUT_TOLERANCE: f64 = 0.2;
/// Throughput samples within this many minRTTs after a backoff restart the estimate (Linux
/// `htcp_ccount(ca) <= 3`).
const THROUGHPUT_RESET_RTTS: u64 = 4;

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct HtcpParams {
    /// Adaptive backoff β = RTTmin/RTTmax clamped to [0.5, 0.8] (PFLDnet 2004; always on in
    /// Linux). Default true. False: β = 0.5, FreeBSD's default `adaptive_backoff = 0`.
    pub beta_adaptive: bool,
    /// Scale α by minRTT/100 ms clamped to [0.1, 2] (draft §5; Linux `use_rtt_scaling`,
    /// default 1; FreeBSD's default is off).
    pub rtt_scaling: bool,
    /// Back off by 0.5 when the throughput changed by more than 20 % since the previous
    /// congestion event (PFLDnet 2004; Linux `use_bandwidth_switch`, default 1).
    pub bandwidth_switch: bool,
    /// Coefficient of (Δ−Δ_L)² in α: 0.25 (default; PFLDnet 2004, Linux, FreeBSD) or 0.5
    /// (draft-leith-tcp-htcp-00 to -06).
    pub alpha_quadratic: f64,
}

impl Default for HtcpParams {
    fn default() -> Self {
        Self {
            beta_adaptive: true,
            rtt_scaling: true,
            bandwidth_switch: true,
            alpha_quadratic: 0.25,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Htcp {
    params: HtcpParams,
    cwnd: f64,
    ssthresh: f64,
    beta: f64,
    /// Adaptive β is used only after one congestion event at 0.5 since the last bandwidth
    /// switch (Linux `modeswitch`).
    modeswitch: bool,
    /// Start of Δ; set by the first ACK, since construction has no clock.
    last_congestion_ns: Option<u64>,
    rtt: RttRange,
    throughput: Throughput,
}

impl Htcp {
    pub fn new(params: HtcpParams, init: &Init) -> Self {
        Self {
            params,
            cwnd: init.initial_cwnd_pkts,
            ssthresh: f64::INFINITY,
            beta: BETA_MIN,
            modeswitch: false,
            last_congestion_ns: None,
            rtt: RttRange::default(),
            throughput: Throughput::default(),
        }
    }

    /// Δ, the time since the last congestion event.
    fn since_congestion_ns(&self, now_ns: u64) -> u64 {
        now_ns.saturating_sub(self.last_congestion_ns.unwrap_or(now_ns))
    }

    /// The increase in packets per RTT at `now_ns` (Linux `htcp_alpha_update`).
    fn alpha(&self, now_ns: u64) -> f64 {
        2.0 * self.speed_factor(now_ns) * (1.0 - self.beta)
    }

    /// α(Δ) before the backoff correction: 1 in low-speed mode, the quadratic after, scaled by
    /// the RTT if enabled. Linux scales the low-speed 1 as well, but never below 1.
    fn speed_factor(&self, now_ns: u64) -> f64 {
        let d = secs(
            self.since_congestion_ns(now_ns)
                .saturating_sub(LOW_SPEED_NS),
        );
        let factor = 1.0 + ALPHA_LINEAR * d + self.params.alpha_quadratic * d * d;
        if self.params.rtt_scaling && self.rtt.min_ns != u64::MAX {
            let scale = self.rtt.min_ns as f64 / RTT_REF_NS as f64;
            (factor * scale.clamp(RTT_SCALE_MIN, RTT_SCALE_MAX)).max(1.0)
        } else {
            factor
        }
    }

    /// The backoff factor for the congestion event happening now (Linux `htcp_beta_update`).
    fn next_beta(&mut self) -> f64 {
        if self.params.bandwidth_switch && self.throughput.changed_since_last_event() {
            self.modeswitch = false;
            return BETA_MIN;
        }
        // maxRTT is 0 until a sample in Open state (Linux: `&& maxRTT`).
        let from_rtts = self.params.beta_adaptive
            && self.rtt.min_ns > MIN_RTT_FOR_BETA_NS
            && self.rtt.max_ns > 0;
        if self.modeswitch && from_rtts {
            (self.rtt.min_ns as f64 / self.rtt.max_ns as f64).clamp(BETA_MIN, BETA_MAX)
        } else {
            self.modeswitch = true;
            BETA_MIN
        }
    }

    /// ssthresh for a congestion event at `now_ns` (Linux `htcp_recalc_ssthresh`); Δ restarts.
    fn back_off(&mut self, now_ns: u64) -> f64 {
        self.beta = self.next_beta();
        self.rtt.fade_max();
        self.last_congestion_ns = Some(now_ns);
        (self.cwnd * self.beta).max(MIN_SSTHRESH_PKTS)
    }
}

impl CongestionControl for Htcp {
    fn on_ack(&mut self, ack: &Ack, _path: &Path) {
        self.last_congestion_ns.get_or_insert(ack.now_ns);
        if let Some(rtt_ns) = ack.rtt_ns {
            self.rtt.on_sample(rtt_ns, ack.ca_state);
        }
        if self.params.bandwidth_switch {
            let just_backed_off = self.since_congestion_ns(ack.now_ns)
                < THROUGHPUT_RESET_RTTS.saturating_mul(self.rtt.min_ns);
            let sample_after = self.cwnd - self.alpha(ack.now_ns).max(1.0);
            self.throughput
                .on_ack(ack, sample_after, self.rtt.min_ns, just_backed_off);
        }
        if !may_grow(ack) {
            return;
        }
        let mut acked = f64::from(ack.acked);
        if self.cwnd < self.ssthresh {
            (self.cwnd, acked) = slow_start(self.cwnd, self.ssthresh, acked);
        }
        // Linux packet-counts: +1 each time α·(packets acked) reaches cwnd.
        self.cwnd += self.alpha(ack.now_ns) * acked / self.cwnd;
    }

    fn on_congestion(&mut self, ev: &CongestionEvent, _path: &Path) {
        self.ssthresh = self.back_off(ev.now_ns);
        self.cwnd = self.ssthresh;
    }

    fn on_timeout(&mut self, now_ns: u64, _path: &Path) {
        self.ssthresh = self.back_off(now_ns);
        self.cwnd = 1.0;
    }

    fn on_recovery_exit(&mut self, now_ns: u64, _path: &Path) {
        // Linux `htcp_state(TCP_CA_Open)`: Δ counts from the end of the reduction as well.
        self.last_congestion_ns = Some(now_ns);
    }

    fn cwnd(&self) -> f64 {
        self.cwnd
    }

    fn ssthresh(&self) -> f64 {
        self.ssthresh
    }
}

/// minRTT (smallest sample ever) and maxRTT, the queue-full RTT (Linux `measure_rtt`).
#[derive(Debug, Clone, Copy)]
struct RttRange {
    min_ns: u64,
    max_ns: u64,
}

impl Default for RttRange {
    fn default() -> Self {
        Self {
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl RttRange {
    /// maxRTT moves only in Open state (no reordering or recovery in the samples) and only by
    /// samples within 20 ms of it, so a single spike cannot set it.
    fn on_sample(&mut self, rtt_ns: u64, state: CaState) {
        self.min_ns = self.min_ns.min(rtt_ns);
        if state == CaState::Open {
            self.max_ns = self.max_ns.max(self.min_ns);
            if rtt_ns > self.max_ns && rtt_ns <= self.max_ns + RTT_SPIKE_NS {
                self.max_ns = rtt_ns;
            }
        }
    }

    fn fade_max(&mut self) {
        if self.min_ns != u64::MAX && self.max_ns > self.min_ns {
            let excess = (self.max_ns - self.min_ns) as f64 * MAX_RTT_MEMORY;
            self.max_ns = self.min_ns + excess.round() as u64;
        }
    }
}

/// Achieved throughput in packets/s, sampled about once per RTT while the window is open
/// (Linux `measure_achieved_throughput`): B is smoothed as (3B + sample)/4, and maxB is the
/// largest B since the last backoff.
#[derive(Debug, Clone, Default)]
struct Throughput {
    packets: f64,
    since_ns: Option<u64>,
    smoothed: f64,
    max: f64,
    max_at_last_event: f64,
}

impl Throughput {
    /// `sample_after`: packets to count before a sample (cwnd − α); `just_backed_off`: the
    /// sample restarts the estimate rather than joining it.
    fn on_ack(&mut self, ack: &Ack, sample_after: f64, min_rtt_ns: u64, just_backed_off: bool) {
        if !matches!(ack.ca_state, CaState::Open | CaState::Disorder) {
            self.packets = 0.0;
            self.since_ns = Some(ack.now_ns);
            return;
        }
        let since_ns = *self.since_ns.get_or_insert(ack.now_ns);
        self.packets += f64::from(ack.acked);
        let elapsed_ns = ack.now_ns - since_ns;
        if self.packets < sample_after || elapsed_ns < min_rtt_ns || elapsed_ns == 0 {
            return;
        }
        let sample = self.packets / secs(elapsed_ns);
        if just_backed_off {
            (self.smoothed, self.max) = (sample, sample);
        } else {
            self.smoothed = (3.0 * self.smoothed + sample) / 4.0;
            self.max = self.max.max(self.smoothed);
        }
        self.packets = 0.0;
        self.since_ns = Some(ack.now_ns);
    }

    /// Whether maxB left [0.8, 1.2] of its value at the previous event; remembers it for the
    /// next. Before any sample both are 0 and nothing changed, as in Linux.
    fn changed_since_last_event(&mut self) -> bool {
        let (now, before) = (self.max, self.max_at_last_event);
        self.max_at_last_event = now;
        let band = (1.0 - THROUGHPUT_TOLERANCE) * before..=(1.0 + THROUGHPUT_TOLERANCE) * before;
        !band.contains(&now)
    }
}

pub const ALGORITHM: Algorithm = Algorithm {
    name: "htcp",
    source: "Leith & Shorten, PFLDnet 2004; draft-leith-tcp-htcp-06; Linux net/ipv4/tcp_htcp.c",
    defaults: default_params::<HtcpParams>,
    ecn: LOSS_BASED_ECN,
    per_packet_echo: false,
    build: |params: &Params, init: &Init| {
        let params = parse_params::<HtcpParams>(params)?;
        check::non_negative("alpha_quadratic", params.alpha_quadratic)?;
        Ok(Box::new(Htcp::new(params, init)))
    },
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::testing::{self, path};

    const MS: u64 = NS_PER_MS;
    const S: u64 = NS_PER_SEC;

    /// One packet acknowledged at `now_ns` with an RTT sample of `rtt_ms`.
    fn ack(now_ns: u64, rtt_ms: u64) -> Ack {
        Ack {
            now_ns,
            rtt_ns: Some(rtt_ms * MS),
            ..testing::ack(1)
        }
    }

    fn htcp(params: HtcpParams) -> Htcp {
        Htcp::new(params, &testing::init(10.0))
    }

    /// Linux's behaviour less the RTT refinements, so α is the bare α(Δ).
    fn plain() -> HtcpParams {
        HtcpParams {
            rtt_scaling: false,
            bandwidth_switch: false,
            ..HtcpParams::default()
        }
    }

    fn loss(now_ns: u64) -> CongestionEvent {
        CongestionEvent {
            now_ns,
            ..testing::loss()
        }
    }

    /// `pkts_per_s` single-packet ACKs with a constant RTT from `from_ns` for `duration_ns`,
    /// the window frozen (not cwnd-limited) so only the estimators move. Returns the end time.
    fn acks_at(h: &mut Htcp, from_ns: u64, pkts_per_s: u64, duration_ns: u64, rtt_ms: u64) -> u64 {
        let gap_ns = S / pkts_per_s;
        let end_ns = from_ns + duration_ns;
        for now_ns in (from_ns..end_ns).step_by(gap_ns as usize) {
            h.on_ack(
                &Ack {
                    cwnd_limited: false,
                    ..ack(now_ns, rtt_ms)
                },
                &path(),
            );
        }
        end_ns
    }

    #[test]
    fn alpha_is_one_for_a_second_then_grows_quadratically_as_in_linux() {
        // Linux tcp_htcp.c: 1 + 10(Δ−1) + 0.25(Δ−1)², β = 0.5 so 2(1−β) = 1.
        let mut h = htcp(plain());
        h.on_ack(&ack(0, 100), &path());
        assert_eq!(h.alpha(S / 2), 1.0);
        assert_eq!(h.alpha(S), 1.0);
        assert_eq!(h.alpha(2 * S), 11.25);
        assert_eq!(h.alpha(3 * S), 22.0); // the table of §3.1: 22 (Linux)
        assert_eq!(h.alpha(5 * S), 45.0);
        assert_eq!(h.alpha(10 * S), 111.25); // 111 (Linux)
    }

    #[test]
    fn the_draft_coefficient_gives_larger_alphas() {
        // draft-leith-tcp-htcp-06: 1 + 10(Δ−1) + 0.5(Δ−1)²; §3.1 lists 23 at Δ = 3 s.
        let mut h = htcp(HtcpParams {
            alpha_quadratic: 0.5,
            ..plain()
        });
        h.on_ack(&ack(0, 100), &path());
        assert_eq!(h.alpha(2 * S), 11.5);
        assert_eq!(h.alpha(3 * S), 23.0);
        assert_eq!(h.alpha(5 * S), 49.0);
    }

    #[test]
    fn delta_counts_from_the_first_ack_and_restarts_at_each_event_and_recovery_exit() {
        let mut h = htcp(plain());
        h.on_ack(&ack(7 * S, 100), &path()); // a flow that starts late is not 7 s into Δ
        assert_eq!(h.alpha(8 * S), 1.0);
        h.on_congestion(&loss(20 * S), &path());
        assert_eq!(h.alpha(21 * S), 1.0);
        assert_eq!(h.alpha(22 * S), 11.25);
        h.on_recovery_exit(21 * S, &path());
        assert_eq!(h.alpha(22 * S), 1.0);
    }

    #[test]
    fn rtt_scaling_multiplies_alpha_by_min_rtt_over_100_ms_within_0_1_to_2() {
        let scaled = |rtt_ms, delta_ns| {
            let mut h = htcp(HtcpParams {
                rtt_scaling: true,
                ..plain()
            });
            h.on_ack(&ack(0, rtt_ms), &path());
            h.alpha(delta_ns)
        };
        assert_eq!(scaled(40, 5 * S), 45.0 * 0.4);
        assert_eq!(scaled(40, S), 1.0, "never below Reno's 1");
        assert_eq!(scaled(200, S), 2.0, "Linux scales low-speed mode up too");
        assert_eq!(scaled(400, 2 * S), 11.25 * 2.0, "clamped at 2");
        assert_eq!(scaled(5, 5 * S), 45.0 * 0.1, "clamped at 0.1");
    }

    #[test]
    fn adaptive_backoff_is_min_rtt_over_max_rtt_from_the_second_event() {
        let mut h = htcp(plain());
        // The queue builds: RTT 100 → 150 ms in steps under the 20 ms spike filter.
        for (i, rtt_ms) in [100, 115, 130, 145, 150].into_iter().enumerate() {
            h.on_ack(&ack(i as u64 * MS, rtt_ms), &path());
        }
        h.cwnd = 90.0;
        h.on_congestion(&loss(S), &path());
        assert_eq!(
            (h.beta, h.cwnd()),
            (0.5, 45.0),
            "first event: modeswitch off, β = 0.5"
        );
        assert_eq!(h.rtt.max_ns, 147_500_000, "maxRTT keeps 95 % of its excess");

        h.on_ack(&ack(2 * S, 150), &path());
        h.cwnd = 90.0;
        h.on_congestion(&loss(3 * S), &path());
        assert_eq!(h.beta, 100.0 / 150.0);
        assert!((h.cwnd() - 60.0).abs() < 1e-9);
        // α carries 2(1−β) so the pair stays Reno-friendly: 2 · 45 · (1/3) = 30 at Δ = 5 s.
        assert!((h.alpha(8 * S) - 30.0).abs() < 1e-9);
    }

    #[test]
    fn beta_is_clamped_to_0_5_and_0_8() {
        let beta_after = |max_rtt_ms| {
            let mut h = htcp(plain());
            h.modeswitch = true;
            h.on_ack(&ack(0, 100), &path());
            h.rtt.max_ns = max_rtt_ms * MS;
            h.on_congestion(&loss(S), &path());
            h.beta
        };
        assert_eq!(beta_after(110), 0.8);
        assert_eq!(beta_after(125), 0.8);
        assert_eq!(beta_after(160), 0.625);
        assert_eq!(beta_after(400), 0.5);
    }

    #[test]
    fn without_an_rtt_sample_in_open_state_beta_stays_one_half() {
        let mut h = htcp(plain());
        h.modeswitch = true;
        h.on_ack(
            &Ack {
                ca_state: CaState::Disorder,
                ..ack(0, 100)
            },
            &path(),
        );
        h.on_congestion(&loss(S), &path());
        assert_eq!(h.beta, 0.5);
    }

    #[test]
    fn rtt_spikes_and_samples_outside_open_leave_max_rtt_alone() {
        let mut h = htcp(plain());
        h.on_ack(&ack(0, 100), &path());
        h.on_ack(&ack(1, 130), &path()); // 30 ms above maxRTT: a spike
        assert_eq!(h.rtt.max_ns, 100 * MS);
        h.on_ack(
            &Ack {
                ca_state: CaState::Recovery,
                ..ack(2, 110)
            },
            &path(),
        );
        assert_eq!(h.rtt.max_ns, 100 * MS);
        h.on_ack(&ack(3, 120), &path());
        assert_eq!(h.rtt.max_ns, 120 * MS);
    }

    #[test]
    fn without_adaptive_backoff_beta_is_always_one_half() {
        let mut h = htcp(HtcpParams {
            beta_adaptive: false,
            ..plain()
        });
        h.on_ack(&ack(0, 100), &path());
        h.on_ack(&ack(1, 110), &path());
        for event in 1..=3 {
            h.cwnd = 80.0;
            h.on_congestion(&loss(event * S), &path());
            assert_eq!((h.beta, h.cwnd()), (0.5, 40.0));
        }
    }

    #[test]
    fn a_throughput_change_over_20_percent_switches_back_to_one_half() {
        // minRTT 100 ms, maxRTT 125 ms: adaptive β would be 0.8. Every event is 2 s after the
        // previous one at 1000 packets/s, except the last, after 2 s at 1500 packets/s.
        let betas = |bandwidth_switch| {
            let mut h = htcp(HtcpParams {
                bandwidth_switch,
                ..plain()
            });
            h.on_ack(&ack(0, 100), &path());
            h.on_ack(&ack(1, 120), &path());
            h.on_ack(&ack(2, 125), &path());
            let mut betas = vec![];
            let mut now_ns = 3;
            for rate in [1000, 1000, 1000, 1500] {
                now_ns = acks_at(&mut h, now_ns, rate, 2 * S, 110);
                h.on_congestion(&loss(now_ns), &path());
                betas.push(h.beta);
            }
            betas
        };
        // With the switch: the first event sees a change from nothing (0.5, modeswitch off),
        // the second re-arms the modeswitch (0.5), the third adapts, the fourth sees +50 %.
        assert_eq!(betas(true), [0.5, 0.5, 0.8, 0.5]);
        assert_eq!(betas(false), [0.5, 0.8, 0.8, 0.8]);
    }

    #[test]
    fn the_throughput_estimate_is_smoothed_and_restarts_after_a_backoff() {
        let mut h = htcp(HtcpParams {
            bandwidth_switch: true,
            ..plain()
        });
        h.on_ack(&ack(0, 100), &path());
        // 1000 packets/s, cwnd 10: one sample per minRTT of 100 packets.
        let t = acks_at(&mut h, 1, 1000, 2 * S, 100);
        assert!(
            (h.throughput.max - 1000.0).abs() < 20.0,
            "{}",
            h.throughput.max
        );
        h.on_congestion(&loss(t), &path());
        h.on_ack(
            &Ack {
                ca_state: CaState::Recovery,
                ..ack(t, 100)
            },
            &path(),
        ); // stops counting
           // Within 4 minRTTs of the backoff a sample replaces the estimate instead of joining it.
        acks_at(&mut h, t + 2 * MS, 500, 250 * MS, 100);
        assert!((h.throughput.smoothed - 500.0).abs() < 1e-6);
        assert_eq!(h.throughput.max, h.throughput.smoothed);
    }

    #[test]
    fn slow_start_then_alpha_per_window_of_packets() {
        let mut h = htcp(plain());
        h.on_ack(
            &Ack {
                acked: 10,
                ..ack(0, 100)
            },
            &path(),
        );
        assert_eq!(h.cwnd(), 20.0);
        h.ssthresh = 20.0;
        // At Δ = 2 s, α = 11.25: one window of 20 packets adds about α.
        h.on_ack(
            &Ack {
                acked: 20,
                ..ack(2 * S, 100)
            },
            &path(),
        );
        assert_eq!(h.cwnd(), 31.25);
    }

    #[test]
    fn timeout_backs_off_ssthresh_and_restarts_from_one_packet() {
        let mut h = htcp(plain());
        h.on_timeout(S, &path());
        assert_eq!((h.cwnd(), h.ssthresh()), (1.0, 5.0));
    }
}
