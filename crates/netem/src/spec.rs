//! The one description of a link's conditions that the simulator's scenario and the lab's
//! emulator config both carry (docs/contract.md): the AQM, the loss process, the policer,
//! reordering and a path-MTU black hole, as serde tables in base units, each with the
//! constructor of the model it describes. The
//! Python front end writes this dialect once; no backend translates it.
//!
//! `validate` holds the ranges a model needs to mean anything (a probability in [0, 1], a
//! positive interval). The lab checks them, since its binary takes any JSON; the simulator
//! leaves meaning to the front end and checks only what it needs to run.

use serde::Deserialize;

use crate::black_hole::MIN_MTU_BYTES;
use crate::loss::LossModel;
use crate::policer::Policer;
use crate::queue::{
    Aqm, CodelParams, DualPi2Params, FqCodelParams, Limit, PieParams, RedParams, StepThreshold,
};
use crate::reorder::Reorder;
use crate::Frame;

/// A value a model cannot take: the key (relative to the spec), the value and why.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{key}: {value}: {reason}")]
pub struct SpecError {
    pub key: String,
    pub value: String,
    pub reason: String,
}

impl SpecError {
    fn new(key: &str, value: impl ToString, reason: &str) -> Self {
        Self {
            key: key.to_owned(),
            value: value.to_string(),
            reason: reason.to_owned(),
        }
    }
}

/// A queue discipline, tagged by the name `tc` gives it; its fields are the discipline's
/// parameters, in base units, as its module names them.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "name", rename_all = "snake_case", deny_unknown_fields)]
pub enum AqmSpec {
    Droptail {},
    Red(RedParams),
    Codel(CodelParams),
    Pie(PieParams),
    /// DCTCP's marker (Alizadeh et al., SIGCOMM 2010 §3.1): CE on an arrival that finds more
    /// than K queued; exactly one of the thresholds is set.
    Step {
        threshold_pkts: Option<u64>,
        threshold_bytes: Option<u64>,
    },
    FqCodel(FqCodelParams),
    Dualpi2(DualPi2Params),
}

impl AqmSpec {
    /// The discipline, drawing from `seed` where it is random.
    pub fn build<P: Frame>(&self, seed: u64) -> Aqm<P> {
        match *self {
            AqmSpec::Droptail {} => Aqm::drop_tail(),
            AqmSpec::Red(params) => Aqm::red(params, seed),
            AqmSpec::Codel(params) => Aqm::codel(params),
            AqmSpec::Pie(params) => Aqm::pie(params, seed),
            AqmSpec::Step {
                threshold_pkts,
                threshold_bytes,
            } => Aqm::step(match (threshold_pkts, threshold_bytes) {
                (Some(k), _) => StepThreshold::Packets(k),
                (None, k) => StepThreshold::Bytes(k.unwrap_or(0)),
            }),
            AqmSpec::FqCodel(params) => Aqm::fq_codel(params, seed),
            AqmSpec::Dualpi2(params) => Aqm::dualpi2(params, seed),
        }
    }

    /// The ranges each discipline needs to mean anything.
    pub fn validate(&self) -> Result<(), SpecError> {
        match *self {
            AqmSpec::Droptail {} => Ok(()),
            AqmSpec::Red(p) => validate_red(&p),
            AqmSpec::Codel(p) => {
                positive("target_ns", p.target_ns)?;
                positive("interval_ns", p.interval_ns)?;
                optional_positive("ce_threshold_ns", p.ce_threshold_ns)
            }
            AqmSpec::Pie(p) => {
                positive("target_ns", p.target_ns)?;
                positive("tupdate_ns", p.tupdate_ns)?;
                non_negative("alpha", p.alpha)?;
                non_negative("beta", p.beta)?;
                probability("mark_ecn_threshold", p.mark_ecn_threshold)
            }
            AqmSpec::Step {
                threshold_pkts,
                threshold_bytes,
            } => {
                if threshold_pkts.is_some() == threshold_bytes.is_some() {
                    let value = format!("{threshold_pkts:?}/{threshold_bytes:?}");
                    let reason = "exactly one of threshold_pkts and threshold_bytes must be set";
                    return Err(SpecError::new("threshold", value, reason));
                }
                Ok(())
            }
            AqmSpec::FqCodel(p) => validate_fq_codel(&p),
            AqmSpec::Dualpi2(p) => validate_dualpi2(&p),
        }
    }
}

fn validate_red(p: &RedParams) -> Result<(), SpecError> {
    if !(0.0 <= p.min_th_pkts && p.min_th_pkts < p.max_th_pkts) {
        let value = format!(
            "min_th_pkts={}, max_th_pkts={}",
            p.min_th_pkts, p.max_th_pkts
        );
        let reason = "needs 0 <= min_th_pkts < max_th_pkts";
        return Err(SpecError::new("min_th_pkts", value, reason));
    }
    probability("max_p", p.max_p)?;
    if !(p.weight > 0.0 && p.weight <= 1.0) {
        return Err(SpecError::new("weight", p.weight, "must be in (0, 1]"));
    }
    Ok(())
}

fn validate_fq_codel(p: &FqCodelParams) -> Result<(), SpecError> {
    positive("flows", p.flows.into())?;
    positive("quantum_bytes", p.quantum_bytes.into())?;
    positive("target_ns", p.target_ns)?;
    positive("interval_ns", p.interval_ns)?;
    positive("drop_batch_pkts", p.drop_batch_pkts.into())?;
    optional_positive("ce_threshold_ns", p.ce_threshold_ns)
}

fn validate_dualpi2(p: &DualPi2Params) -> Result<(), SpecError> {
    positive("target_ns", p.target_ns)?;
    positive("tupdate_ns", p.tupdate_ns)?;
    non_negative("alpha", p.alpha)?;
    non_negative("beta", p.beta)?;
    // NaN fails too.
    if p.coupling_factor
        .partial_cmp(&1.0)
        .is_none_or(|o| o.is_lt())
    {
        let reason = "must be at least 1";
        return Err(SpecError::new("coupling_factor", p.coupling_factor, reason));
    }
    Ok(())
}

/// A random loss process, tagged by its model.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "model", rename_all = "snake_case", deny_unknown_fields)]
pub enum LossSpec {
    None {},
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

impl LossSpec {
    pub fn is_none(&self) -> bool {
        *self == Self::None {}
    }

    pub fn build(&self, seed: u64) -> LossModel {
        match *self {
            LossSpec::None {} => LossModel::none(),
            LossSpec::Bernoulli { p } => LossModel::bernoulli(p, seed),
            LossSpec::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => LossModel::gilbert_elliott(p, r, loss_good, loss_bad, seed),
        }
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        match *self {
            LossSpec::None {} => Ok(()),
            LossSpec::Bernoulli { p } => probability("p", p),
            LossSpec::GilbertElliott {
                p,
                r,
                loss_good,
                loss_bad,
            } => {
                probability("p", p)?;
                probability("r", r)?;
                probability("loss_good", loss_good)?;
                probability("loss_bad", loss_bad)
            }
        }
    }
}

/// Reordering: a `share` of the packets leaving the link held back `delay_ns` more.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReorderSpec {
    pub share: f64,
    pub delay_ns: u64,
}

impl ReorderSpec {
    pub fn build(&self, seed: u64) -> Reorder {
        Reorder::new(self.share, seed)
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        probability("share", self.share)
    }
}

/// A token-bucket policer: packets beyond `rate_bps` and a burst of `burst_bytes` are dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicerSpec {
    pub rate_bps: u64,
    pub burst_bytes: u64,
}

impl PolicerSpec {
    pub fn build(&self) -> Policer {
        Policer::new(self.rate_bps, self.burst_bytes)
    }

    pub fn validate(&self) -> Result<(), SpecError> {
        positive("rate_bps", self.rate_bps)?;
        positive("burst_bytes", self.burst_bytes)
    }
}

/// A black hole's MTU (`black_hole.rs`), the key `mtu_black_hole_bytes` in both dialects: one
/// no IPv4 hop may have is refused.
pub fn validate_mtu_black_hole(mtu_bytes: Option<u32>) -> Result<(), SpecError> {
    match mtu_bytes {
        Some(n) if n < MIN_MTU_BYTES => Err(SpecError::new(
            "mtu_black_hole_bytes",
            n,
            "must be at least 68 (RFC 791's smallest MTU)",
        )),
        _ => Ok(()),
    }
}

impl Limit {
    /// The limit a link's `queue_pkts` / `queue_bytes` pair sets: exactly one must be given.
    pub fn from_spec(queue_pkts: Option<u64>, queue_bytes: Option<u64>) -> Result<Self, SpecError> {
        match (queue_pkts, queue_bytes) {
            (Some(n), None) => Ok(Limit::Packets(n)),
            (None, Some(n)) => Ok(Limit::Bytes(n)),
            (pkts, bytes) => Err(SpecError::new(
                "queue",
                format!("{pkts:?}/{bytes:?}"),
                "exactly one of queue_pkts and queue_bytes must be set",
            )),
        }
    }
}

impl Limit {
    /// A queue that holds nothing means nothing (the simulator runs it all the same).
    pub fn validate(self) -> Result<(), SpecError> {
        match self {
            Limit::Packets(n) => positive("queue_pkts", n),
            Limit::Bytes(n) => positive("queue_bytes", n),
        }
    }
}

fn optional_positive(key: &str, value: Option<u64>) -> Result<(), SpecError> {
    value.map_or(Ok(()), |v| positive(key, v))
}

fn positive(key: &str, value: u64) -> Result<(), SpecError> {
    if value == 0 {
        return Err(SpecError::new(key, value, "must be positive"));
    }
    Ok(())
}

fn non_negative(key: &str, value: f64) -> Result<(), SpecError> {
    if !(value >= 0.0 && value.is_finite()) {
        return Err(SpecError::new(
            key,
            value,
            "must be a finite number at least 0",
        ));
    }
    Ok(())
}

fn probability(key: &str, p: f64) -> Result<(), SpecError> {
    if !(0.0..=1.0).contains(&p) {
        return Err(SpecError::new(key, p, "must be in [0, 1]"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::queue::{ArrivalAqm, CodelParams};
    use crate::testing::TestPkt;

    fn aqm(json: &str) -> Result<AqmSpec, serde_json::Error> {
        serde_json::from_str(json)
    }

    #[test]
    fn each_discipline_parses_by_its_tc_name_and_builds() {
        let red = aqm(
            r#"{"name": "red", "min_th_pkts": 5, "max_th_pkts": 15, "max_p": 0.1,
            "weight": 0.002, "gentle": true, "ecn": true, "harddrop": false}"#,
        )
        .unwrap();
        assert!(matches!(
            red.build::<TestPkt>(1),
            Aqm::Arrival(ArrivalAqm::Red(r)) if r.params().ecn
        ));
        let codel = aqm(
            r#"{"name": "codel", "target_ns": 5000000, "interval_ns": 100000000,
            "ecn": false, "ce_threshold_ns": null}"#,
        )
        .unwrap();
        assert!(matches!(codel.build::<TestPkt>(1), Aqm::Scheduled(_)));
        assert_eq!(
            aqm(r#"{"name": "droptail"}"#).unwrap(),
            AqmSpec::Droptail {}
        );
    }

    #[test]
    fn unknown_names_and_keys_are_refused() {
        assert!(aqm(r#"{"name": "sfq"}"#).is_err());
        assert!(aqm(r#"{"name": "droptail", "ecn": true}"#).is_err());
        let codel = r#"{"name": "codel", "target_ns": 1, "interval_ns": 1, "ecn": false,
            "ce_threshold_ns": null"#;
        assert!(aqm(&format!("{codel}}}")).is_ok());
        assert!(aqm(&format!(r#"{codel}, "quantum_bytes": 1}}"#)).is_err());
    }

    #[test]
    fn validation_names_the_key_at_fault() {
        let codel = AqmSpec::Codel(CodelParams {
            target_ns: 0,
            ..CodelParams::dropping(1, 1)
        });
        assert_eq!(codel.validate().unwrap_err().key, "target_ns");
        let loss = LossSpec::Bernoulli { p: 1.5 };
        assert_eq!(
            loss.validate().unwrap_err().to_string(),
            "p: 1.5: must be in [0, 1]"
        );
        assert_eq!(Limit::from_spec(Some(3), None), Ok(Limit::Packets(3)));
        assert_eq!(Limit::from_spec(None, Some(0)), Ok(Limit::Bytes(0)));
        assert_eq!(Limit::Bytes(0).validate().unwrap_err().key, "queue_bytes");
        assert_eq!(Limit::from_spec(Some(1), Some(1)).unwrap_err().key, "queue");
        let hole = validate_mtu_black_hole(Some(67)).unwrap_err();
        assert_eq!(
            (hole.key.as_str(), hole.value.as_str()),
            ("mtu_black_hole_bytes", "67")
        );
        assert_eq!(validate_mtu_black_hole(Some(68)), Ok(()));
    }
}
