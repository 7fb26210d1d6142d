//! The resolved scenario: what the Python front end hands the core (docs/contract.md).
//!
//! Everything is already in base units (ns, bit/s, bytes, packets) and every default has been
//! filled in by the front end, so these types carry no defaults of their own — except the
//! congestion-control parameters, which are validated by the algorithm they belong to.

use serde::Deserialize;

use crate::error::{Field, ScenarioError};

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
/// the same rate, delay and queue, and its own loss.
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
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "name", rename_all = "lowercase", deny_unknown_fields)]
pub enum AqmSpec {
    Droptail,
    Red {
        min_th_pkts: f64,
        max_th_pkts: f64,
        max_p: f64,
        weight: f64,
        gentle: bool,
    },
    Codel {
        target_ns: u64,
        interval_ns: u64,
    },
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p: f64,
        r: f64,
        loss_good: f64,
        loss_bad: f64,
    },
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Flow {
    pub group: u32,
    /// `{"name": "reno", ...parameters}`.
    pub cc: serde_json::Map<String, serde_json::Value>,
    pub rtt_ns: u64,
    pub start_ns: u64,
    pub stop_ns: Option<u64>,
    pub size_bytes: Option<u64>,
    pub mss_bytes: u32,
    pub sack: bool,
    pub delayed_ack: bool,
    pub sack_compression: bool,
    pub window_pkts: Option<u64>,
    pub initial_cwnd_pkts: u32,
    pub min_rto_ns: u64,
    pub drop_at_ns: Vec<u64>,
    pub route: Vec<String>,
    pub reverse: bool,
    pub drop_every: Option<u64>,
    pub pacing_gap_ns: Option<u64>,
    pub pacing_rate_bps: Option<u64>,
    pub source_rate_bps: Option<u64>,
    pub sink_rate_bps: Option<u64>,
}

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
    /// The algorithm's registry name.
    pub fn cc_name(&self) -> &str {
        self.cc.get("name").and_then(|v| v.as_str()).unwrap_or("")
    }

    /// Bytes of one full-sized data packet on the wire.
    pub fn packet_bytes(&self) -> u32 {
        self.mss_bytes + HEADER_BYTES
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

impl LossSpec {
    pub fn is_none(&self) -> bool {
        *self == Self::None
    }
}

fn positive(field: Field, value: u64) -> Result<(), ScenarioError> {
    if value == 0 {
        return Err(ScenarioError::new(field, "0", "must be positive"));
    }
    Ok(())
}

fn non_empty<T>(field: Field, items: &[T]) -> Result<(), ScenarioError> {
    if items.is_empty() {
        return Err(ScenarioError::new(field, "[]", "must not be empty"));
    }
    Ok(())
}

fn probability(field: Field, p: f64) -> Result<(), ScenarioError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(ScenarioError::new(
            field,
            p.to_string(),
            "must be a probability in [0, 1]",
        ));
    }
    Ok(())
}

impl Scenario {
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario = serde_json::from_str(text).map_err(|e| {
            ScenarioError::new(Field::top("scenario"), text_excerpt(text), e.to_string())
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Checks what the types cannot: positive rates and times, one queue limit per link,
    /// routes over declared links, delays that fit in the RTTs, sane probabilities.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        positive(Field::top("duration"), self.duration_ns)?;
        positive(Field::top("sample_interval"), self.sample_interval_ns)?;
        non_empty(Field::top("links"), &self.links)?;
        for (i, link) in self.links.iter().enumerate() {
            self.validate_link(i, link)?;
        }
        non_empty(Field::top("flows"), &self.flows)?;
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(i, f)?;
        }
        for (i, s) in self.sources.iter().enumerate() {
            self.validate_source(i, s)?;
        }
        for (i, x) in self.exchanges.iter().enumerate() {
            self.validate_exchange(i, x)?;
        }
        if let Some(name) = &self.pcap_link {
            self.link_index(name).ok_or_else(|| {
                ScenarioError::new(Field::top("pcap_link"), name, "is not a declared link")
            })?;
        }
        Ok(())
    }

    /// Index of the link called `name`.
    pub fn link_index(&self, name: &str) -> Option<usize> {
        self.links.iter().position(|l| l.name == name)
    }

    fn validate_link(&self, i: usize, link: &LinkSpec) -> Result<(), ScenarioError> {
        let field = |name: &str| Field::of("links", i, name);
        if self.links[..i].iter().any(|l| l.name == link.name) {
            return Err(ScenarioError::new(
                field("name"),
                &link.name,
                "is declared twice",
            ));
        }
        positive(field("rate"), link.rate_bps)?;
        match (link.queue_pkts, link.queue_bytes) {
            (Some(0), None) => {
                return Err(ScenarioError::new(
                    field("queue"),
                    "0pkt",
                    "must hold at least one packet",
                ))
            }
            (Some(_), None) | (None, Some(_)) => {}
            _ => {
                return Err(ScenarioError::new(
                    field("queue"),
                    format!("{:?}/{:?}", link.queue_pkts, link.queue_bytes),
                    "exactly one of queue_pkts and queue_bytes must be set",
                ))
            }
        }
        validate_aqm(&field("aqm"), &link.aqm)?;
        validate_loss(&field("loss"), &link.loss)?;
        validate_loss(&field("reverse_loss"), &link.reverse_loss)
    }

    /// Sum of the one-way delays of a route, or an error naming the unknown link.
    fn route_delay_ns(&self, field: &Field, route: &[String]) -> Result<u64, ScenarioError> {
        if route.is_empty() {
            return Err(ScenarioError::new(
                field.clone(),
                "[]",
                "must cross at least one link",
            ));
        }
        route.iter().try_fold(0, |sum, name| {
            let link = self
                .link_index(name)
                .ok_or_else(|| ScenarioError::new(field.clone(), name, "is not a declared link"))?;
            Ok(sum + self.links[link].delay_ns)
        })
    }

    fn validate_flow(&self, i: usize, f: &Flow) -> Result<(), ScenarioError> {
        let field = |name: &str| Field::of("flows", i, name);
        positive(field("rtt"), f.rtt_ns)?;
        let route_delay_ns = self.route_delay_ns(&field("route"), &f.route)?;
        if f.rtt_ns < 2 * route_delay_ns {
            return Err(ScenarioError::new(
                field("rtt"),
                format!("{}ns", f.rtt_ns),
                format!(
                    "is shorter than twice its route's delay ({}ns)",
                    2 * route_delay_ns
                ),
            ));
        }
        if f.mss_bytes < 64 || f.mss_bytes > 65_000 {
            return Err(ScenarioError::new(
                field("mss"),
                f.mss_bytes.to_string(),
                "must be 64..65000 bytes",
            ));
        }
        positive(field("initial_cwnd"), u64::from(f.initial_cwnd_pkts))?;
        for (name, value) in [
            ("window", f.window_pkts),
            ("size", f.size_bytes),
            ("pacing", f.pacing_rate_bps),
            ("source_rate", f.source_rate_bps),
            ("sink_rate", f.sink_rate_bps),
        ] {
            if let Some(v) = value {
                positive(field(name), v)?;
            }
        }
        if f.drop_every.is_some_and(|n| n < 2) {
            return Err(ScenarioError::new(
                field("drop_every"),
                format!("{:?}", f.drop_every),
                "must be at least 2",
            ));
        }
        if let Some(stop) = f.stop_ns {
            if stop <= f.start_ns {
                return Err(ScenarioError::new(
                    field("stop"),
                    stop.to_string(),
                    "must be after start",
                ));
            }
        }
        self.check_packet_fits(f.packet_bytes(), &f.route)
    }

    /// Every byte-limited queue on the route must hold one packet of this size.
    fn check_packet_fits(&self, packet_bytes: u32, route: &[String]) -> Result<(), ScenarioError> {
        for link in route.iter().filter_map(|name| self.link_index(name)) {
            if let Some(q) = self.links[link]
                .queue_bytes
                .filter(|&q| q < u64::from(packet_bytes))
            {
                return Err(ScenarioError::new(
                    Field::of("links", link, "queue"),
                    format!("{q}B"),
                    format!("is smaller than one {packet_bytes}-byte packet"),
                ));
            }
        }
        Ok(())
    }

    fn validate_source(&self, i: usize, s: &SourceSpec) -> Result<(), ScenarioError> {
        let field = |name: &str| Field::of("sources", i, name);
        let (route, _) = s.route();
        self.route_delay_ns(&field("route"), route)?;
        let (rate_bps, packet_bytes) = match s {
            SourceSpec::Cbr {
                rate_bps,
                packet_bytes,
                ..
            } => (*rate_bps, *packet_bytes),
            SourceSpec::Onoff {
                rate_bps,
                packet_bytes,
                shape,
                mean_on_ns,
                mean_off_ns,
                ..
            } => {
                if !(*shape > 1.0 && shape.is_finite()) {
                    return Err(ScenarioError::new(
                        field("shape"),
                        shape.to_string(),
                        "must be above 1 (a finite mean)",
                    ));
                }
                positive(field("mean_on"), *mean_on_ns)?;
                positive(field("mean_off"), *mean_off_ns)?;
                (*rate_bps, *packet_bytes)
            }
        };
        positive(field("rate"), rate_bps)?;
        if packet_bytes < 28 {
            return Err(ScenarioError::new(
                field("packet_size"),
                packet_bytes.to_string(),
                "must hold IP and UDP headers (28 bytes)",
            ));
        }
        self.check_packet_fits(packet_bytes, route)
    }

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
        positive(field("request_bytes"), x.request_bytes)?;
        positive(field("response_bytes"), x.response_bytes)
    }
}

fn validate_aqm(field: &Field, aqm: &AqmSpec) -> Result<(), ScenarioError> {
    match *aqm {
        AqmSpec::Droptail => Ok(()),
        AqmSpec::Red {
            min_th_pkts,
            max_th_pkts,
            max_p,
            weight,
            ..
        } => {
            if !(0.0 <= min_th_pkts && min_th_pkts < max_th_pkts) {
                return Err(ScenarioError::new(
                    field.clone(),
                    format!("min_th={min_th_pkts}, max_th={max_th_pkts}"),
                    "needs 0 <= min_th < max_th",
                ));
            }
            probability(field.child("max_p"), max_p)?;
            if !(weight > 0.0 && weight <= 1.0) {
                return Err(ScenarioError::new(
                    field.child("weight"),
                    weight.to_string(),
                    "must be in (0, 1]",
                ));
            }
            Ok(())
        }
        AqmSpec::Codel {
            target_ns,
            interval_ns,
        } => {
            positive(field.child("target"), target_ns)?;
            positive(field.child("interval"), interval_ns)
        }
    }
}

fn validate_loss(field: &Field, loss: &LossSpec) -> Result<(), ScenarioError> {
    match *loss {
        LossSpec::None => Ok(()),
        LossSpec::Bernoulli { p } => {
            if !(0.0..1.0).contains(&p) {
                return Err(ScenarioError::new(
                    field.clone(),
                    p.to_string(),
                    "must be in [0, 1)",
                ));
            }
            Ok(())
        }
        LossSpec::GilbertElliott {
            p,
            r,
            loss_good,
            loss_bad,
        } => {
            probability(field.child("p"), p)?;
            probability(field.child("r"), r)?;
            probability(field.child("loss_good"), loss_good)?;
            probability(field.child("loss_bad"), loss_bad)?;
            if r == 0.0 && p > 0.0 {
                return Err(ScenarioError::new(
                    field.child("r"),
                    "0",
                    "must be positive: the bad state must end",
                ));
            }
            Ok(())
        }
    }
}

fn text_excerpt(text: &str) -> String {
    text.chars().take(40).collect()
}
