//! Congestion control: the one small interface every algorithm implements.
//!
//! Who owns what (docs/architecture.md, after Linux `tcp_congestion_ops`): the sender owns the
//! scoreboard, loss detection, recovery, RTO, pacing timer, RTT estimation, delivery-rate
//! sampling and round counting; a controller owns cwnd, ssthresh, its pacing rate and its own
//! model. The sender guarantees:
//!
//! 1. `on_congestion` is called at most once per window of data (RFC 6582 `recover`), and,
//!    on a host whose `lost_retransmission` is `reduce`, again when a retransmission sent
//!    after that reduction is lost (RFC 5681 §4.3): at most once per round trip.
//! 2. `on_ack` is called for every ACK that newly acknowledges or SACKs data, in every
//!    `CaState`, so samples are never lost; growth belongs outside Recovery/CWR and only
//!    when cwnd-limited — [`common::may_grow`] says so.
//! 3. In Recovery the sender sends while pipe (RFC 6675) < `cwnd()`, or below its own
//!    window as that falls to `cwnd()` (PRR, rate halving: `tcp/reduction.rs`), unless
//!    `owns_recovery()` (BBR), in which case cwnd alone drives it.
//! 4. Rounds are counted once, by the sender, from the delivered count (`Ack::round_start`).
//! 5. A controller never sees the scoreboard, the network, other flows or a global clock.
//!
//! Units: windows in packets (`f64`, fractional so `+1/cwnd` needs no credit counter; the
//! sender sends whole packets below `floor(cwnd)`), time in ns, rates in payload bit/s.

pub mod ack_aggregation;
pub mod aimd;
pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod check;
pub mod common;
pub mod cubic;
pub mod dctcp;
pub mod fast;
pub mod highspeed;
pub mod htcp;
pub mod hystart;
pub mod max_filter;
pub mod prague;
pub mod registry;
pub mod reno;
pub mod round_from_now;
pub mod scalable;
#[cfg(test)]
pub mod testing;
pub mod vegas;

use std::fmt::Debug;

use crate::tcp::ecn::EcnMode;

/// Congestion-avoidance state of the sender (Linux `tcp_ca_state` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CaState {
    /// Nothing outstanding is in doubt.
    Open,
    /// Duplicate ACKs or SACKs seen, no loss inferred yet.
    Disorder,
    /// Window reduced for an explicit signal (ECN, RFC 3168 §6.1.2), until the data
    /// outstanding then is acknowledged.
    Cwr,
    /// Fast recovery after an inferred loss (RFC 6582 / RFC 6675).
    Recovery,
    /// After a retransmission timeout, until the data outstanding then is acknowledged.
    Loss,
}

/// A delivery-rate sample (draft-cheng-iccrg-delivery-rate-estimation): `delivered` packets
/// over `interval_ns`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateSample {
    pub delivered: u32,
    pub interval_ns: u64,
    /// The sender was short of data while these packets were in flight, so the rate is a
    /// lower bound on what the path can carry.
    pub is_app_limited: bool,
}

impl RateSample {
    pub fn bps(&self, mss_bytes: u32) -> f64 {
        f64::from(self.delivered) * f64::from(mss_bytes) * 8.0 * 1e9 / self.interval_ns as f64
    }
}

/// Everything one ACK told the sender, filled in after the scoreboard, the RTT estimator and
/// the rate sampler have been updated.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ack {
    pub now_ns: u64,
    /// Packets newly acknowledged, cumulatively or by SACK (Linux `acked_sacked`).
    pub acked: u32,
    /// Packets newly marked lost while processing this ACK.
    pub lost: u32,
    /// Packets of `acked` the receiver reported CE-marked: all of them on an ACK with ECE under
    /// classic or DCTCP feedback, the ACE increment under accurate feedback (`tcp/ecn.rs`).
    pub ce_pkts: u32,
    /// RTT of the newest newly-acknowledged packet that was never retransmitted (Karn).
    pub rtt_ns: Option<u64>,
    /// Pipe before and after this ACK (RFC 6675 `pipe`, Linux `packets_in_flight`).
    pub prior_in_flight: u32,
    pub in_flight: u32,
    /// This ACK ends a round trip.
    pub round_start: bool,
    pub ca_state: CaState,
    /// The sender was limited by cwnd (not by the receive window or the application) when it
    /// last tried to send (Linux `tcp_is_cwnd_limited`, RFC 7661).
    pub cwnd_limited: bool,
    pub rate: Option<RateSample>,
}

/// Slow-changing facts about the connection, read-only to the controller.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Path {
    pub mss_bytes: u32,
    /// Smoothed RTT (RFC 6298); 0 before the first sample.
    pub srtt_ns: u64,
    /// Smallest RTT seen; `u64::MAX` before the first sample.
    pub min_rtt_ns: u64,
    /// Packets delivered (acknowledged or SACKed) since the start.
    pub delivered: u64,
    /// Round trips counted so far.
    pub round: u64,
}

/// What a congestion episode was signalled by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Signal {
    Loss,
    /// CE marks fed back by the receiver (RFC 3168 §6.1.2: respond as to a loss, nothing to
    /// retransmit).
    Ecn,
}

/// The first loss (or ECN echo) of a window of data, or a lost retransmission (RFC 5681 §4.3).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CongestionEvent {
    pub now_ns: u64,
    pub signal: Signal,
    /// Packets in flight when the loss was detected (RFC 5681 FlightSize).
    pub in_flight: u32,
    /// Packets marked lost so far in this episode.
    pub lost: u32,
}

/// What a controller is built from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Init {
    pub mss_bytes: u32,
    pub initial_cwnd_pkts: f64,
    /// Seed for the controller's own random stream (never the OS).
    pub seed: u64,
}

/// A copy of a controller as it is: the sender keeps one from before a window reduction, so
/// that a reduction later proved spurious can be undone (Linux `prior_cwnd`/`prior_ssthresh`,
/// which here live in the controller). Every controller that is `Clone` has it.
pub trait Snapshot {
    fn snapshot(&self) -> Box<dyn CongestionControl>;
}

impl<T: CongestionControl + Clone + 'static> Snapshot for T {
    fn snapshot(&self) -> Box<dyn CongestionControl> {
        Box::new(self.clone())
    }
}

pub trait CongestionControl: Debug + Send + Snapshot {
    /// Every ACK that advances snd_una or SACKs new data, in every `CaState`.
    fn on_ack(&mut self, ack: &Ack, path: &Path);
    /// Once per congestion episode (the first loss of a window, or a lost retransmission):
    /// reduce here.
    fn on_congestion(&mut self, ev: &CongestionEvent, path: &Path);
    /// The retransmission timer fired; the sender has entered Loss.
    fn on_timeout(&mut self, now_ns: u64, path: &Path);
    /// The recovery point was cumulatively acknowledged; back to Open.
    fn on_recovery_exit(&mut self, _now_ns: u64, _path: &Path) {}
    /// Sending resumes after an idle period with nothing in flight.
    fn on_idle_restart(&mut self, _now_ns: u64, _idle_ns: u64, _path: &Path) {}

    /// Congestion window, packets.
    fn cwnd(&self) -> f64;
    /// Slow-start threshold, packets (infinite until the first reduction).
    fn ssthresh(&self) -> f64 {
        f64::INFINITY
    }
    /// Pacing rate in payload bit/s (the unit of [`RateSample::bps`]: headers excluded),
    /// honoured by the sender when `Some`.
    fn pacing_rate_bps(&self) -> Option<f64> {
        None
    }
    /// The controller sets cwnd during recovery itself (BBR); the sender then sends by cwnd.
    fn owns_recovery(&self) -> bool {
        false
    }

    /// Names of numbers describing the controller's own model, written as extra time-series
    /// columns (`record.rs`), units in the names; at most [`MAX_STATE_VALUES`]. The same
    /// names for the controller's whole life.
    fn state_names(&self) -> &'static [&'static str] {
        &[]
    }

    /// The numbers `state_names` names, in its order, into `out` (exactly as long).
    fn state_values(&self, _out: &mut [f64]) {}
}

/// The most numbers a controller's `state_values` gives.
pub const MAX_STATE_VALUES: usize = 8;

/// A loss-based stack: no ECN by default (Linux's `tcp_ecn = 2` never asks for it), and with
/// classic ECN an echo treated as a loss (RFC 3168 §6.1.2), as its kernel module does.
pub const LOSS_BASED_ECN: &[EcnMode] = &[EcnMode::Off, EcnMode::Classic];

pub type Params = serde_json::Map<String, serde_json::Value>;

/// Builds a controller from its parameters, or says which parameter is wrong.
pub type Builder = fn(&Params, &Init) -> Result<Box<dyn CongestionControl>, String>;

/// An algorithm's entry in the registry (`registry.rs`): written at the end of its file.
pub struct Algorithm {
    pub name: &'static str,
    /// The specification it follows.
    pub source: &'static str,
    /// Parameters with their default values.
    pub defaults: fn() -> serde_json::Value,
    /// The ECN settings (`flow.ecn`) the stack can run with; the first is its default.
    pub ecn: &'static [EcnMode],
    /// It asks its receiver for DCTCP's per-packet echo under classic ECN (RFC 8257 §3.2).
    pub per_packet_echo: bool,
    pub build: Builder,
}
