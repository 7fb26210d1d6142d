//! Run one resolved scenario (the JSON the Python front hands the core, docs/contract.md) with
//! no Python around it, for profilers:
//!
//!     cargo build --profile profiling --example run_json
//!     perf record -g target/profiling/examples/run_json scenario.json
//!
//! Prints events, delivered packets, wall seconds and ns per delivered packet.

use std::process::ExitCode;

use tcpeval_sim::{run_json, Progress};

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: run_json RESOLVED.json");
        return ExitCode::FAILURE;
    };
    let resolved = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) => {
            eprintln!("{path}: {error}");
            return ExitCode::FAILURE;
        }
    };
    match run_json(&resolved, &Progress::default()) {
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
