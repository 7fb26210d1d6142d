//! Every scenario rule has one owner (`tests/scenario_rules.json`). The engine's preconditions
//! are `Scenario::validate`'s, which rejects each naming its field; every other rule is the
//! front end's, and the engine runs a scenario that breaks it rather than checking it again.

mod common;

use serde_json::Value;
use tcpeval_sim::Scenario;

const RULES: &str = include_str!("../../../tests/scenario_rules.json");

/// (name, scenario) of each rule `owner` owns: the base resolved scenario with the rule's
/// changes made.
fn broken(owner: &str) -> Vec<(String, String)> {
    let table: Value = serde_json::from_str(RULES).expect("the rule table is JSON");
    let base = &table["base"]["resolved"];
    let rules = table["rules"].as_array().expect("a list of rules");
    rules
        .iter()
        .filter(|rule| rule["owner"] == owner)
        .map(|rule| {
            let name = rule["rule"].as_str().expect("a name").to_owned();
            (name, changed(base, &rule["resolved"]).to_string())
        })
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
    let table: Value = serde_json::from_str(RULES).expect("the rule table is JSON");
    let base = Scenario::from_json(&table["base"]["resolved"].to_string()).expect("valid");
    common::run_checked(&base);
}

#[test]
fn each_engine_precondition_is_rejected_naming_its_field() {
    let table: Value = serde_json::from_str(RULES).expect("the rule table is JSON");
    let expected = table["rules"]
        .as_array()
        .expect("a list of rules")
        .iter()
        .filter(|rule| rule["owner"] == "engine")
        .map(|rule| rule["engine_error"].as_str().expect("a field"));
    let cases = broken("engine");
    assert!(!cases.is_empty());
    for ((name, scenario), field) in cases.into_iter().zip(expected) {
        let error = Scenario::from_json(&scenario).expect_err(&name);
        assert_eq!(error.field.to_string(), field, "{name}: {error}");
    }
}

#[test]
fn the_engine_runs_what_only_the_front_end_forbids() {
    let cases = broken("scenario");
    assert!(!cases.is_empty());
    for (name, scenario) in cases {
        let scenario = Scenario::from_json(&scenario)
            .unwrap_or_else(|error| panic!("{name}: checked by the core too: {error}"));
        common::run_checked(&scenario);
    }
}
