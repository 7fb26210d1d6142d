//! tcpeval-sim: a packet-level simulator of TCP congestion control on dumbbell paths.
//!
//! Contract: a resolved [`Scenario`] in (docs/contract.md), an [`Output`] (summary and
//! time-series columns) out; the same scenario and seed give the same output bit for bit
//! (wall time aside). Pure Rust: no Python, no I/O. Invariants the tests check: every data
//! packet sent is delivered, dropped or still in flight; simultaneous events run in the order
//! they were scheduled.

pub mod cc;
pub mod engine;
pub mod error;
pub mod flow;
pub mod net;
pub mod output;
pub mod packet;
pub mod pcap;
pub mod record;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod tcp;
pub mod time;
pub mod traffic;

pub use error::ScenarioError;
pub use output::Output;
pub use scenario::Scenario;

/// Simulate one scenario.
pub fn run(scenario: &Scenario) -> Result<Output, ScenarioError> {
    Ok(sim::Simulation::new(scenario)?.run())
}

/// Simulate a scenario given as resolved JSON (docs/contract.md).
pub fn run_json(resolved: &str) -> Result<Output, ScenarioError> {
    run(&Scenario::from_json(resolved)?)
}
