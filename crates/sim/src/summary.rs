//! The summary of a run: per flow, per link direction, per background source, per exchange,
//! and the simulator's own counters. Serialised to JSON for the front end.

use serde::Serialize;
use tcpeval_netem::hist::Histogram;

use crate::flow::Flow;
use crate::net::link::Link;
use crate::net::queue::Limit;
use crate::time::{millis, rate_bps, secs};
use crate::traffic::exchange::Exchange;
use crate::traffic::source::Source;

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
    /// Window reductions, for losses and for ECN echoes.
    pub congestion_events: u64,
    /// Of those, reductions for ECN echoes.
    pub ecn_reductions: u64,
    /// CE-marked data packets the receiver got.
    pub ce_marks: u64,
    /// ACKs whose echo signalled congestion (ECE, or a new CE count).
    pub ece_acks: u64,
    /// Reductions undone as spurious (D-SACK, F-RTO or timestamps; host switches `undo`,
    /// `timestamps`).
    pub undos: u64,
    /// Data packets the receiver dropped on purpose (`drop_every`).
    pub receiver_drops: u64,
    /// ACKs the receiver sent (delayed ACKs and SACK compression set how many).
    pub acks_sent: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LinkSummary {
    pub name: String,
    pub utilization: f64,
    pub drops: u64,
    pub queue_drops: u64,
    pub random_drops: u64,
    pub induced_drops: u64,
    /// Dropped by the AQM: RED at arrival, CoDel at departure.
    pub aqm_drops: u64,
    /// Packets the AQM marked CE instead of dropping.
    pub aqm_marks: u64,
    /// Dropped by the link's policer (above its rate and burst).
    pub policer_drops: u64,
    /// Longer than the MTU of the link's black hole.
    pub black_hole_drops: u64,
    pub mean_queue_pkts: f64,
    /// The buffer in packets (a byte limit in packets of the largest flow's size).
    pub capacity_pkts: u64,
    pub tx_bytes: u64,
    /// The sojourn of the packets sent from each of the discipline's queues, where it keeps
    /// them (DualPI2's L and C queues); absent otherwise.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub sojourns: Vec<QueueSojourn>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SourceSummary {
    pub id: u32,
    pub kind: String,
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub goodput_mbps: f64,
    /// CBR: the delivered datagrams' mean and largest one-way delay (propagation, serialisation
    /// and queueing); null for on/off sources.
    pub mean_delay_ms: Option<f64>,
    pub max_delay_ms: Option<f64>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ExchangeSummary {
    pub request_flow: u32,
    pub response_flow: u32,
    /// One per completed exchange: request written to the response's last byte at the client.
    pub latencies_s: Vec<f64>,
}

/// Counters of the run. Data packets of the flows are conserved:
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
    /// The forward direction of the first declared link.
    pub bottleneck: LinkSummary,
    /// Every link direction with a rate: the declared links, then the reverse directions.
    pub links: Vec<LinkSummary>,
    pub sources: Vec<SourceSummary>,
    pub exchanges: Vec<ExchangeSummary>,
    pub sim: SimSummary,
}

pub fn flow_summary(id: usize, f: &Flow, end_ns: u64) -> FlowSummary {
    let s = &f.sender.stats;
    let finite = f.size_bytes.is_some();
    let completed_ns = s.all_acked_ns.filter(|_| finite);
    let start_ns = f.start_ns.min(end_ns);
    let active_end_ns = completed_ns.or(f.stop_ns).unwrap_or(end_ns).min(end_ns);
    let delivered = match (completed_ns, f.delivered_at_stop) {
        (None, Some(segments)) => f.bytes_of(segments),
        _ => f.delivered_bytes(),
    };
    FlowSummary {
        id: id as u32,
        group: f.group,
        cc: f.cc.to_owned(),
        rtt_ms: millis(f.rtt_ns),
        goodput_mbps: rate_bps(delivered, active_end_ns.saturating_sub(start_ns)) / 1e6,
        bytes_delivered: delivered,
        retransmits: s.retransmits,
        timeouts: s.timeouts,
        completion_s: completed_ns.map(|t| secs(t - f.start_ns)),
        start_s: secs(start_ns),
        end_s: secs(active_end_ns),
        packets_sent: s.packets_sent,
        congestion_events: s.congestion_events,
        ecn_reductions: s.ecn_reductions,
        ce_marks: f.receiver.ecn.ce_received,
        ece_acks: s.ece_acks,
        undos: s.undos,
        receiver_drops: f.receiver.drops,
        acks_sent: f.receiver.acks_sent,
    }
}

/// How long the packets sent from one queue of a link waited.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct QueueSojourn {
    pub queue: &'static str,
    pub packets: u64,
    pub mean_ms: Option<f64>,
    pub p50_ms: Option<f64>,
    pub p99_ms: Option<f64>,
    pub max_ms: Option<f64>,
}

fn queue_sojourn((queue, h): (&'static str, &Histogram)) -> QueueSojourn {
    let ms = |ns: Option<u64>| ns.map(|ns| ns as f64 / 1e6);
    let s = h.summary();
    QueueSojourn {
        queue,
        packets: h.count(),
        mean_ms: h.mean().map(|ns| ns / 1e6),
        p50_ms: ms(s.p50),
        p99_ms: ms(s.p99),
        max_ms: ms(s.max),
    }
}

pub fn link_summary(link: &mut Link, end_ns: u64, largest_packet_bytes: u32) -> LinkSummary {
    let tx_bytes = link.tx_bytes(end_ns);
    let capacity_pkts = match link.limit() {
        Some(Limit::Packets(n)) => n,
        Some(Limit::Bytes(b)) => b / u64::from(largest_packet_bytes),
        None => 0,
    };
    let c = &link.counters;
    LinkSummary {
        name: link.name.clone(),
        utilization: rate_bps(tx_bytes, end_ns) / link.mean_rate_bps(end_ns),
        drops: link.drops(),
        queue_drops: c.queue_drops,
        random_drops: c.random_drops,
        induced_drops: c.induced_drops,
        aqm_drops: c.aqm_drops,
        aqm_marks: c.aqm_marks,
        policer_drops: c.policer_drops,
        black_hole_drops: c.black_hole_drops,
        mean_queue_pkts: c.backlog_ns as f64 / end_ns as f64,
        capacity_pkts,
        tx_bytes,
        sojourns: link.sojourns().map(queue_sojourn).collect(),
    }
}

pub fn source_summary(id: usize, s: &Source, end_ns: u64) -> SourceSummary {
    SourceSummary {
        id: id as u32,
        kind: s.kind.to_owned(),
        packets_sent: s.stats.packets_sent,
        packets_delivered: s.stats.packets_delivered,
        packets_dropped: s.stats.packets_dropped,
        goodput_mbps: s.goodput_mbps(s.active_ns(end_ns)),
        mean_delay_ms: s.delays_s().map(|(mean, _)| mean * 1e3),
        max_delay_ms: s.delays_s().map(|(_, max)| max * 1e3),
    }
}

pub fn exchange_summary(x: &Exchange) -> ExchangeSummary {
    ExchangeSummary {
        request_flow: x.spec.request_flow,
        response_flow: x.spec.response_flow,
        latencies_s: x.latencies_ns.iter().map(|&ns| secs(ns)).collect(),
    }
}
