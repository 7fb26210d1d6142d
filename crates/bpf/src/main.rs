//! `tcpeval-bpf`: registers one of tcpeval's BPF congestion controls in the running kernel and
//! holds it until its standard input closes or it is killed; lists the stacks; says whether
//! this kernel can run them. The lab (python/tcpeval/lab/bpf.py) runs one per stack it needs.

mod error;
mod highspeed;
mod params;
mod register;
mod stacks;
mod support;

use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use serde_json::{json, Map, Value};

use error::{BpfError, Result};

#[derive(Parser)]
#[command(
    name = "tcpeval-bpf",
    about = "tcpeval's congestion controls in the kernel, by BPF"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every BPF stack with the parameters it implements, as JSON.
    List,
    /// Exits 0 if this kernel can run BPF congestion controls, else says what it lacks.
    Check,
    /// Checks a cc table against the stack's parameters and prints it complete, as JSON.
    Resolve {
        /// The scenario's cc table as JSON: `{"name": "htcp", "beta_adaptive": false}`.
        #[arg(long)]
        cc: String,
    },
    /// Registers a stack, prints `{"name", "stack", "params"}` as one JSON line, and keeps it
    /// registered until standard input closes (or the process dies); then prints
    /// `{"programs": {name: {"calls", "run_ns"}}}`, what the kernel counted of each program.
    Hold {
        /// The name it is registered under, unique on this host (≤ 15 of a–z, 0–9, '_').
        #[arg(long)]
        name: String,
        /// The scenario's cc table as JSON: `{"name": "htcp", "beta_adaptive": false}`.
        #[arg(long)]
        cc: String,
    },
}

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("tcpeval-bpf: {error}");
            ExitCode::from(2)
        }
    }
}

fn run(command: Command) -> Result<()> {
    match command {
        Command::List => print(&list()),
        Command::Check => support::check(),
        Command::Resolve { cc } => {
            let (stack, resolved) = resolve(&cc)?;
            print(&json!({"stack": stack.name, "params": resolved.table}))
        }
        Command::Hold { name, cc } => hold(&name, &cc),
    }
}

fn list() -> Value {
    stacks::STACKS
        .iter()
        .map(|s| {
            let params: Vec<_> = s.params.iter().map(|p| p.name).collect();
            json!({"name": s.name, "params": params, "per_packet_echo": s.per_packet_echo})
        })
        .collect()
}

fn resolve(cc: &str) -> Result<(&'static stacks::Stack, params::Resolved)> {
    let table: Map<String, Value> = serde_json::from_str(cc).map_err(|e| BpfError::Param {
        field: "table".into(),
        value: cc.to_owned(),
        reason: format!("is not a JSON object ({e})"),
    })?;
    let asked = table
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let stack = stacks::find(asked).ok_or_else(|| BpfError::UnknownStack {
        name: asked.to_owned(),
        known: stacks::names(),
    })?;
    Ok((stack, params::resolve(stack, &table)?))
}

fn hold(name: &str, cc: &str) -> Result<()> {
    let (stack, resolved) = resolve(cc)?;
    support::check()?;
    let registration = register::register(stack, name, &resolved.words)?;
    print(&json!({"name": registration.name, "stack": stack.name, "params": resolved.table}))?;
    // Held until the caller closes our input; a signal ends the process, which unregisters too.
    let mut rest = Vec::new();
    let _ = std::io::stdin().read_to_end(&mut rest);
    print(&json!({"programs": registration.program_stats()}))
}

fn print(value: &Value) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{value}")
        .and_then(|()| out.flush())
        .map_err(|source| BpfError::Io {
            what: "writing to standard output",
            source,
        })
}
