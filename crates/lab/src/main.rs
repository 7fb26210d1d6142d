//! `tcpeval-lab`: a real-time link emulator. It relays Ethernet frames between two interfaces
//! through a bottleneck (rate, queue, AQM, random loss) and per-endpoint propagation delays,
//! and measures what it actually delivered.
//!
//! Exit codes: 0 done (outputs written), 2 any error (one line `error: ...` on stderr).
//!
//! Measured on a 2-core machine (veths, sender and receiver in their own namespaces): keep
//! the emulator's CPU (`cpu`) for it alone. Steer every veth's receive work to the other CPU
//! (`rps_cpus`) and pin the endpoints' processes there too; otherwise the kernel's receive
//! processing of the frames we send runs inside our `sendmmsg` (loop stalls of tens of ms)
//! and the sender's transmissions from two CPUs reach us reordered. `loop_gap_ns` and
//! `lateness_ns` in STATS.json show whether a run was faithful.

mod backlog;
mod config;
mod delay;
mod error;
mod frame;
mod induced;
mod link;
mod pool;
mod relay;
mod samples;
mod stats;
mod sys;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};

use crate::config::Config;
use crate::error::{LabError, Result};
use crate::relay::Relay;

#[derive(Parser)]
#[command(
    name = "tcpeval-lab",
    version,
    about = "Real-time link emulator: an AF_PACKET relay between two interfaces that checks itself"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Relay frames until SIGTERM/SIGINT or max_duration_ns, then write the outputs. Prints
    /// `ready START` (CLOCK_REALTIME ns, the `start_realtime_ns` times count from) once relaying.
    Emulate(EmulateArgs),
}

#[derive(Args)]
struct EmulateArgs {
    /// The emulator's JSON config.
    #[arg(long)]
    config: PathBuf,
    /// Where to write the run's statistics (JSON).
    #[arg(long)]
    stats: PathBuf,
    /// Where to write the per-interval link samples (CSV).
    #[arg(long)]
    samples: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    // A bug must still end as one error line and exit code 2, never a backtrace.
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string().replace('\n', " ");
        eprintln!("error: internal: {msg}");
    }));
    let result = std::panic::catch_unwind(|| match cli.command {
        Command::Emulate(args) => emulate(&args),
    });
    match result {
        Ok(Ok(())) => ExitCode::SUCCESS,
        Ok(Err(e)) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
        Err(_) => ExitCode::from(2),
    }
}

fn emulate(args: &EmulateArgs) -> Result<()> {
    let config = Config::load(&args.config)?;
    let stop = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&stop);
    // Installed before pinning, so the handler's thread does not share the busy CPU.
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed)).map_err(|e| {
        LabError::io(
            "installing the SIGTERM/SIGINT handler",
            std::io::Error::other(e),
        )
    })?;
    if let Some(cpu) = config.cpu {
        sys::pin_to_cpu(cpu)
            .map_err(|e| LabError::invalid("cpu", cpu, format!("cannot pin to it: {e}")))?;
    }
    let mut relay = Relay::new(config)?;
    let report = relay.run(&stop, |start_ns| {
        let mut out = std::io::stdout().lock();
        // A closed stdout must not stop the emulator; the outputs say what happened. The start
        // is the run's clock: the caller counts its own times from it.
        let _ = writeln!(out, "ready {start_ns}").and_then(|_| out.flush());
    })?;
    write_json(&args.stats, &report)?;
    write_samples(&args.samples, &relay)
}

fn create(path: &Path) -> Result<BufWriter<File>> {
    let file = File::create(path)
        .map_err(|e| LabError::io(format!("creating '{}'", path.display()), e))?;
    Ok(BufWriter::with_capacity(1 << 20, file))
}

fn write_json(path: &Path, report: &stats::Report) -> Result<()> {
    let mut out = create(path)?;
    let io = |e| LabError::io(format!("writing '{}'", path.display()), e);
    serde_json::to_writer_pretty(&mut out, report).map_err(|e| io(e.into()))?;
    writeln!(out).and_then(|_| out.flush()).map_err(io)
}

fn write_samples(path: &Path, relay: &Relay) -> Result<()> {
    let mut out = create(path)?;
    let io = |e| LabError::io(format!("writing '{}'", path.display()), e);
    relay.samples().write(&mut out).map_err(io)?;
    out.flush().map_err(io)
}
