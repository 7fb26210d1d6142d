//! `tcpeval-probe`: kernel TCP/UDP endpoints for measuring real paths (docs/probe.md).
//!
//! Exit codes: 0 done, 1 the run failed (network, server), 2 bad input (a flag, a refused
//! request), 130 interrupted (what was measured is still written).

mod admission;
mod auth;
mod backoff;
mod cbr;
mod client;
mod copy;
mod copy_server;
mod cpu;
mod cpu_cgroup;
mod datapath;
mod disk;
mod disk_remote;
mod error;
mod escape;
mod housekeeping;
mod interval;
mod iperf3;
mod log;
mod names;
mod other_processes;
mod partial;
mod proto;
mod report;
mod resume;
mod root;
mod rr;
mod sample;
mod server;
mod sockopt;
mod source;
mod stale;
mod stop_watch;
mod sys;
#[cfg(test)]
mod test_sockets;
mod transfer;
mod udp;
mod verify;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};

use crate::auth::Secret;
use crate::error::{ProbeError, Result};
use crate::proto::{RrRequest, TcpRequest, UdpRequest};

#[derive(Parser)]
#[command(
    name = "tcpeval-probe",
    version,
    about = "Measure real paths: TCP with TCP_INFO histories, UDP trains, request-response"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server (authenticated, bounded).
    Serve(ServeArgs),
    /// Memory-to-memory TCP over 1–128 parallel streams.
    Tcp(TcpArgs),
    /// UDP trains, one per packet spacing.
    Udp(UdpArgs),
    /// Request-response exchanges on one connection.
    Rr(RrArgs),
    /// A file to or from the server's --root over N streams, verified by SHA-256 on disk.
    Copy(CopyArgs),
    /// Constant-bit-rate UDP to a `cbr-sink` (no server, no control connection).
    Cbr(CbrArgs),
    /// Receive a `cbr` sender's datagrams and count them; never replies.
    CbrSink(CbrSinkArgs),
    /// Sequential write and read rates of a file system, page cache dropped or bypassed.
    Disk(DiskArgs),
}

#[derive(Args)]
struct ServeArgs {
    #[arg(long, default_value = "0.0.0.0:5301")]
    listen: SocketAddr,
    /// File holding the shared secret (at least 16 bytes, not world-readable).
    #[arg(long)]
    secret_file: PathBuf,
    #[arg(long, default_value_t = 128)]
    max_streams: u32,
    #[arg(long, default_value_t = 300)]
    max_duration_s: u64,
    #[arg(long, default_value_t = 1 << 40)]
    max_bytes: u64,
    /// Authenticated clients served at once.
    #[arg(long, default_value_t = 4)]
    max_clients: usize,
    /// Connections not yet authenticated, in all; when full, a newcomer displaces the oldest
    /// of the network holding the most.
    #[arg(long, default_value_t = 64)]
    max_handshakes: usize,
    /// Connections not yet authenticated from one address.
    #[arg(long, default_value_t = 4)]
    max_handshakes_per_address: usize,
    /// Connections not yet authenticated from one /24 (IPv4) or /64 (IPv6).
    #[arg(long, default_value_t = 16)]
    max_handshakes_per_prefix: usize,
    /// A client must authenticate within this time.
    #[arg(long, default_value_t = 2000)]
    handshake_timeout_ms: u64,
    /// A client silent this long (control or data) is dropped.
    #[arg(long, default_value_t = 10000)]
    idle_timeout_ms: u64,
    #[arg(long, default_value_t = 1_000_000)]
    max_udp_datagrams: u64,
    /// The memory one UDP test's arrivals may take (24 bytes each, duplicates included).
    #[arg(long, default_value_t = 64 << 20)]
    max_udp_memory_bytes: u64,
    #[arg(long, default_value_t = 100_000)]
    max_rr_count: u32,
    #[arg(long, default_value_t = 1 << 30)]
    max_response_bytes: u64,
    /// TCP_INFO samples a reverse test may keep in the server's memory.
    #[arg(long, default_value_t = 1_000_000)]
    max_samples: u64,
    /// The only directory copies may read and write; without it, copies are rejected.
    #[arg(long)]
    root: Option<PathBuf>,
    /// Partial files under --root that nothing has written for this long are removed (at
    /// start, then periodically).
    #[arg(long, default_value_t = 86_400)]
    stale_partial_s: u64,
}

#[derive(Args)]
struct Common {
    /// Server as HOST:PORT.
    server: String,
    /// File with the shared secret (not needed against an iperf3 server).
    #[arg(long)]
    secret_file: Option<PathBuf>,
    /// Directory for the results.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct TcpArgs {
    #[command(flatten)]
    common: Common,
    #[arg(long, default_value_t = 1)]
    streams: u32,
    #[arg(long)]
    cc: Option<String>,
    /// SO_SNDBUF and SO_RCVBUF on both ends (disables autotuning).
    #[arg(long)]
    window_bytes: Option<u64>,
    #[arg(long)]
    mss_bytes: Option<u32>,
    /// SO_MAX_PACING_RATE of each sending socket, bits per second.
    #[arg(long)]
    pacing_bps: Option<u64>,
    #[arg(long, conflicts_with = "bytes")]
    duration_ms: Option<u64>,
    /// Total bytes to send, shared evenly by the streams.
    #[arg(long)]
    bytes: Option<u64>,
    /// The server sends, the client receives.
    #[arg(long)]
    reverse: bool,
    #[arg(long, default_value_t = 10)]
    sample_interval_ms: u64,
    /// Print elapsed time and per-stream rates to stderr once a second.
    #[arg(long)]
    progress: bool,
    /// Print a machine-readable report (`interval {json}`) to stderr this often (0: none).
    #[arg(long, default_value_t = 0)]
    interval_ms: u64,
    /// Keep the sockets open this long after the final sample (to compare with `ss -ti`).
    #[arg(long, default_value_t = 0)]
    hold_open_ms: u64,
    /// Do not sample TCP_INFO (to measure what sampling costs; bench/bench_probe.py).
    #[arg(long)]
    no_samples: bool,
    /// The server is a stock `iperf3 -s` (no secret; --secret-file is ignored).
    #[arg(long)]
    iperf3: bool,
}

#[derive(Args)]
struct UdpArgs {
    #[command(flatten)]
    common: Common,
    /// UDP payload per datagram.
    #[arg(long, default_value_t = 1472)]
    size_bytes: u32,
    #[arg(long, default_value_t = 1000)]
    count: u32,
    /// Comma-separated spacings between datagrams, one train each.
    #[arg(long, value_delimiter = ',', required = true)]
    spacings_ns: Vec<u64>,
}

#[derive(Args)]
struct RrArgs {
    #[command(flatten)]
    common: Common,
    #[arg(long, default_value_t = 64)]
    request_bytes: u32,
    #[arg(long, default_value_t = 1 << 20)]
    response_bytes: u64,
    #[arg(long, default_value_t = 100)]
    count: u32,
    /// Comma-separated think times before each request, used in turn.
    #[arg(long, value_delimiter = ',', default_value = "0")]
    think_ns: Vec<u64>,
    #[arg(long)]
    cc: Option<String>,
}

#[derive(Args)]
struct CopyArgs {
    #[command(flatten)]
    common: Common,
    /// The local file: sent, or (with --get) written.
    #[arg(long)]
    local: PathBuf,
    /// The file's name under the server's root.
    #[arg(long)]
    remote: String,
    /// Copy from the server (default: to it).
    #[arg(long)]
    get: bool,
    #[arg(long, default_value_t = 1)]
    streams: u32,
    /// Replace a file that exists at the destination.
    #[arg(long)]
    overwrite: bool,
    /// Continue an interrupted copy from what its partial file holds.
    #[arg(long)]
    resume: bool,
    /// After the copy, measure both ends' disks with a file this large (0: skip).
    #[arg(long, default_value_t = 0)]
    disk_bytes: u64,
    /// Print elapsed time and per-stream rates to stderr once a second.
    #[arg(long)]
    progress: bool,
}

#[derive(Args)]
struct CbrArgs {
    /// The sink as IP:PORT.
    #[arg(long)]
    to: SocketAddr,
    /// Counting whole IP packets (payload + UDP/IP headers), 1000..=10000000000.
    #[arg(long)]
    rate_bps: u64,
    /// UDP payload per datagram, 28..=65507.
    #[arg(long, default_value_t = 1472)]
    size_bytes: u32,
    #[arg(long)]
    duration_ms: u64,
    /// JSON report file.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct CbrSinkArgs {
    /// IP:PORT to bind (port 0: any; the port is printed).
    #[arg(long)]
    listen: SocketAddr,
    /// Stop this long after the first datagram (or at Ctrl-C / SIGTERM).
    #[arg(long)]
    duration_ms: u64,
    /// JSON report file.
    #[arg(long)]
    out: PathBuf,
}

#[derive(Args)]
struct DiskArgs {
    /// A directory on the file system to measure (a scratch file is made and removed there).
    #[arg(long, required_unless_present = "server", conflicts_with = "server")]
    path: Option<PathBuf>,
    /// Measure the server's --root instead, as HOST:PORT.
    #[arg(long, requires = "secret_file")]
    server: Option<String>,
    /// File with the shared secret (with --server).
    #[arg(long)]
    secret_file: Option<PathBuf>,
    #[arg(long, default_value_t = 4 << 30)]
    size_bytes: u64,
    /// Comma-separated block sizes, one pass each.
    #[arg(long, value_delimiter = ',', default_value = "1048576")]
    block_bytes: Vec<u64>,
    /// Also run each block size with O_DIRECT.
    #[arg(long)]
    direct: bool,
    /// JSON report file.
    #[arg(long)]
    out: PathBuf,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let interrupted = Arc::new(AtomicBool::new(false));
    // Ctrl-C or SIGTERM stops a client's run; it still writes what it measured (exit code
    // 130). The server keeps the default: either ends it.
    if !matches!(cli.command, Command::Serve(_)) {
        let flag = Arc::clone(&interrupted);
        let _ = ctrlc::set_handler(move || flag.store(true, Ordering::SeqCst));
    }
    match run(cli.command, &interrupted) {
        Ok(()) if interrupted.load(Ordering::SeqCst) => ExitCode::from(130),
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(exit_code(&e))
        }
    }
}

fn exit_code(e: &ProbeError) -> u8 {
    match e {
        ProbeError::Invalid { .. }
        | ProbeError::UnknownCc { .. }
        | ProbeError::Secret { .. }
        | ProbeError::Rejected { .. } => 2,
        _ => 1,
    }
}

fn run(command: Command, interrupted: &Arc<AtomicBool>) -> Result<()> {
    match command {
        Command::Serve(args) => serve(args),
        Command::Tcp(args) => tcp(args, interrupted),
        Command::Udp(args) => {
            let options = udp::UdpOptions {
                server: args.common.server,
                secret: secret(args.common.secret_file.as_deref())?,
                request: UdpRequest {
                    size_bytes: args.size_bytes,
                    count: args.count,
                    spacings_ns: args.spacings_ns,
                },
                out: args.common.out,
            };
            udp::run(&options, interrupted).map(|_| ())
        }
        Command::Rr(args) => {
            let options = rr::RrOptions {
                server: args.common.server,
                secret: secret(args.common.secret_file.as_deref())?,
                request: RrRequest {
                    request_bytes: args.request_bytes,
                    response_bytes: args.response_bytes,
                    count: args.count,
                    cc: args.cc,
                },
                think_ns: args.think_ns,
                out: args.common.out,
            };
            rr::run(&options, interrupted).map(|_| ())
        }
        Command::Copy(args) => {
            if !(1..=1024).contains(&args.streams) {
                return Err(ProbeError::invalid(
                    "streams",
                    args.streams,
                    "must be 1..=1024",
                ));
            }
            let options = copy::CopyOptions {
                server: args.common.server,
                secret: secret(args.common.secret_file.as_deref())?,
                local: args.local,
                remote: args.remote,
                get: args.get,
                streams: args.streams,
                overwrite: args.overwrite,
                resume: args.resume,
                out: args.common.out,
                progress: args.progress,
                disk_bytes: args.disk_bytes,
            };
            copy::run(&options, interrupted).map(|_| ())
        }
        Command::Cbr(args) => {
            let options = cbr::CbrOptions {
                to: args.to,
                rate_bps: args.rate_bps,
                size_bytes: args.size_bytes,
                duration: Duration::from_millis(args.duration_ms),
                out: args.out,
            };
            cbr::run_sender(&options, interrupted).map(|_| ())
        }
        Command::CbrSink(args) => {
            let options = cbr::SinkOptions {
                listen: args.listen,
                duration: Duration::from_millis(args.duration_ms),
                out: args.out,
            };
            cbr::run_sink(&options, interrupted).map(|_| ())
        }
        Command::Disk(args) => {
            report::file_name(&args.out)?;
            let request = disk::DiskRequest {
                size_bytes: args.size_bytes,
                block_bytes: args.block_bytes,
                direct: args.direct,
            };
            let measured = match (&args.path, &args.server) {
                (Some(path), _) => disk::measure(path, &request, interrupted)?,
                (None, Some(server)) => {
                    let secret = secret(args.secret_file.as_deref())?;
                    disk_remote::run(server, &secret, &request)?
                }
                (None, None) => return Err(ProbeError::invalid("path", "", "is required")),
            };
            report::write_json_file(&args.out, &measured)
        }
    }
}

fn secret(path: Option<&std::path::Path>) -> Result<Secret> {
    let path = path.ok_or_else(|| ProbeError::invalid("secret_file", "", "is required"))?;
    Secret::from_file(path)
}

fn serve(args: ServeArgs) -> Result<()> {
    let secret = Secret::from_file(&args.secret_file)?;
    let limits = server::Limits {
        max_streams: args.max_streams,
        max_duration: Duration::from_secs(args.max_duration_s),
        max_bytes: args.max_bytes,
        max_clients: args.max_clients.max(1),
        max_handshakes: args.max_handshakes.max(1),
        max_handshakes_per_address: args.max_handshakes_per_address.max(1),
        max_handshakes_per_prefix: args.max_handshakes_per_prefix.max(1),
        handshake_timeout: Duration::from_millis(args.handshake_timeout_ms),
        idle_timeout: Duration::from_millis(args.idle_timeout_ms),
        max_udp_datagrams: args.max_udp_datagrams,
        max_udp_memory_bytes: args.max_udp_memory_bytes,
        max_rr_count: args.max_rr_count,
        max_response_bytes: args.max_response_bytes,
        max_samples: args.max_samples,
        stale_partial: Duration::from_secs(args.stale_partial_s),
    };
    let root = args
        .root
        .as_deref()
        .map(|path| root::Root::open(path, "name"))
        .transpose()?;
    server::serve(args.listen, secret, limits, root)
}

fn tcp(args: TcpArgs, interrupted: &Arc<AtomicBool>) -> Result<()> {
    if !(1..=1024).contains(&args.streams) {
        return Err(ProbeError::invalid(
            "streams",
            args.streams,
            "must be 1..=1024",
        ));
    }
    if args.sample_interval_ms == 0 {
        return Err(ProbeError::invalid(
            "sample_interval_ms",
            0,
            "must be at least 1",
        ));
    }
    let duration_ns = match (args.duration_ms, args.bytes) {
        (None, None) => Some(10_000_000_000),
        (ms, _) => ms.map(|ms| ms.saturating_mul(1_000_000)),
    };
    // A congestion control this kernel lacks is the user's mistake: say so before anything
    // else (secret, network) can fail first.
    if let Some(cc) = args.cc.as_deref().filter(|_| !args.reverse) {
        sockopt::check_cc(cc)?;
    }
    let secret = match (&args.common.secret_file, args.iperf3) {
        (_, true) => None,
        (path, false) => Some(secret(path.as_deref())?),
    };
    let options = client::TcpOptions {
        server: args.common.server,
        secret,
        request: TcpRequest {
            streams: args.streams,
            duration_ns,
            bytes: args.bytes,
            reverse: args.reverse,
            cc: args.cc,
            window_bytes: args.window_bytes,
            mss_bytes: args.mss_bytes,
            pacing_bps: args.pacing_bps,
            sample_interval_ns: args.sample_interval_ms * 1_000_000,
        },
        out: args.common.out,
        progress: args.progress,
        hold_open: Duration::from_millis(args.hold_open_ms),
        iperf3: args.iperf3,
        sample: !args.no_samples,
        interval: (args.interval_ms > 0).then(|| Duration::from_millis(args.interval_ms)),
    };
    if options.iperf3 {
        return iperf3::run(&options, interrupted).map(|_| ());
    }
    client::run_tcp(&options, interrupted).map(|_| ())
}
