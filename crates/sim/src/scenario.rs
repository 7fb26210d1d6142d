//! The resolved scenario: what the Python front end hands the core (docs/contract.md).
//!
//! Everything is already in base units (ns, bit/s, bytes, packets) and every default has been
//! filled in by the front end, so these types carry no defaults of their own — except the
//! congestion-control parameters, which are validated by the algorithm they belong to.

use serde::Deserialize;

use crate::error::ScenarioError;

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
    pub bottleneck: Bottleneck,
    pub flows: Vec<Flow>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Bottleneck {
    pub rate_bps: u64,
    pub queue_pkts: Option<u64>,
    pub queue_bytes: Option<u64>,
    pub aqm: String,
    pub loss: f64,
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
    pub window_pkts: Option<u64>,
    pub initial_cwnd_pkts: u32,
    pub min_rto_ns: u64,
    pub drop_at_ns: Vec<u64>,
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

impl Scenario {
    pub fn from_json(text: &str) -> Result<Self, ScenarioError> {
        let scenario: Scenario = serde_json::from_str(text)
            .map_err(|e| ScenarioError::new("scenario", text_excerpt(text), e.to_string()))?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Checks what the types cannot: positive rates and times, one queue limit, sane loss.
    pub fn validate(&self) -> Result<(), ScenarioError> {
        let positive = |field: &str, value: u64| {
            if value == 0 {
                Err(ScenarioError::new(field, "0", "must be positive"))
            } else {
                Ok(())
            }
        };
        positive("duration", self.duration_ns)?;
        positive("sample_interval", self.sample_interval_ns)?;
        positive("bottleneck.rate", self.bottleneck.rate_bps)?;
        let b = &self.bottleneck;
        match (b.queue_pkts, b.queue_bytes) {
            (Some(0), None) => {
                return Err(ScenarioError::new(
                    "bottleneck.queue",
                    "0pkt",
                    "must hold at least one packet",
                ))
            }
            (Some(_), None) | (None, Some(_)) => {}
            _ => {
                return Err(ScenarioError::new(
                    "bottleneck.queue",
                    format!("{:?}/{:?}", b.queue_pkts, b.queue_bytes),
                    "exactly one of queue_pkts and queue_bytes must be set",
                ))
            }
        }
        if b.aqm != "droptail" {
            return Err(ScenarioError::new(
                "bottleneck.aqm",
                &b.aqm,
                "only 'droptail' is available",
            ));
        }
        if !(0.0..1.0).contains(&b.loss) {
            return Err(ScenarioError::new(
                "bottleneck.loss",
                b.loss.to_string(),
                "must be in [0, 1)",
            ));
        }
        if self.flows.is_empty() {
            return Err(ScenarioError::new(
                "flows",
                "[]",
                "at least one flow is needed",
            ));
        }
        for (i, f) in self.flows.iter().enumerate() {
            self.validate_flow(i, f)?;
        }
        Ok(())
    }

    fn validate_flow(&self, i: usize, f: &Flow) -> Result<(), ScenarioError> {
        let field = |name: &str| format!("flows[{i}].{name}");
        if f.rtt_ns == 0 {
            return Err(ScenarioError::new(field("rtt"), "0", "must be positive"));
        }
        if f.mss_bytes < 64 || f.mss_bytes > 65_000 {
            return Err(ScenarioError::new(
                field("mss"),
                f.mss_bytes.to_string(),
                "must be 64..65000 bytes",
            ));
        }
        if f.initial_cwnd_pkts == 0 {
            return Err(ScenarioError::new(
                field("initial_cwnd"),
                "0",
                "must be at least 1 packet",
            ));
        }
        if f.window_pkts == Some(0) {
            return Err(ScenarioError::new(
                field("window"),
                "0",
                "must allow at least one packet",
            ));
        }
        if f.size_bytes == Some(0) {
            return Err(ScenarioError::new(field("size"), "0", "must be positive"));
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
        if self
            .bottleneck
            .queue_bytes
            .is_some_and(|q| q < u64::from(f.packet_bytes()))
        {
            return Err(ScenarioError::new(
                "bottleneck.queue",
                format!("{}B", self.bottleneck.queue_bytes.unwrap_or(0)),
                format!("is smaller than one {}-byte packet", f.packet_bytes()),
            ));
        }
        Ok(())
    }
}

fn text_excerpt(text: &str) -> String {
    text.chars().take(40).collect()
}
