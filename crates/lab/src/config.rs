//! The emulator's JSON config: two interfaces, a bottleneck per direction and the endpoints'
//! propagation delays. Parsing rejects unknown fields; `validate` rejects values the emulator
//! cannot honour, naming the field by its JSON path.

use std::net::Ipv4Addr;
use std::path::Path;

use serde::Deserialize;
use tcpeval_netem::black_hole::MtuBlackHole;
use tcpeval_netem::loss::LossModel;
use tcpeval_netem::policer::Policer;
use tcpeval_netem::queue::{Aqm, Limit};
use tcpeval_netem::reorder::Reorder;
use tcpeval_netem::spec::{
    validate_mtu_black_hole, AqmSpec, LossSpec, PolicerSpec, ReorderSpec, SpecError,
};
use tcpeval_netem::Frame;

use crate::error::{LabError, Result};

/// Interface names are at most IFNAMSIZ − 1 bytes.
const MAX_IFNAME_BYTES: usize = 15;
/// Samples are preallocated; this bounds their memory (~40 MB).
pub const MAX_SAMPLE_ROWS: u64 = 1_000_000;
pub const MAX_ENDPOINTS: usize = 4096;

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub left: String,
    pub right: String,
    /// Pin the emulator thread to this CPU.
    #[serde(default)]
    pub cpu: Option<usize>,
    pub max_duration_ns: u64,
    pub sample_interval_ns: u64,
    /// The largest IP packet; buffers hold it plus the Ethernet and virtio-net headers.
    pub mtu_bytes: u32,
    /// Frames arriving on `left`, sent out on `right`.
    pub forward: DirectionConfig,
    /// Frames arriving on `right`, sent out on `left`.
    pub reverse: DirectionConfig,
    pub endpoints: Vec<Endpoint>,
}

/// One direction of the bottleneck, in netem's dialect (`tcpeval_netem::spec`, the one the
/// simulator's scenario carries): the Python front end passes the resolved scenario's link
/// entries through unchanged.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionConfig {
    /// `None`: no rate limit, hence no serialisation delay and no queue.
    pub rate_bps: Option<u64>,
    /// The hard limit: exactly one of the two (`Limit::from_spec`).
    pub queue_pkts: Option<u64>,
    pub queue_bytes: Option<u64>,
    pub aqm: AqmSpec,
    pub loss: LossSpec,
    /// A token bucket in front of the queue (after random loss); `None`: no policer.
    #[serde(default)]
    pub policer: Option<PolicerSpec>,
    /// A share of the packets leaving the bottleneck held back; `None`: in order.
    #[serde(default)]
    pub reorder: Option<ReorderSpec>,
    /// IP packets longer than this vanish at the entry (a path-MTU black hole); `None`: none.
    #[serde(default)]
    pub mtu_black_hole_bytes: Option<u32>,
    pub seed: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub ip: Ipv4Addr,
    pub forward_delay_ns: u64,
    pub reverse_delay_ns: u64,
    /// Induced losses: for each time (ns since the emulator's start, `start_realtime_ns`), the
    /// first TCP data segment from this address arriving at the forward bottleneck at or
    /// after it is dropped (`induced.rs`).
    #[serde(default)]
    pub drop_at_ns: Vec<u64>,
}

impl Config {
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| LabError::io(format!("reading config '{}'", path.display()), e))?;
        Self::parse(&text).map_err(|e| match e {
            LabError::Parse { message, .. } => LabError::Parse {
                path: path.display().to_string(),
                message,
            },
            other => other,
        })
    }

    /// Parse and validate.
    pub fn parse(text: &str) -> Result<Self> {
        let config: Config = serde_json::from_str(text).map_err(|e| LabError::Parse {
            path: String::new(),
            message: e.to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    fn validate(&self) -> Result<()> {
        interface_name("left", &self.left)?;
        interface_name("right", &self.right)?;
        if self.left == self.right {
            return Err(LabError::invalid(
                "right",
                &self.right,
                "must differ from left",
            ));
        }
        positive("max_duration_ns", self.max_duration_ns)?;
        positive("sample_interval_ns", self.sample_interval_ns)?;
        if self.max_duration_ns / self.sample_interval_ns > MAX_SAMPLE_ROWS {
            return Err(LabError::invalid(
                "sample_interval_ns",
                self.sample_interval_ns,
                format!("gives more than {MAX_SAMPLE_ROWS} samples over max_duration_ns"),
            ));
        }
        if !(68..=65_535).contains(&self.mtu_bytes) {
            return Err(LabError::invalid(
                "mtu_bytes",
                self.mtu_bytes,
                "must be in 68..=65535",
            ));
        }
        self.forward.validate("forward")?;
        self.reverse.validate("reverse")?;
        self.validate_endpoints()
    }

    fn validate_endpoints(&self) -> Result<()> {
        if self.endpoints.len() > MAX_ENDPOINTS {
            return Err(LabError::invalid(
                "endpoints",
                self.endpoints.len(),
                format!("entries; at most {MAX_ENDPOINTS}"),
            ));
        }
        for (i, e) in self.endpoints.iter().enumerate() {
            if self.endpoints[..i].iter().any(|o| o.ip == e.ip) {
                return Err(LabError::invalid(
                    format!("endpoints[{i}].ip"),
                    e.ip,
                    "is listed twice",
                ));
            }
        }
        Ok(())
    }

    /// The largest propagation delay of a direction (ns).
    pub fn max_delay_ns(&self, forward: bool) -> u64 {
        let delays = self.endpoints.iter();
        let max = if forward {
            delays.map(|e| e.forward_delay_ns).max()
        } else {
            delays.map(|e| e.reverse_delay_ns).max()
        };
        max.unwrap_or(0)
    }
}

impl DirectionConfig {
    /// Netem's own checks, each error named by its path from the config's root.
    fn validate(&self, dir: &str) -> Result<()> {
        if let Some(rate) = self.rate_bps {
            positive(&format!("{dir}.rate_bps"), rate)?;
        }
        let at = |spec: String| move |e: SpecError| spec_error(&spec, e);
        Limit::from_spec(self.queue_pkts, self.queue_bytes)
            .and_then(Limit::validate)
            .map_err(at(dir.to_owned()))?;
        if let Some(p) = &self.policer {
            p.validate().map_err(at(format!("{dir}.policer")))?;
        }
        if let Some(r) = &self.reorder {
            r.validate().map_err(at(format!("{dir}.reorder")))?;
        }
        validate_mtu_black_hole(self.mtu_black_hole_bytes).map_err(at(dir.to_owned()))?;
        self.aqm.validate().map_err(at(format!("{dir}.aqm")))?;
        self.loss.validate().map_err(at(format!("{dir}.loss")))
    }

    /// The hard limit (the config was validated: exactly one of the pair is set).
    pub fn limit(&self) -> Limit {
        Limit::from_spec(self.queue_pkts, self.queue_bytes).expect("a validated config")
    }

    /// The limit in packets of at least `min_pkt_bytes` (for sizing buffers).
    pub fn limit_pkts(&self, min_pkt_bytes: u64) -> u64 {
        match self.limit() {
            Limit::Packets(n) => n,
            Limit::Bytes(n) => n.div_ceil(min_pkt_bytes.max(1)),
        }
    }

    /// RED draws from its own stream, seeded apart from the loss process's.
    pub fn aqm<P: Frame>(&self) -> Aqm<P> {
        self.aqm.build(self.seed ^ 0x5245_4400_0000_0000)
    }

    pub fn policer(&self) -> Option<Policer> {
        self.policer.as_ref().map(PolicerSpec::build)
    }

    pub fn loss(&self) -> LossModel {
        self.loss.build(self.seed)
    }

    /// Reordering draws from its own stream, apart from the loss process's and RED's.
    pub fn reorder(&self) -> Option<Reorder> {
        let seed = self.seed ^ 0x7265_6f72_0000_0000;
        self.reorder.as_ref().map(|r| r.build(seed))
    }

    pub fn black_hole(&self) -> Option<MtuBlackHole> {
        self.mtu_black_hole_bytes.map(MtuBlackHole::new)
    }
}

/// Netem's `SpecError` (a key relative to the spec) as the lab's, named from the root.
fn spec_error(prefix: &str, e: SpecError) -> LabError {
    LabError::invalid(format!("{prefix}.{}", e.key), e.value, e.reason)
}

fn interface_name(field: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_IFNAME_BYTES
        && !name.contains(['/', ' ', '\0'])
        && name != "."
        && name != "..";
    if !ok {
        return Err(LabError::invalid(field, name, "is not an interface name"));
    }
    Ok(())
}

fn positive(field: &str, value: u64) -> Result<()> {
    if value == 0 {
        return Err(LabError::invalid(field, value, "must be positive"));
    }
    Ok(())
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub const EXAMPLE: &str = r#"{
        "left": "tl1a2el", "right": "tl1a2er", "cpu": 1,
        "max_duration_ns": 130000000000, "sample_interval_ns": 10000000, "mtu_bytes": 1500,
        "forward": {"rate_bps": 100000000, "queue_pkts": 100, "queue_bytes": null,
                    "aqm": {"name": "droptail"},
                    "loss": {"model": "bernoulli", "p": 0.001},
                    "policer": {"rate_bps": 20000000, "burst_bytes": 64000},
                    "reorder": {"share": 0.01, "delay_ns": 2000000},
                    "mtu_black_hole_bytes": 1400, "seed": 1},
        "reverse": {"rate_bps": null, "queue_pkts": null, "queue_bytes": 150000,
                    "aqm": {"name": "codel", "target_ns": 5000000, "interval_ns": 100000000,
                            "ecn": true, "ce_threshold_ns": null},
                    "loss": {"model": "gilbert_elliott", "p": 0.01, "r": 0.3, "loss_good": 0.0, "loss_bad": 0.5},
                    "seed": 2},
        "endpoints": [{"ip": "10.201.1.1", "forward_delay_ns": 30000000, "reverse_delay_ns": 30000000,
                       "drop_at_ns": [4000000000, 8000000000]}]
    }"#;

    fn error_of(text: &str) -> String {
        Config::parse(text).unwrap_err().to_string()
    }

    #[test]
    fn the_documented_example_parses() {
        let c = Config::parse(EXAMPLE).unwrap();
        assert_eq!(c.cpu, Some(1));
        assert_eq!(c.forward.limit(), Limit::Packets(100));
        assert_eq!(c.reverse.rate_bps, None);
        assert_eq!(c.reverse.limit(), Limit::Bytes(150_000));
        assert_eq!(c.endpoints[0].ip, Ipv4Addr::new(10, 201, 1, 1));
        assert_eq!(c.max_delay_ns(true), 30_000_000);
        assert_eq!(c.endpoints[0].drop_at_ns, [4_000_000_000, 8_000_000_000]);
        assert_eq!(c.forward.policer(), Some(Policer::new(20_000_000, 64_000)));
        assert_eq!(c.reverse.policer, None);
        assert_eq!(c.forward.black_hole(), Some(MtuBlackHole::new(1400)));
        assert_eq!(c.reverse.black_hole(), None);
        assert!(c.forward.reorder().is_some() && c.reverse.reorder().is_none());
        assert!(matches!(c.reverse.aqm, AqmSpec::Codel(p) if p.ecn));
        assert_eq!(c.reverse.loss.validate(), Ok(()));
    }

    #[test]
    fn red_parses_with_its_params_in_the_scenarios_dialect() {
        let red = r#"{"name": "red", "min_th_pkts": 5, "max_th_pkts": 15, "max_p": 0.1,
            "weight": 0.002, "gentle": true, "ecn": true, "harddrop": false}"#;
        let text = EXAMPLE.replace(
            r#""aqm": {"name": "droptail"}"#,
            &format!(r#""aqm": {red}"#),
        );
        let c = Config::parse(&text).unwrap();
        let AqmSpec::Red(red) = c.forward.aqm else {
            panic!("{:?}", c.forward.aqm)
        };
        assert_eq!((red.max_th_pkts, red.ecn), (15.0, true));
        // RED draws from the stream the lab always gave it, apart from the loss process's.
        let built = c.forward.aqm::<crate::link::Pkt>();
        let expected = c
            .forward
            .aqm
            .build::<crate::link::Pkt>(1 ^ 0x5245_4400_0000_0000);
        assert_eq!(format!("{built:?}"), format!("{expected:?}"));
    }

    #[test]
    fn unknown_and_missing_fields_are_named() {
        let e = error_of(&EXAMPLE.replace(r#""cpu": 1"#, r#""cpus": 1"#));
        assert!(e.contains("unknown field `cpus`"), "{e}");
        let e = error_of(&EXAMPLE.replace(r#""mtu_bytes": 1500,"#, ""));
        assert!(e.contains("missing field `mtu_bytes`"), "{e}");
        let e = error_of(&EXAMPLE.replace(r#""p": 0.001"#, r#""p": 0.001, "q": 1"#));
        assert!(e.contains("unknown field `q`"), "{e}");
        let e = error_of(&EXAMPLE.replace(r#""droptail""#, r#""fq""#));
        assert!(e.contains("unknown variant `fq`"), "{e}");
        // The lab's former dialect is refused, not translated.
        let e =
            error_of(&EXAMPLE.replace(r#""aqm": {"name": "droptail"}"#, r#""aqm": "droptail""#));
        assert!(e.contains("invalid type"), "{e}");
    }

    #[test]
    fn bad_values_name_the_field_path_and_value() {
        let cases = [
            (r#""p": 0.001"#, r#""p": 1.5"#, "forward.loss.p: '1.5'"),
            (
                r#""queue_pkts": 100"#,
                r#""queue_pkts": 0"#,
                "forward.queue_pkts: '0'",
            ),
            (
                r#""queue_bytes": 150000"#,
                r#""queue_bytes": null"#,
                "reverse.queue: 'None/None' exactly one of queue_pkts and queue_bytes",
            ),
            (
                r#""rate_bps": 100000000"#,
                r#""rate_bps": 0"#,
                "forward.rate_bps: '0'",
            ),
            (
                r#""target_ns": 5000000"#,
                r#""target_ns": 0"#,
                "reverse.aqm.target_ns: '0' must be positive",
            ),
            (
                r#""loss_bad": 0.5"#,
                r#""loss_bad": -1"#,
                "reverse.loss.loss_bad: '-1'",
            ),
            (
                r#""burst_bytes": 64000"#,
                r#""burst_bytes": 0"#,
                "forward.policer.burst_bytes: '0'",
            ),
            (
                r#""mtu_bytes": 1500"#,
                r#""mtu_bytes": 10"#,
                "mtu_bytes: '10'",
            ),
            (
                r#""share": 0.01"#,
                r#""share": 2"#,
                "forward.reorder.share: '2'",
            ),
            (
                r#""mtu_black_hole_bytes": 1400"#,
                r#""mtu_black_hole_bytes": 60"#,
                "forward.mtu_black_hole_bytes: '60' must be at least 68",
            ),
            (
                r#""right": "tl1a2er""#,
                r#""right": "tl1a2el""#,
                "right: 'tl1a2el'",
            ),
            (
                r#""sample_interval_ns": 10000000"#,
                r#""sample_interval_ns": 0"#,
                "sample_interval_ns: '0'",
            ),
        ];
        for (from, to, expected) in cases {
            let text = EXAMPLE.replace(from, to);
            assert_ne!(text, EXAMPLE, "{from} is not in the example");
            let e = error_of(&text);
            assert!(e.contains(expected), "{e} lacks {expected}");
        }
    }

    #[test]
    fn a_duplicate_endpoint_is_named() {
        let ep = r#"{"ip": "10.201.1.1", "forward_delay_ns": 1, "reverse_delay_ns": 1}"#;
        let text = EXAMPLE.replace(r#""endpoints": ["#, &format!(r#""endpoints": [{ep}, "#));
        let e = error_of(&text);
        assert!(e.contains("endpoints[1].ip: '10.201.1.1'"), "{e}");
    }
}
