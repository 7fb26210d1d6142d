//! The disk test run by the server in its `--root`, asked over the control connection, so the
//! far end's disk rates stand beside the near end's (`tcpeval diagnose --path`,
//! docs/diagnose.md). Bounded like every test: the server's `--max-bytes` caps the file, its
//! `--max-duration-s` the test, and a server without `--root` refuses.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use crate::auth::Secret;
use crate::client;
use crate::disk::{self, DiskReport, DiskRequest};
use crate::error::{ProbeError, Result};
use crate::proto::{self, Message};
use crate::root::Root;
use crate::server::{Limits, Refusal};

/// What the report calls the directory the server measured: its path is the server's own.
const SERVER_ROOT: &str = "server --root";
/// The slowest disk a client waits for (10 MB/s), beyond a minute of slack.
const SLOWEST_BYTES_PER_S: u64 = 10_000_000;

pub fn serve(
    mut control: TcpStream,
    request: &DiskRequest,
    limits: &Limits,
    root: Option<&Root>,
) -> Result<()> {
    let Some(root) = root else {
        let reason = "cannot be measured: this server was started without --root";
        proto::send(
            &mut control,
            &Refusal::new("path", SERVER_ROOT, reason).message(),
        )?;
        return Ok(());
    };
    if request.size_bytes > limits.max_bytes {
        let reason = format!("must be at most {} on this server", limits.max_bytes);
        proto::send(
            &mut control,
            &Refusal::new("size", request.size_bytes, reason).message(),
        )?;
        return Ok(());
    }
    let measured = measure_within(root, request, limits.max_duration);
    let reply = match measured {
        Ok(mut report) => {
            report.path = SERVER_ROOT.into();
            Message::DiskResults(Box::new(report))
        }
        Err(ProbeError::Invalid {
            field,
            value,
            reason,
        }) => Refusal::new(field, value, reason).message(),
        Err(other) => Refusal::new("path", SERVER_ROOT, other.to_string()).message(),
    };
    proto::send(&mut control, &reply)?;
    Ok(())
}

/// Measures in the root, stopping (and saying so in the report) at `limit`.
fn measure_within(root: &Root, request: &DiskRequest, limit: Duration) -> Result<DiskReport> {
    let stop = AtomicBool::new(false);
    let done = AtomicBool::new(false);
    thread::scope(|scope| {
        scope.spawn(|| {
            let deadline = Instant::now() + limit;
            while !done.load(Ordering::Relaxed) && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(50));
            }
            stop.store(true, Ordering::Relaxed);
        });
        let report = disk::measure(&root.scratch_dir(), request, &stop);
        done.store(true, Ordering::Relaxed);
        report
    })
}

/// Asks `server` to measure its root's disk.
pub fn run(server: &str, secret: &Secret, request: &DiskRequest) -> Result<DiskReport> {
    let address = client::resolve(server)?;
    let mut control = client::connect_control(address, secret)?;
    proto::send(&mut control, &Message::StartDisk(request.clone()))?;
    let passes = request.block_bytes.len() as u64 * if request.direct { 2 } else { 1 };
    let wait_s = 60 + passes * 2 * request.size_bytes / SLOWEST_BYTES_PER_S;
    let deadline = Instant::now() + Duration::from_secs(wait_s);
    match client::receive_until(&mut control, "disk results", deadline)? {
        Message::DiskResults(report) => Ok(*report),
        other => Err(client::unexpected(other, "disk results")),
    }
}
