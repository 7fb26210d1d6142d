//! The resolved scenario: what the Python front end hands the core (docs/contract.md).
//!
//! Everything is already in base units (ns, bit/s, bytes, packets) and every default has been
//! filled in by the front end, so these types carry no defaults of their own — except the
//! congestion-control parameters, which are validated by the algorithm they belong to.
//!
//! One owner per rule (docs/architecture.md). What a scenario *means* — signs, ranges,
//! probabilities, unique names, stop after start, a queue that holds a packet — is the front
//! end's to say (`python/tcpeval/scenario/`): it checks that once, when a scenario is loaded,
//! for every backend, in the user's keys and units. [`Scenario::validate`] holds only what the
//! engine needs to run at all, which protects Rust callers that build a `Scenario`
//! themselves: every name and index resolves, no divisor is zero, no delay underflows, no
//! source loops at one instant, and exchanges are wired as the front end wires them. Without
//! one of these a run panics or never ends; anything else runs as given, sense or not.
//! `tests/scenario_rules.json` lists every rule with its owner, and both test suites hold
//! each rule to it.

use serde::Deserialize;

pub use tcpeval_netem::spec::{AqmSpec, LossSpec, PolicerSpec, ReorderSpec};

use crate::error::{Field, ScenarioError};
use crate::tcp::ecn::EcnMode;
use crate::tcp::host::{
    LossDetection, LostRetransmission, Recovery, RtoInRecovery, WindowReduction,
};

/// Bytes of IP + TCP header (with the timestamp option) on every segment: a 1448-byte MSS
/// fills a 1500-byte MTU, as on the Linux testbeds of the studies.
pub const HEADER_BYTES: u32 = 52;

/// Size of a pure ACK on the wire.
pub const ACK_BYTES: u32 = HEADER_BYTES;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub name: String,
    pub duration_ns: u64,
    pub seed: u64,
    pub sample_interval_ns: u64,
    pub links: Vec<LinkSpec>,
    pub flows: Vec<Flow>,
    #[serde(default)]
    pub sources: Vec<SourceSpec>,
    #[serde(default)]
    pub exchanges: Vec<Exchange>,
    #[serde(default)]
    pub pcap_link: Option<String>,
}

/// A link, declared once and crossed by the routes that name it. Its reverse direction has
/// the same rate, delay and queue, its own loss, and no policer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    pub name: String,
    pub rate_bps: u64,
    pub delay_ns: u64,
    pub queue_pkts: Option<u64>,
    pub queue_bytes: Option<u64>,
    pub aqm: AqmSpec,
    pub loss: LossSpec,
    pub reverse_loss: LossSpec,
    /// A token bucket at the link's entry, forward direction only.
    #[serde(default)]
    pub policer: Option<PolicerSpec>,
    /// A share of the packets leaving the forward direction held back (`net/topology.rs`).
    #[serde(default)]
    pub reorder: Option<ReorderSpec>,
    /// A path-MTU black hole, forward direction only: IP packets longer than this vanish.
    #[serde(default)]
    pub mtu_black_hole_bytes: Option<u32>,
    /// Periods `[start, end)` the forward direction is down, in time order.
    #[serde(default)]
    pub outages_ns: Vec<[u64; 2]>,
    /// Periods the reverse direction is down.
    #[serde(default)]
    pub reverse_outages_ns: Vec<[u64; 2]>,
    /// Later rates of both directions, in time order: `rate_bps` holds from 0 to the first.
    #[serde(default)]
    pub rate_changes: Vec<RateChange>,
}

/// From `at_ns` on, the link transmits at `rate_bps`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateChange {
    pub at_ns: u64,
    pub rate_bps: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub group: u32,
    /// `{"name": "reno", ...parameters}`.
    pub cc: serde_json::Map<String, serde_json::Value>,
    pub rtt_ns: u64,
    /// The one-way delay of the data direction, links included; the ACKs take the rest of
    /// the RTT. `None`: the private delay sits where `net/topology.rs` says.
    #[serde(default)]
    pub forward_delay_ns: Option<u64>,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub size_bytes: Option<u64>,
    pub mss_bytes: u32,
    pub sack: bool,
    pub delayed_ack: bool,
    pub sack_compression: bool,
    /// `off`, `classic` or `l4s` (`tcp/ecn.rs`).
    pub ecn: EcnMode,
    /// The host's loss recovery (`flow.host` resolved into its switches).
    pub window_reduction: WindowReduction,
    pub loss_detection: LossDetection,
    pub lost_retransmission: LostRetransmission,
    pub tail_loss_probe: bool,
    pub undo: bool,
    pub timestamps: bool,
    pub rto_in_recovery: RtoInRecovery,
    /// The host sends TSO/GSO frames (`tcp/tso.rs`).
    pub tso: bool,
    pub window_pkts: Option<u64>,
    pub initial_cwnd_pkts: u32,
    pub min_rto_ns: u64,
    pub drop_at_ns: Vec<u64>,
    pub route: Vec<String>,
    /// Later routes, in time order: from each change's time on, the flow's packets take its
    /// route (`net/topology.rs`).
    #[serde(default)]
    pub route_changes: Vec<RouteChange>,
    pub reverse: bool,
    pub drop_every: Option<u64>,
    pub pacing_gap_ns: Option<u64>,
    pub pacing_rate_bps: Option<u64>,
    pub source_rate_bps: Option<u64>,
    pub sink_rate_bps: Option<u64>,
}

/// From `at_ns` on, a flow's packets cross `route` instead.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RouteChange {
    pub at_ns: u64,
    pub route: Vec<String>,
}

/// Most route changes a flow may have: a packet carries its route's number in a byte.
pub const MAX_ROUTE_CHANGES: usize = u8::MAX as usize;

/// Background traffic without congestion control.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum SourceSpec {
    /// Constant bit rate.
    Cbr {
        route: Vec<String>,
        reverse: bool,
        rate_bps: u64,
        packet_bytes: u32,
        start_ns: u64,
        stop_ns: Option<u64>,
    },
    /// On at `rate_bps` for Pareto-distributed periods, then off for Pareto-distributed periods.
    Onoff {
        route: Vec<String>,
        reverse: bool,
        rate_bps: u64,
        packet_bytes: u32,
        start_ns: u64,
        stop_ns: Option<u64>,
        shape: f64,
        mean_on_ns: u64,
        mean_off_ns: u64,
    },
}

/// Request-response exchanges over two flows: the request flow carries each request, the
/// response flow the answer.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Exchange {
    pub request_flow: u32,
    pub response_flow: u32,
    pub request_bytes: u64,
    pub response_bytes: u64,
    pub think_ns: u64,
    pub count: u32,
}

impl Flow {
    /// Bytes of one full-sized data packet on the wire.
    pub fn packet_bytes(&self) -> u32 {
        self.mss_bytes + HEADER_BYTES
    }

    /// Every route the flow takes during the run, the first first.
    pub fn routes(&self) -> impl Iterator<Item = &[String]> {
        let later = self.route_changes.iter().map(|c| c.route.as_slice());
        std::iter::once(self.route.as_slice()).chain(later)
    }

    pub fn recovery(&self) -> Recovery {
        Recovery {
            window_reduction: self.window_reduction,
            loss_detection: self.loss_detection,
            lost_retransmission: self.lost_retransmission,
            tail_loss_probe: self.tail_loss_probe,
            undo: self.undo,
            timestamps: self.timestamps,
            rto_in_recovery: self.rto_in_recovery,
        }
    }
}

impl SourceSpec {
    pub fn route(&self) -> (&[String], bool) {
        match self {
            Self::Cbr { route, reverse, .. } | Self::Onoff { route, reverse, .. } => {
                (route, *reverse)
            }
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            Self::Cbr { .. } => "cbr",
            Self::Onoff { .. } => "onoff",
        }
    }
}

/// `value`, when set, must not be zero: `why` says what in the engine needs it. The field is
/// named only when it is at fault: naming each field checked cost 100,000 flows 700,000
/// allocations, twenty times the checks themselves.
fn nonzero(
    field: impl FnOnce() -> Field,
    value: impl Into<Option<u64>>,
    why: &str,
) -> Result<(), ScenarioError> {
    if value.into() == Some(0) {
        return Err(ScenarioError::new(
            field(),
            "0",
            format!("must not be zero: {why}"),
        ));
    }
    Ok(())
}

/// Why a transfer, request or response is not empty: it is cut into segments, one at least.
const A_MESSAGE_HAS_A_SEGMENT: &str = "a message has at least one segment";

impl Scenario {
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let json = |text| serde_json::Deserializer::from_str(text);
        let scenario = match Scenario::deserialize(&mut json(text)) {
            Ok(scenario) => scenario,
            // Tracking the path costs an allocation per key, half the parse (100,000 flows: 1.2
            // of 2.4 G instructions): only a parse that fails pays it, parsing again to name
            // the field at fault.
            Err(_) => serde_path_to_error::deserialize(&mut json(text)).map_err(|e| {
                let reason = e.inner().to_string();
                let reason = reason.split(" at line ").next().unwrap_or_default();
                ScenarioError::new(field_at(e.path()), "", reason)
            })?,
        };
        scenario.validate()?;
        Ok(scenario)
    }

    /// The engine's preconditions (see the module doc): a scenario that meets them runs,
    /// however little sense it makes.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        nonzero(
            || Field::top("sample_interval"),
            self.sample_interval_ns,
            "the sampler steps by it",
        )?;
        if self.links.is_empty() {
            return Err(ScenarioError::new(
                Field::top("links"),
                "[]",
                "must not be empty: the first link is the summary's bottleneck",
            ));
        }
        for (i, link) in self.links.iter().enumerate() {
            validate_link(i, link)?;
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(i, f)?;
        }
        for (i, s) in self.sources.iter().enumerate() {
            self.validate_source(i, s)?;
        }
        for (i, x) in self.exchanges.iter().enumerate() {
            self.validate_exchange(i, x)?;
        }
        Ok(())
    }

    /// Index of the link called `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    /// Sum of the one-way delays of a route, or an error naming the unknown link.
    fn route_delay_ns(
        &self,
        field: impl Fn() -> Field,
        route: &[String],
    ) -> Result<u64, ScenarioError> {
        if route.is_empty() {
            return Err(ScenarioError::new(
                field(),
                "[]",
                "must cross at least one link",
            ));
        }
        route.iter().try_fold(0, |sum, name| {
            let link = self
                .link_index(name)
                .ok_or_else(|| ScenarioError::new(field(), name, "is not a declared link"))?;
            Ok(sum + self.links[link].delay_ns)
        })
    }

    fn validate_flow(&self, i: usize, f: &Flow) -> Result<(), ScenarioError> {
        let field = |name: &str| Field::of("flows", i, name);
        let route_delay_ns = self.route_delay_ns(|| field("route"), &f.route)?;
        if f.rtt_ns < 2 * route_delay_ns {
            return Err(ScenarioError::new(
                field("rtt"),
                format!("{}ns", f.rtt_ns),
                format!(
                    "is shorter than twice its route's delay ({}ns): the rest of the RTT, \
                     the flow's private return path, would be negative",
                    2 * route_delay_ns
                ),
            ));
        }
        if let Some(forward_ns) = f.forward_delay_ns {
            if forward_ns < route_delay_ns || forward_ns > f.rtt_ns - route_delay_ns {
                return Err(ScenarioError::new(
                    field("forward_delay"),
                    format!("{forward_ns}ns"),
                    format!(
                        "leaves a direction less than its route's delay ({route_delay_ns}ns):                          that direction's private path would be negative"
                    ),
                ));
            }
        }
        for change in &f.route_changes {
            self.route_delay_ns(|| field("route_changes"), &change.route)?;
        }
        if f.route_changes.len() > MAX_ROUTE_CHANGES {
            return Err(ScenarioError::new(
                field("route_changes"),
                f.route_changes.len().to_string(),
                format!(
                    "must be at most {MAX_ROUTE_CHANGES}: a packet carries its route's number \
                     in a byte"
                ),
            ));
        }
        for (name, value, why) in [
            (
                "mss",
                Some(u64::from(f.mss_bytes)),
                "data is cut into segments of mss bytes",
            ),
            ("size", f.size_bytes, A_MESSAGE_HAS_A_SEGMENT),
            (
                "drop_every",
                f.drop_every,
                "the receiver counts arrivals modulo it",
            ),
            ("pacing", f.pacing_rate_bps, "the pacing gap divides by it"),
            (
                "source_rate",
                f.source_rate_bps,
                "the time data is ready divides by it",
            ),
            (
                "sink_rate",
                f.sink_rate_bps,
                "the time the receive window reopens divides by it",
            ),
        ] {
            nonzero(|| field(name), value, why)?;
        }
        Ok(())
    }

    fn validate_source(&self, i: usize, s: &SourceSpec) -> Result<(), ScenarioError> {
        let field = |name: &str| Field::of("sources", i, name);
        self.route_delay_ns(|| field("route"), s.route().0)?;
        let (SourceSpec::Cbr { rate_bps, .. } | SourceSpec::Onoff { rate_bps, .. }) = *s;
        nonzero(
            || field("rate"),
            rate_bps,
            "the gap between packets divides by it",
        )?;
        let SourceSpec::Onoff {
            shape,
            mean_on_ns,
            mean_off_ns,
            ..
        } = *s
        else {
            return Ok(());
        };
        if !(shape > 1.0 && shape.is_finite()) {
            return Err(ScenarioError::new(
                field("shape"),
                shape.to_string(),
                "must be above 1 and finite: below, a Pareto period has no mean and rounds \
                 to zero",
            ));
        }
        nonzero(
            || field("mean_on"),
            mean_on_ns.max(mean_off_ns),
            "with mean_off zero too, an on/off cycle takes no time and repeats forever",
        )
    }

    /// Exchanges are wired by the front end, never written by a user: two distinct flows
    /// whose data the exchange writes.
    fn validate_exchange(&self, i: usize, x: &Exchange) -> Result<(), ScenarioError> {
        let field = |name: &str| Field::of("exchanges", i, name);
        for (name, flow) in [
            ("request_flow", x.request_flow),
            ("response_flow", x.response_flow),
        ] {
            let Some(f) = self.flows.get(flow as usize) else {
                return Err(ScenarioError::new(
                    field(name),
                    flow.to_string(),
                    "is not a flow",
                ));
            };
            if f.size_bytes.is_some() {
                return Err(ScenarioError::new(
                    field(name),
                    flow.to_string(),
                    "must not have a size: the exchange writes its data",
                ));
            }
        }
        if x.request_flow == x.response_flow {
            return Err(ScenarioError::new(
                field("response_flow"),
                x.response_flow.to_string(),
                "must differ from the request flow",
            ));
        }
        nonzero(
            || field("request"),
            x.request_bytes,
            A_MESSAGE_HAS_A_SEGMENT,
        )?;
        nonzero(
            || field("response"),
            x.response_bytes,
            A_MESSAGE_HAS_A_SEGMENT,
        )
    }
}

fn validate_link(i: usize, link: &LinkSpec) -> Result<(), ScenarioError> {
    let field = |name: &str| Field::of("links", i, name);
    nonzero(
        || field("rate"),
        link.rate_bps,
        "a packet's transmission time divides by it",
    )?;
    for change in &link.rate_changes {
        nonzero(
            || field("rate"),
            change.rate_bps,
            "a packet's transmission time divides by it",
        )?;
    }
    if link.queue_pkts.is_some() == link.queue_bytes.is_some() {
        return Err(ScenarioError::new(
            field("queue"),
            format!("{:?}/{:?}", link.queue_pkts, link.queue_bytes),
            "exactly one of queue_pkts and queue_bytes must be set",
        ));
    }
    Ok(())
}

/// The field a JSON path points at (`flows[3].mss_bytes`): an entry of a list and the key
/// within it, so that the front end can name the user's table, never the JSON text.
fn field_at(path: &serde_path_to_error::Path) -> Field {
    use serde_path_to_error::Segment;
    let segments: Vec<&Segment> = path.iter().collect();
    let key = |rest: &[&Segment]| {
        let keys: Vec<String> = rest.iter().map(ToString::to_string).collect();
        keys.join(".")
    };
    match segments.as_slice() {
        [Segment::Map { key: list }, Segment::Seq { index }, rest @ ..] => {
            let list = ["links", "flows", "sources", "exchanges"]
                .into_iter()
                .find(|known| known == list);
            match list {
                Some(list) => Field::of(list, *index, key(rest)),
                None => Field::top(key(&segments)),
            }
        }
        [] => Field::top("scenario"),
        all => Field::top(key(all)),
    }
}
