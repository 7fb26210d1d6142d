//! Every scenario rule has one owner (`tests/scenario_rules.json`). The engine's preconditions
//! are `Scenario::validate`'s, which rejects each naming its field; every other rule is the
//! front end's, and the engine runs a scenario that breaks it rather than checking it again.

mod common;

use serde_json::Value;
use tcpeval_sim::Scenario;

const RULES: &str = include_str!("../../../tests/scenario_rules.json");

fn table() -> Value {
    serde_json::from_str(RULES).expect("the rule table is JSON")
}

/// Each rule `owner` owns, with the base resolved scenario broken as the rule says.
fn broken(owner: &str) -> Vec<(Value, String)> {
    let table = table();
    let base = &table["base"]["resolved"];
    let rules = table["rules"].as_array().expect("a list of rules");
    let owned: Vec<_> = rules.iter().filter(|rule| rule["owner"] == owner).collect();
    assert!(!owned.is_empty(), "{owner} owns no rule");
    owned
        .into_iter()
        .map(|rule| (rule.clone(), changed(base, &rule["resolved"]).to_string()))
        .collect()
}

/// `base` with each `[pointer, value]` change made; a pointer ending in `/-` appends.
fn changed(base: &Value, changes: &Value) -> Value {
    let mut scenario = base.clone();
    for change in changes.as_array().expect("a list of changes") {
        let (pointer, value) = (change[0].as_str().expect("a pointer"), change[1].clone());
        match pointer.strip_suffix("/-") {
            Some(list) => scenario
                .pointer_mut(list)
                .and_then(Value::as_array_mut)
                .expect(pointer)
                .push(value),
            None => *scenario.pointer_mut(pointer).expect(pointer) = value,
        }
    }
    scenario
}

#[test]
fn the_base_scenario_runs() {
    let base = Scenario::from_json(&table()["base"]["resolved"].to_string()).expect("valid");
    common::run_checked(&base);
}

#[test]
fn each_engine_precondition_is_rejected_naming_its_field() {
    for (rule, scenario) in broken("engine") {
        let error = Scenario::from_json(&scenario).expect_err(&rule["rule"].to_string());
        assert_eq!(error.field.to_string(), rule["engine_error"], "{error}");
    }
}

#[test]
fn the_engine_runs_what_only_the_front_end_forbids() {
    for (rule, scenario) in broken("scenario") {
        let scenario = Scenario::from_json(&scenario)
            .unwrap_or_else(|error| panic!("{}: checked by the core too: {error}", rule["rule"]));
        common::run_checked(&scenario);
    }
}

#[test]
fn a_value_the_engine_cannot_hold_names_its_entry_and_key_not_the_json() {
    let changes = serde_json::json!([["/links/0/rate_bps", 1e39]]);
    let scenario = changed(&table()["base"]["resolved"], &changes).to_string();
    let error = Scenario::from_json(&scenario).expect_err("1e39 is no u64");
    assert_eq!(error.field.to_string(), "links[0].rate_bps");
    assert_eq!(
        error.reason,
        "invalid type: floating point `1e+39`, expected u64"
    );
}
