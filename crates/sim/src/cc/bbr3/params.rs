//! BBRv3's constants, each a parameter with draft-ietf-ccwg-bbr's default (section cited per
//! field) and a range checked when a scenario is loaded. The ECN response is not in the draft
//! (§3.7 leaves it open); its constants are those of Google's published BBRv3 (docs/bbr3.md).

use serde::{Deserialize, Serialize};

use crate::cc::check;
use crate::time::{NS_PER_MS, NS_PER_SEC};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Bbr3Params {
    /// STARTUP's pacing gain, 4·ln 2 ≈ 2.77 (§2.5 `StartupPacingGain`).
    pub startup_pacing_gain: f64,
    /// cwnd gain everywhere but ProbeBW_UP and ProbeRTT (§2.6 `DefaultCwndGain` = 2).
    pub cwnd_gain: f64,
    /// DRAIN's pacing gain (§2.5 `DrainPacingGain` = 0.5), a fraction.
    pub drain_pacing_gain: f64,
    /// ProbeBW_DOWN's pacing gain (§5.3.3.1: 0.90), a fraction.
    pub probe_down_pacing_gain: f64,
    /// ProbeBW_UP's pacing gain (§5.3.3.5: 1.25).
    pub probe_up_pacing_gain: f64,
    /// ProbeBW_UP's cwnd gain (§5.3.3.5: 2.25).
    pub probe_up_cwnd_gain: f64,
    /// Pacing below the estimate, a fraction (§2.5 `PacingMarginPercent` = 1 %).
    pub pacing_margin: f64,
    /// Growth per round that still counts as growth (§5.3.1.2: 25 %, as 1.25).
    pub full_bw_growth: f64,
    /// Rounds without that growth that fill the pipe (§5.3.1.2: 3).
    pub full_bw_rounds: u32,
    /// Loss events in one round that, with `loss_thresh`, end STARTUP (§5.3.1.3
    /// `BBRStartupFullLossCnt` = 6).
    pub startup_full_loss_count: u32,
    /// Rounds DRAIN lasts at most (§5.3.2: 3).
    pub drain_max_rounds: u64,
    /// The loss rate per round a probe tolerates (§2.8 `LossThresh` = 2 %), a fraction.
    pub loss_thresh: f64,
    /// The multiplicative decrease per lossy round (§2.8 `Beta` = 0.7), a fraction.
    pub beta: f64,
    /// The share of inflight_hi left free for others (§2.8 `Headroom` = 0.15), a fraction.
    pub headroom: f64,
    /// ProbeBW cycles the bandwidth filter remembers (§2.11 `MaxBwFilterLen` = 2).
    pub max_bw_filter_cycles: u64,
    /// The fixed part of the wait between bandwidth probes (§5.3.3.8.3: 2 s)...
    pub probe_wait_base_ns: u64,
    /// ...and the most the random part adds to it (§5.3.3.8.3: up to 1 s).
    pub probe_wait_rand_ns: u64,
    /// The most rounds between probes, the Reno-coexistence bound (§5.3.3.8.3: 63).
    pub probe_max_rounds: u64,
    /// How long min_rtt lasts unconfirmed (§2.16.1 `MinRTTFilterLen` = 10 s).
    pub min_rtt_window_ns: u64,
    /// How often ProbeRTT runs at most (§2.16.2 `ProbeRTTInterval` = 5 s).
    pub probe_rtt_interval_ns: u64,
    /// How long ProbeRTT holds in-flight down (§2.16.2 `ProbeRTTDuration` = 200 ms).
    pub probe_rtt_duration_ns: u64,
    /// ProbeRTT's cwnd as a fraction of the BDP (§2.16.2 `ProbeRTTCwndGain` = 0.5).
    pub probe_rtt_cwnd_gain: f64,
    /// The fewest packets in flight (§2.8 `MinPipeCwnd` = 4).
    pub min_pipe_cwnd_pkts: f64,
    /// The gain of the EWMA of the CE-marked fraction per round (Google's BBRv3: 1/16).
    pub ecn_alpha_gain: f64,
    /// The CE-marked fraction of a round that says in-flight was too high (Google's: 50 %).
    pub ecn_thresh: f64,
    /// How much of α one round of marks takes off inflight_lo (Google's: 1/3), a fraction.
    pub ecn_factor: f64,
    /// ECN is answered only on paths whose min_rtt is at most this (Google's: 5 ms): marks
    /// from a shallow-threshold AQM on a long path would starve the flow.
    pub ecn_max_rtt_ns: u64,
    /// Rounds above `ecn_thresh` that end STARTUP (Google's: 2).
    pub startup_ecn_rounds: u32,
}

impl Default for Bbr3Params {
    fn default() -> Self {
        Self {
            startup_pacing_gain: 2.77,
            cwnd_gain: 2.0,
            drain_pacing_gain: 0.5,
            probe_down_pacing_gain: 0.9,
            probe_up_pacing_gain: 1.25,
            probe_up_cwnd_gain: 2.25,
            pacing_margin: 0.01,
            full_bw_growth: 1.25,
            full_bw_rounds: 3,
            startup_full_loss_count: 6,
            drain_max_rounds: 3,
            loss_thresh: 0.02,
            beta: 0.7,
            headroom: 0.15,
            max_bw_filter_cycles: 2,
            probe_wait_base_ns: 2 * NS_PER_SEC,
            probe_wait_rand_ns: NS_PER_SEC,
            probe_max_rounds: 63,
            min_rtt_window_ns: 10 * NS_PER_SEC,
            probe_rtt_interval_ns: 5 * NS_PER_SEC,
            probe_rtt_duration_ns: 200 * NS_PER_MS,
            probe_rtt_cwnd_gain: 0.5,
            min_pipe_cwnd_pkts: 4.0,
            ecn_alpha_gain: 1.0 / 16.0,
            ecn_thresh: 0.5,
            ecn_factor: 1.0 / 3.0,
            ecn_max_rtt_ns: 5 * NS_PER_MS,
            startup_ecn_rounds: 2,
        }
    }
}

impl Bbr3Params {
    /// Every parameter in its range; the first out of range is named.
    pub fn checked(self) -> Result<Self, String> {
        for (name, value) in [
            ("startup_pacing_gain", self.startup_pacing_gain),
            ("cwnd_gain", self.cwnd_gain),
            ("probe_up_pacing_gain", self.probe_up_pacing_gain),
            ("probe_up_cwnd_gain", self.probe_up_cwnd_gain),
            ("full_bw_growth", self.full_bw_growth),
            ("min_pipe_cwnd_pkts", self.min_pipe_cwnd_pkts),
        ] {
            check::positive(name, value)?;
        }
        for (name, value) in [
            ("drain_pacing_gain", self.drain_pacing_gain),
            ("probe_down_pacing_gain", self.probe_down_pacing_gain),
            ("pacing_margin", self.pacing_margin),
            ("loss_thresh", self.loss_thresh),
            ("beta", self.beta),
            ("headroom", self.headroom),
            ("probe_rtt_cwnd_gain", self.probe_rtt_cwnd_gain),
            ("ecn_alpha_gain", self.ecn_alpha_gain),
            ("ecn_thresh", self.ecn_thresh),
            ("ecn_factor", self.ecn_factor),
        ] {
            check::fraction(name, value)?;
        }
        for (name, value) in [
            ("full_bw_rounds", u64::from(self.full_bw_rounds)),
            (
                "startup_full_loss_count",
                u64::from(self.startup_full_loss_count),
            ),
            ("drain_max_rounds", self.drain_max_rounds),
            ("max_bw_filter_cycles", self.max_bw_filter_cycles),
            ("probe_wait_base_ns", self.probe_wait_base_ns),
            ("probe_max_rounds", self.probe_max_rounds),
            ("min_rtt_window_ns", self.min_rtt_window_ns),
            ("probe_rtt_interval_ns", self.probe_rtt_interval_ns),
            ("probe_rtt_duration_ns", self.probe_rtt_duration_ns),
            ("ecn_max_rtt_ns", self.ecn_max_rtt_ns),
            ("startup_ecn_rounds", u64::from(self.startup_ecn_rounds)),
        ] {
            check::at_least_one(name, value)?;
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_in_range_and_a_bad_value_is_named() {
        assert!(Bbr3Params::default().checked().is_ok());
        let bad = Bbr3Params {
            beta: 1.2,
            ..Bbr3Params::default()
        };
        let error = bad.checked().unwrap_err();
        assert!(error.starts_with("beta = 1.2"), "{error}");
    }
}
