//! The emulator's JSON config: two interfaces, a bottleneck per direction and the endpoints'
//! propagation delays. Parsing rejects unknown fields; `validate` rejects values the emulator
//! cannot honour, naming the field by its JSON path.

use std::net::Ipv4Addr;
use std::path::Path;

use serde::Deserialize;
use tcpeval_netem::loss::LossModel;
use tcpeval_netem::policer::Policer;
use tcpeval_netem::queue::{Aqm, Limit, RedParams};
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

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DirectionConfig {
    /// `None`: no rate limit, hence no serialisation delay and no queue.
    pub rate_bps: Option<u64>,
    pub limit: LimitConfig,
    pub aqm: AqmConfig,
    pub loss: LossConfig,
    /// A token bucket in front of the queue (after random loss); `None`: no policer.
    #[serde(default)]
    pub policer: Option<PolicerConfig>,
    pub seed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicerConfig {
    pub rate_bps: u64,
    pub burst_bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LimitConfig {
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmConfig {
    Droptail,
    Red(RedConfig),
    Codel(CodelConfig),
}

/// `RedParams`, field for field (thresholds in packets).
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RedConfig {
    pub min_th_pkts: f64,
    pub max_th_pkts: f64,
    pub max_p: f64,
    pub weight: f64,
    pub gentle: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelConfig {
    pub target_ns: u64,
    pub interval_ns: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum LossConfig {
    None,
    Bernoulli(BernoulliConfig),
    GilbertElliott(GilbertElliottConfig),
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BernoulliConfig {
    pub p: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GilbertElliottConfig {
    pub p: f64,
    pub r: f64,
    pub loss_good: f64,
    pub loss_bad: f64,
}

#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Endpoint {
    pub ip: Ipv4Addr,
    pub forward_delay_ns: u64,
    pub reverse_delay_ns: u64,
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
    fn validate(&self, dir: &str) -> Result<()> {
        if let Some(rate) = self.rate_bps {
            positive(&format!("{dir}.rate_bps"), rate)?;
        }
        match self.limit {
            LimitConfig::Packets(n) => positive(&format!("{dir}.limit.packets"), n)?,
            LimitConfig::Bytes(n) => positive(&format!("{dir}.limit.bytes"), n)?,
        }
        if let Some(p) = self.policer {
            positive(&format!("{dir}.policer.rate_bps"), p.rate_bps)?;
            positive(&format!("{dir}.policer.burst_bytes"), p.burst_bytes)?;
        }
        self.validate_aqm(dir)?;
        self.validate_loss(dir)
    }

    fn validate_aqm(&self, dir: &str) -> Result<()> {
        match self.aqm {
            AqmConfig::Droptail => Ok(()),
            AqmConfig::Red(r) => {
                if !(0.0 <= r.min_th_pkts && r.min_th_pkts < r.max_th_pkts) {
                    return Err(LabError::invalid(
                        format!("{dir}.aqm.red.min_th_pkts"),
                        format!(
                            "min_th_pkts={}, max_th_pkts={}",
                            r.min_th_pkts, r.max_th_pkts
                        ),
                        "needs 0 <= min_th_pkts < max_th_pkts",
                    ));
                }
                probability(&format!("{dir}.aqm.red.max_p"), r.max_p)?;
                if !(r.weight > 0.0 && r.weight <= 1.0) {
                    let field = format!("{dir}.aqm.red.weight");
                    return Err(LabError::invalid(field, r.weight, "must be in (0, 1]"));
                }
                Ok(())
            }
            AqmConfig::Codel(c) => {
                positive(&format!("{dir}.aqm.codel.target_ns"), c.target_ns)?;
                positive(&format!("{dir}.aqm.codel.interval_ns"), c.interval_ns)
            }
        }
    }

    fn validate_loss(&self, dir: &str) -> Result<()> {
        match self.loss {
            LossConfig::None => Ok(()),
            LossConfig::Bernoulli(b) => probability(&format!("{dir}.loss.bernoulli.p"), b.p),
            LossConfig::GilbertElliott(g) => {
                let field = |name: &str| format!("{dir}.loss.gilbert_elliott.{name}");
                probability(&field("p"), g.p)?;
                probability(&field("r"), g.r)?;
                probability(&field("loss_good"), g.loss_good)?;
                probability(&field("loss_bad"), g.loss_bad)
            }
        }
    }

    pub fn limit(&self) -> Limit {
        match self.limit {
            LimitConfig::Packets(n) => Limit::Packets(n),
            LimitConfig::Bytes(n) => Limit::Bytes(n),
        }
    }

    /// The limit in packets of at least `min_pkt_bytes` (for sizing buffers).
    pub fn limit_pkts(&self, min_pkt_bytes: u64) -> u64 {
        match self.limit {
            LimitConfig::Packets(n) => n,
            LimitConfig::Bytes(n) => n.div_ceil(min_pkt_bytes.max(1)),
        }
    }

    /// RED draws from its own stream, seeded apart from the loss process's.
    pub fn aqm<P: Frame>(&self) -> Aqm<P> {
        match self.aqm {
            AqmConfig::Droptail => Aqm::DropTail,
            AqmConfig::Red(r) => Aqm::red(
                RedParams {
                    min_th_pkts: r.min_th_pkts,
                    max_th_pkts: r.max_th_pkts,
                    max_p: r.max_p,
                    weight: r.weight,
                    gentle: r.gentle,
                },
                self.seed ^ 0x5245_4400_0000_0000,
            ),
            AqmConfig::Codel(c) => Aqm::codel(c.target_ns, c.interval_ns),
        }
    }

    pub fn policer(&self) -> Option<Policer> {
        self.policer
            .map(|p| Policer::new(p.rate_bps, p.burst_bytes))
    }

    pub fn loss(&self) -> LossModel {
        match self.loss {
            LossConfig::None => LossModel::none(),
            LossConfig::Bernoulli(b) => LossModel::bernoulli(b.p, self.seed),
            LossConfig::GilbertElliott(g) => {
                LossModel::gilbert_elliott(g.p, g.r, g.loss_good, g.loss_bad, self.seed)
            }
        }
    }
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

fn probability(field: &str, p: f64) -> Result<()> {
    if !(0.0..=1.0).contains(&p) {
        return Err(LabError::invalid(
            field,
            p,
            "must be a probability in [0, 1]",
        ));
    }
    Ok(())
}

#[cfg(test)]
pub mod tests {
    use super::*;

    pub const EXAMPLE: &str = r#"{
        "left": "tl1a2el", "right": "tl1a2er", "cpu": 1,
        "max_duration_ns": 130000000000, "sample_interval_ns": 10000000, "mtu_bytes": 1500,
        "forward": {"rate_bps": 100000000, "limit": {"packets": 100}, "aqm": "droptail",
                    "loss": {"bernoulli": {"p": 0.001}},
                    "policer": {"rate_bps": 20000000, "burst_bytes": 64000}, "seed": 1},
        "reverse": {"rate_bps": null, "limit": {"bytes": 150000},
                    "aqm": {"codel": {"target_ns": 5000000, "interval_ns": 100000000}},
                    "loss": {"gilbert_elliott": {"p": 0.01, "r": 0.3, "loss_good": 0.0, "loss_bad": 0.5}},
                    "seed": 2},
        "endpoints": [{"ip": "10.201.1.1", "forward_delay_ns": 30000000, "reverse_delay_ns": 30000000}]
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
        assert_eq!(c.forward.policer(), Some(Policer::new(20_000_000, 64_000)));
        assert_eq!(c.reverse.policer, None);
    }

    #[test]
    fn red_parses_with_its_params() {
        let red = r#"{"red": {"min_th_pkts": 5, "max_th_pkts": 15, "max_p": 0.1, "weight": 0.002, "gentle": true}}"#;
        let text = EXAMPLE.replace(r#""aqm": "droptail""#, &format!(r#""aqm": {red}"#));
        let c = Config::parse(&text).unwrap();
        assert!(matches!(c.forward.aqm, AqmConfig::Red(r) if r.max_th_pkts == 15.0));
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
    }

    #[test]
    fn bad_values_name_the_field_path_and_value() {
        let cases = [
            (
                r#""p": 0.001"#,
                r#""p": 1.5"#,
                "forward.loss.bernoulli.p: '1.5'",
            ),
            (
                r#""packets": 100"#,
                r#""packets": 0"#,
                "forward.limit.packets: '0'",
            ),
            (
                r#""rate_bps": 100000000"#,
                r#""rate_bps": 0"#,
                "forward.rate_bps: '0'",
            ),
            (
                r#""target_ns": 5000000"#,
                r#""target_ns": 0"#,
                "reverse.aqm.codel.target_ns: '0'",
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
            let e = error_of(&EXAMPLE.replace(from, to));
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
