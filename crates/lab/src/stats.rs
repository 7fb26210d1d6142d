//! What one direction measured: counters, the rate check and delay histograms, and their
//! STATS.json form.

use serde::Serialize;

use crate::backlog::{Backlogged, BackloggedMeter};
use crate::config::Endpoint;
use crate::induced::InducedDrops;
use tcpeval_netem::hist::{Histogram, Summary};

/// Per-direction counters. Every frame that arrives is either sent or counted in exactly one
/// drop counter (or still queued at the end).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Counters {
    pub arrived_pkts: u64,
    pub arrived_bytes: u64,
    /// Asked for by the scenario (`drop_at`).
    pub induced_drops: u64,
    pub random_drops: u64,
    /// Above the policer's rate and burst.
    pub policer_drops: u64,
    /// Longer than the black hole's MTU (`mtu_black_hole_bytes`).
    pub black_hole_drops: u64,
    pub queue_drops: u64,
    pub aqm_drops: u64,
    /// Packets the AQM set CE on instead of dropping them (ECN-capable ones only).
    pub aqm_marks: u64,
    /// Packets held back on leaving the bottleneck (`reorder`): they arrive after some sent
    /// later.
    pub reordered_pkts: u64,
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    /// Packets sent out carrying CE: the marks that left the emulator (the rest were still
    /// held when the run ended, or lost in a send error).
    pub sent_ce_pkts: u64,
    /// Not IPv4 or no endpoint matched: relayed with zero added delay.
    pub unmatched_pkts: u64,
    /// Frames with a GSO type (a setup error: the sender veth should send single packets).
    pub gso_frames: u64,
    /// Frames the kernel dropped before we read them (PACKET_STATISTICS tp_drops).
    pub ring_drops: u64,
    /// Send failures that persisted after bounded retries.
    pub tx_errors: u64,
    /// No free frame buffer when the frame arrived.
    pub pool_drops: u64,
    /// Frames longer than the buffers (`mtu_bytes` + headers): truncated, so dropped.
    pub oversize_drops: u64,
    /// Frames without a usable kernel receive timestamp, stamped when read instead.
    pub stamp_fallbacks: u64,
    pub max_queue_pkts: u64,
    pub max_queue_bytes: u64,
}

impl Counters {
    /// Drops of every cause, the emulator's own included.
    pub fn drops(&self) -> u64 {
        self.induced_drops
            + self.random_drops
            + self.policer_drops
            + self.black_hole_drops
            + self.queue_drops
            + self.aqm_drops
            + self.ring_drops
            + self.tx_errors
            + self.pool_drops
            + self.oversize_drops
    }
}

#[derive(Debug, Clone)]
pub struct DirStats {
    pub counters: Counters,
    pub backlogged: BackloggedMeter,
    /// Actual transmit time − scheduled release.
    pub lateness: Histogram,
    /// Per endpoint: actual transmit time − virtual departure.
    pub added_delay: Vec<Histogram>,
}

impl DirStats {
    pub fn new(endpoints: usize, in_flight_pkts: usize) -> Self {
        Self {
            counters: Counters::default(),
            backlogged: BackloggedMeter::new(in_flight_pkts),
            lateness: Histogram::new(),
            added_delay: (0..endpoints).map(|_| Histogram::new()).collect(),
        }
    }

    /// `held_pkts`: frames still queued or propagating when the run ended; `induced`: the
    /// direction's induced losses.
    pub fn report(
        &self,
        endpoints: &[Endpoint],
        forward: bool,
        held_pkts: u64,
        induced: &InducedDrops,
    ) -> DirReport {
        let endpoints = endpoints.iter().zip(&self.added_delay).enumerate();
        DirReport {
            counters: self.counters,
            held_at_end_pkts: held_pkts,
            backlogged: self.backlogged.total(),
            lateness_ns: self.lateness.summary(),
            endpoints: endpoints
                .map(|(i, (e, h))| EndpointReport {
                    ip: e.ip.to_string(),
                    asked_delay_ns: if forward {
                        e.forward_delay_ns
                    } else {
                        e.reverse_delay_ns
                    },
                    added_delay_ns: h.summary(),
                    dropped_at_ns: induced.done_ns(i).to_vec(),
                })
                .collect(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DirReport {
    #[serde(flatten)]
    pub counters: Counters,
    /// Frames still queued or propagating when the run ended (neither sent nor dropped).
    pub held_at_end_pkts: u64,
    pub backlogged: Backlogged,
    pub lateness_ns: Summary,
    pub endpoints: Vec<EndpointReport>,
}

#[derive(Debug, Clone, Serialize)]
pub struct EndpointReport {
    pub ip: String,
    pub asked_delay_ns: u64,
    pub added_delay_ns: Summary,
    /// The induced losses from this endpoint: each dropped segment's arrival, ns since
    /// `start_realtime_ns`.
    pub dropped_at_ns: Vec<u64>,
}

/// Why the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Stop {
    Signal,
    MaxDuration,
    /// An interface went down or away (its namespace is being torn down).
    InterfaceDown,
}

/// STATS.json.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub start_realtime_ns: u64,
    pub end_realtime_ns: u64,
    pub clock: &'static str,
    pub stopped_by: Stop,
    /// Frame buffers preallocated (shared by both directions).
    pub pool_pkts: usize,
    /// Time between consecutive iterations of the busy loop: its max shows whether the
    /// emulator was preempted (another busy process on its CPU) or stalled.
    pub loop_gap_ns: Summary,
    pub forward: DirReport,
    pub reverse: DirReport,
}
