//! A `cc` table turned into the words of a BPF stack's parameter block.
//!
//! The simulator's registry owns every stack's parameters and their defaults: a table is
//! checked by the simulator's own rules and completed with its defaults, so one scenario file
//! means one thing in both worlds. Each parameter the BPF stack implements becomes one __u64
//! (`bpf/common.h`); one it does not implement may only keep its default.

use serde_json::{Map, Value};
use tcpeval_sim::cc::{registry, Init};

use crate::error::{BpfError, Result};
use crate::stacks::{Kind, Stack};

/// Fixed-point bits of a fraction; `FRACTION_SHIFT` in `bpf/common.h`.
pub const FRACTION_SHIFT: u32 = 20;
/// The word of an optional parameter left unset; `PARAM_ABSENT` in `bpf/common.h`.
pub const ABSENT: u64 = u64::MAX;

/// The parameter block's words and the complete table they came from.
#[derive(Debug, PartialEq)]
pub struct Resolved {
    pub words: Vec<u64>,
    pub table: Map<String, Value>,
}

/// `cc` is a scenario's table (`{"name": "htcp", "beta_adaptive": false}`).
pub fn resolve(stack: &Stack, cc: &Map<String, Value>) -> Result<Resolved> {
    let algorithm = registry::find(stack.name).expect("every BPF stack is a simulator stack");
    // The simulator's builder is the one judge of a parameter's range.
    let init = Init {
        mss_bytes: 1448,
        initial_cwnd_pkts: 10.0,
        seed: 0,
    };
    if let Err((_, reason)) = registry::build(cc, &init) {
        return Err(BpfError::Param {
            field: stack.name.to_owned(),
            value: Value::Object(cc.clone()).to_string(),
            reason,
        });
    }
    let defaults = match (algorithm.defaults)() {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let mut table = defaults.clone();
    table.extend(
        cc.iter()
            .filter(|(k, _)| *k != "name")
            .map(|(k, v)| (k.clone(), v.clone())),
    );
    for (field, value) in &table {
        if !stack.params.iter().any(|p| p.name == field) && defaults.get(field) != Some(value) {
            return Err(BpfError::Param {
                field: field.clone(),
                value: value.to_string(),
                reason: format!(
                    "is not implemented by the BPF {}: it runs with the default, {}",
                    stack.name, defaults[field]
                ),
            });
        }
    }
    let mut words = stack
        .params
        .iter()
        .filter(|p| p.kind != Kind::Derived)
        .map(|p| word(p.name, p.kind, &table[p.name]))
        .collect::<Result<Vec<_>>>()?;
    if let Some(derive) = stack.derived {
        words.extend(derive(&table)?);
    }
    Ok(Resolved { words, table })
}

fn word(field: &str, kind: Kind, value: &Value) -> Result<u64> {
    let refuse = |reason: &str| BpfError::Param {
        field: field.to_owned(),
        value: value.to_string(),
        reason: reason.to_owned(),
    };
    match (kind, value) {
        (Kind::Flag, Value::Bool(flag)) => Ok(u64::from(*flag)),
        (Kind::Count, Value::Number(n)) => {
            let x = n.as_f64().unwrap_or(-1.0);
            if x < 0.0 || x.fract() != 0.0 || x > u32::MAX as f64 {
                return Err(refuse(
                    "must be a whole number of at most 2^32 in the kernel",
                ));
            }
            Ok(x as u64)
        }
        (Kind::Fraction, Value::Number(n)) => fraction(field, n.as_f64().unwrap_or(-1.0)),
        (Kind::OptionalCount, Value::Null) => Ok(ABSENT),
        (Kind::OptionalCount, _) => word(field, Kind::Count, value),
        _ => Err(refuse("has the wrong type")),
    }
}

/// `x` in the kernel's fixed point; `field` names what it came from if it does not fit.
pub fn fraction(field: &str, x: f64) -> Result<u64> {
    let scaled = (x * f64::from(1u32 << FRACTION_SHIFT)).round();
    if !(0.0..=u32::MAX as f64).contains(&scaled) {
        return Err(BpfError::Param {
            field: field.to_owned(),
            value: x.to_string(),
            reason: "is out of the kernel's fixed-point range".to_owned(),
        });
    }
    Ok(scaled as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stacks;

    fn table(text: &str) -> Map<String, Value> {
        serde_json::from_str(text).unwrap()
    }

    #[test]
    fn defaults_come_from_the_simulator_and_fractions_are_fixed_point() {
        let aimd = stacks::find("aimd").unwrap();
        let resolved = resolve(aimd, &table(r#"{"name": "aimd", "b": 0.125}"#)).unwrap();
        assert_eq!(resolved.words, vec![1 << 20, 1 << 17, 1, 2]);
        assert_eq!(resolved.table["a"], 1.0);
    }

    #[test]
    fn an_optional_whole_number_is_absent_when_null() {
        let bic = stacks::find("bic").unwrap();
        let unset = resolve(bic, &table(r#"{"name": "bic"}"#)).unwrap();
        assert_eq!(unset.words[5], ABSENT);
        assert_eq!(unset.table["initial_ssthresh"], Value::Null);
        let set = resolve(bic, &table(r#"{"name": "bic", "initial_ssthresh": 100}"#)).unwrap();
        assert_eq!(set.words[5], 100);
        let error = resolve(bic, &table(r#"{"name": "bic", "initial_ssthresh": 100.5}"#));
        assert!(error.unwrap_err().to_string().contains("whole"));
    }

    #[test]
    fn the_simulators_rules_refuse_a_value_out_of_range() {
        let aimd = stacks::find("aimd").unwrap();
        let error = resolve(aimd, &table(r#"{"name": "aimd", "b": 1.5}"#)).unwrap_err();
        assert!(error.to_string().contains("b"), "{error}");
    }

    #[test]
    fn scalables_window_is_whole_and_highspeeds_rows_follow_its_flag() {
        let scalable = stacks::find("scalable").unwrap();
        let resolved = resolve(scalable, &table(r#"{"name": "scalable"}"#)).unwrap();
        assert_eq!(resolved.words, vec![10_486, 1 << 17, 100]); // 0.01 and 1/8 × 2^20
        let highspeed = stacks::find("highspeed").unwrap();
        let cc = r#"{"name": "highspeed", "per_ack": false, "high_decrease": 0.25}"#;
        let words = resolve(highspeed, &table(cc)).unwrap().words;
        assert_eq!(words.len(), 1 + 3 * crate::highspeed::ROWS);
        assert_eq!(words[0], 0);
        // The last row: High_Window, where b is High_Decrease.
        assert_eq!(words[words.len() - 3..][0], 83_000);
        assert_eq!(words[words.len() - 1], 1 << 18);
    }

    #[test]
    fn every_stacks_parameters_are_the_simulators() {
        for stack in stacks::STACKS {
            let defaults = (registry::find(stack.name).unwrap().defaults)();
            for param in stack.params {
                assert!(
                    defaults.get(param.name).is_some(),
                    "{}.{}",
                    stack.name,
                    param.name
                );
            }
        }
    }

    #[test]
    fn every_stacks_words_fill_its_objects_parameter_block() {
        for stack in stacks::STACKS {
            let resolved = resolve(stack, &table(&format!(r#"{{"name": "{}"}}"#, stack.name)));
            let words = resolved.unwrap().words.len();
            let mut open = libbpf_rs::ObjectBuilder::default()
                .open_memory(stack.object)
                .unwrap();
            let mut block = open
                .maps_mut()
                .find(|m| m.name().to_string_lossy().ends_with(".rodata.params"))
                .unwrap();
            let bytes = block.initial_value_mut().unwrap().len();
            assert_eq!(bytes, 8 * words, "{}", stack.name);
        }
    }
}
