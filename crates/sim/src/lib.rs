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
pub mod induced_drops;
pub mod net;
pub mod output;
pub mod packet;
pub mod pcap;
mod prefetch;
pub mod progress;
pub mod record;
pub mod scenario;
pub mod sim;
pub mod summary;
pub mod tcp;
pub mod time;
pub mod traffic;

pub use error::{RunError, ScenarioError};
pub use output::Output;
pub use progress::Progress;
pub use scenario::Scenario;

/// Simulate one scenario.
pub fn run(scenario: Scenario) -> Result<Output, RunError> {
    run_with(scenario, &Progress::default())
}

/// Simulate one scenario, showing its progress in `progress`, which can also stop it.
pub fn run_with(scenario: Scenario, progress: &Progress) -> Result<Output, RunError> {
    sim::Simulation::new(scenario)?.run(progress)
}

/// Simulate a scenario given as resolved JSON (docs/contract.md).
pub fn run_json(resolved: &str, progress: &Progress) -> Result<Output, RunError> {
    run_with(Scenario::from_json(resolved)?, progress)
}
