//! Run one resolved scenario (the JSON the Python front hands the core, docs/contract.md) with
//! no Python around it, for profilers:
//!
//!     cargo build --profile profiling --example run_json
//!     perf record -g target/profiling/examples/run_json scenario.json
//!
//! Prints events, delivered packets, wall seconds and ns per delivered packet.

use std::process::ExitCode;

use tcpeval_sim::{run_with, Progress, RunError, Scenario};

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_json RESOLVED.json");
        return ExitCode::FAILURE;
    };
    let scenario = match std::fs::read_to_string(&path) {
        // Dropped once parsed: the run does not read the text (63 MB for 100,000 flows).
        Ok(text) => Scenario::from_json(&text),
        Err(error) => {
            eprintln!("{path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    match scenario
        .map_err(RunError::from)
        .and_then(|scenario| run_with(scenario, &Progress::default()))
    {
        Ok(output) => {
            let sim = &output.summary.sim;
            let ns_per_pkt = sim.wall_seconds * 1e9 / sim.packets_delivered.max(1) as f64;
            println!(
                "events {} delivered {} wall {:.2} s, {ns_per_pkt:.0} ns per delivered packet",
                sim.events, sim.packets_delivered, sim.wall_seconds
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("{error}");
            ExitCode::FAILURE
        }
    }
}
