//! One flow: a sender/receiver pair, and what the scenario asks of it.

use crate::cc::{registry, Init};
use crate::engine::{FlowId, Timer};
use crate::error::{Field, ScenarioError};
use crate::scenario::{self, Scenario};
use crate::tcp::appdata::AppData;
use crate::tcp::ecn::{EcnReceiver, EcnSender};
use crate::tcp::receiver::Receiver;
use crate::tcp::sender::{Sender, SenderConfig};
use crate::tcp::sink::Sink;
use crate::time::{secs, NS_PER_MS};

/// Linux `TCP_DELACK_MIN`: how long a receiver holds back an ACK (RFC 1122 allows up to 500 ms).
pub const DELAYED_ACK_TIMEOUT_NS: u64 = 40 * NS_PER_MS;

/// Linux `tcp_comp_sack_delay_ns`: the longest a compressed SACK is held.
const SACK_COMPRESSION_MAX_DELAY_NS: u64 = NS_PER_MS;

/// Linux holds a compressed SACK 5% of the receiver's RTT estimate, at most 1 ms. The receiver
/// here takes the path's base RTT as its estimate (Linux measures it, queueing included); from
/// 20 ms on the cap decides either way. (The receiver compresses only when SACK is on.)
fn sack_compression_delay_ns(spec: &scenario::Flow) -> Option<u64> {
    spec.sack_compression
        .then(|| (spec.rtt_ns / 20).min(SACK_COMPRESSION_MAX_DELAY_NS))
}

#[derive(Debug)]
pub struct Flow {
    pub sender: Sender,
    pub receiver: Receiver,
    pub delayed_ack: Timer,
    pub window_update: Timer,
    /// Segments delivered in order when the application stopped.
    pub delivered_at_stop: Option<u64>,
    // Of the flow's spec, what the samples and the summary read: the spec itself is dropped
    // once the flow is built (`Simulation::new`).
    pub group: u32,
    /// The algorithm's name.
    pub cc: &'static str,
    pub rtt_ns: u64,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub size_bytes: Option<u64>,
    pub mss_bytes: u32,
    /// The route its packets take now: 0 the first, n after the n-th change.
    pub route: u8,
}

/// The receiving application, if it reads at a limited rate: from a buffer of `window`
/// segments, or of twice the path's BDP at its first link's rate.
fn sink(spec: &scenario::Flow, s: &Scenario) -> Option<Sink> {
    let rate_bps = spec.sink_rate_bps?;
    let first_link = s.link_index(&spec.route[0]).expect("validated");
    let bdp = (s.links[first_link].rate_bps as f64 * secs(spec.rtt_ns)
        / 8.0
        / f64::from(spec.packet_bytes())) as u64;
    let buffer = spec.window_pkts.unwrap_or(2 * bdp).max(2);
    Some(Sink::new(rate_bps, buffer, spec.mss_bytes, spec.start_ns))
}

/// How many times what the path holds a sender may keep out, whatever its window says.
const PATH_WINDOW_FACTOR: u64 = 4;
/// The cap is never below this many packets, so short paths keep the windows they always had.
const MIN_WINDOW_CAP_PKTS: u64 = 10_000;

/// The most packets the sender keeps out: the socket-buffer limit if one is set, and never
/// more than a few times what the path holds (its BDP at the slowest link plus every queue on
/// the route). Beyond that a window only fills queues that drop it, and each packet out costs
/// the scoreboard memory: without the cap `initial_cwnd = 1e9` or a window grown without bound
/// would take it all.
fn window_cap_pkts(spec: &scenario::Flow, s: &Scenario) -> u64 {
    let links = spec
        .route
        .iter()
        .map(|name| &s.links[s.link_index(name).expect("validated")]);
    let packet_bytes = u64::from(spec.packet_bytes());
    let slowest_bps = links.clone().map(|l| l.rate_bps).min().unwrap_or(0);
    let bdp_pkts = (slowest_bps as f64 * secs(spec.rtt_ns) / 8.0 / packet_bytes as f64) as u64;
    let queued_pkts: u64 = links
        .map(|l| {
            l.queue_pkts
                .unwrap_or(l.queue_bytes.unwrap_or(0) / packet_bytes)
        })
        .fold(0, u64::saturating_add);
    let cap = bdp_pkts
        .saturating_add(queued_pkts)
        .saturating_mul(PATH_WINDOW_FACTOR)
        .max(MIN_WINDOW_CAP_PKTS);
    spec.window_pkts.map_or(cap, |window| window.min(cap))
}

/// Where the sender's data comes from: an endless stream, one message of `size`, or the
/// messages an exchange writes; read from a disk when `source_rate` is set.
fn app_data(spec: &scenario::Flow, in_exchange: bool) -> AppData {
    let data = match spec.size_bytes {
        _ if in_exchange => AppData::messages(spec.mss_bytes),
        Some(size) => {
            let mut data = AppData::messages(spec.mss_bytes);
            data.write(size);
            data
        }
        None => AppData::bulk(spec.mss_bytes),
    };
    data.with_source_rate(spec.source_rate_bps, spec.start_ns)
}

impl Flow {
    pub fn new(id: FlowId, s: &Scenario, in_exchange: bool) -> Result<Self, ScenarioError> {
        let spec = &s.flows[id as usize];
        let init = Init {
            mss_bytes: spec.mss_bytes,
            initial_cwnd_pkts: f64::from(spec.initial_cwnd_pkts),
            seed: s.seed ^ (u64::from(id) + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15),
        };
        let (cc_name, cc) = registry::build(&spec.cc, &init).map_err(|(value, reason)| {
            ScenarioError::new(Field::of("flows", id as usize, "cc"), value, reason)
        })?;
        let per_packet_echo = registry::find(cc_name).is_some_and(|a| a.per_packet_echo);
        let cfg = SenderConfig {
            mss_bytes: spec.mss_bytes,
            sack: spec.sack,
            window_pkts: window_cap_pkts(spec, s),
            min_rto_ns: spec.min_rto_ns,
            pacing_gap_ns: spec.pacing_gap_ns,
            pacing_rate_bps: spec.pacing_rate_bps,
            recovery: spec.recovery(),
            tso: spec.tso,
            ecn: EcnSender::new(spec.ecn, per_packet_echo),
        };
        Ok(Self {
            sender: Sender::new(id, cfg, app_data(spec, in_exchange), cc),
            receiver: Receiver::new(spec.sack, spec.delayed_ack, DELAYED_ACK_TIMEOUT_NS)
                .with_sink(sink(spec, s))
                .with_sack_compression(sack_compression_delay_ns(spec))
                .with_dsack(spec.undo)
                .with_periodic_drop(spec.drop_every)
                .with_ecn(EcnReceiver::new(spec.ecn.feedback(per_packet_echo))),
            delayed_ack: Timer::default(),
            window_update: Timer::default(),
            delivered_at_stop: None,
            group: spec.group,
            cc: cc_name,
            rtt_ns: spec.rtt_ns,
            start_ns: spec.start_ns,
            stop_ns: spec.stop_ns,
            size_bytes: spec.size_bytes,
            mss_bytes: spec.mss_bytes,
            route: 0,
        })
    }

    /// Bytes delivered in order to the receiving application after `segments` segments.
    pub fn bytes_of(&self, segments: u64) -> u64 {
        let bytes = segments * u64::from(self.mss_bytes);
        self.size_bytes.map_or(bytes, |size| bytes.min(size))
    }

    pub fn delivered_bytes(&self) -> u64 {
        self.bytes_of(self.receiver.rcv_nxt())
    }

    /// Whether nothing more will happen to this flow: its transfer is acknowledged, or its
    /// application stopped and nothing is left in flight.
    pub fn finished(&self) -> bool {
        let transferred = self.size_bytes.is_some() && self.sender.stats.all_acked_ns.is_some();
        let stopped = self.delivered_at_stop.is_some() && self.sender.in_flight_pkts() == 0;
        transferred || stopped
    }
}
