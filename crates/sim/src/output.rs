//! What a run returns: the summary (serialised to JSON for the front end) and the columns.

use serde::Serialize;

use crate::record::{FlowColumns, LinkColumns};

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct FlowSummary {
    pub id: u32,
    pub group: u32,
    pub cc: String,
    pub rtt_ms: f64,
    /// Bytes delivered in order to the receiving application over the flow's active time.
    pub goodput_mbps: f64,
    pub bytes_delivered: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Flow completion time of a finite transfer: from its start until the sender holds the
    /// acknowledgement of the last byte (as iperf and flow-completion-time studies measure it).
    pub completion_s: Option<f64>,
    pub start_s: f64,
    /// End of the active time: completion, stop or the end of the run.
    pub end_s: f64,
    pub packets_sent: u64,
    pub congestion_events: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkSummary {
    pub utilization: f64,
    pub drops: u64,
    pub queue_drops: u64,
    pub random_drops: u64,
    pub induced_drops: u64,
    pub mean_queue_pkts: f64,
    /// The buffer in packets of the largest flow's size (null when limited in bytes).
    pub capacity_pkts: Option<u64>,
    pub tx_bytes: u64,
}

/// Counters of the run. Data packets are conserved:
/// `packets_sent == packets_delivered + packets_dropped + packets_in_flight`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SimSummary {
    pub events: u64,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub packets_in_flight: u64,
    pub sim_seconds: f64,
    pub wall_seconds: f64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Summary {
    pub flows: Vec<FlowSummary>,
    pub bottleneck: LinkSummary,
    pub sim: SimSummary,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Output {
    pub summary: Summary,
    pub flows: FlowColumns,
    pub links: LinkColumns,
    pub link_names: Vec<String>,
}

impl Output {
    pub fn summary_json(&self) -> String {
        serde_json::to_string(&self.summary).expect("the summary serialises")
    }
}
