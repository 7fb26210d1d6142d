//! `tcpeval-probe copy`: a file to (put) or from (get) a server's root over N TCP streams,
//! every byte verified by SHA-256 on disk before the file takes its final name. Writes
//! `copy.json` whatever the outcome; exit 0 only when the file was committed.

use std::fs::File;
use std::net::{Shutdown, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::auth::Secret;
use crate::client::{self, expect, receive_until, unexpected};
use crate::copy_server::verdict_timeout;
use crate::disk::{self, DiskReport, DiskRequest};
use crate::disk_remote;
use crate::error::{ProbeError, Result};
use crate::proto::{self, GetRequest, Message, PutRequest};
use crate::report;
use crate::resume;
use crate::root::Root;
use crate::sockopt::Asked;
use crate::transfer::{self, Range, RangeDigest, Start};
use crate::verify::{self, Verdict};

/// A get's streams give up on a server that sends nothing for this long.
const IDLE: Duration = Duration::from_secs(30);
/// How long an interrupted get waits for the server's digests of what it did send.
const INTERRUPTED_WAIT: Duration = Duration::from_secs(5);

pub struct CopyOptions {
    pub server: String,
    pub secret: Secret,
    /// Put: the file sent. Get: the file written (through a partial file beside it).
    pub local: PathBuf,
    /// The name under the server's root.
    pub remote: String,
    pub get: bool,
    pub streams: u32,
    pub overwrite: bool,
    /// Continue from what the receiver's partial file holds (`resume.rs`).
    pub resume: bool,
    pub out: PathBuf,
    pub progress: bool,
    /// After a committed copy, measure both ends' disks with a file this large (`disk.rs`,
    /// `disk_remote.rs`); zero skips it.
    pub disk_bytes: u64,
}

/// `copy.json`.
#[derive(Serialize, Debug)]
pub struct CopyReport {
    pub tool: String,
    pub version: String,
    pub mode: String,
    pub server: String,
    /// "put" (client → server) or "get".
    pub direction: String,
    pub local: String,
    pub remote: String,
    pub size_bytes: u64,
    pub streams: u32,
    pub overwrite: bool,
    pub resume: bool,
    /// The file is at its final name, every byte verified.
    pub committed: bool,
    pub interrupted: bool,
    /// Why it was not committed.
    pub problem: Option<String>,
    /// Sequential rates of the local end's disk, in the directory of `local`, measured
    /// after the copy (the read rate limits a put, the write rate a get).
    pub local_disk: Option<DiskReport>,
    /// The same of the server's `--root` (its write rate limits a put, its read rate a get).
    pub server_disk: Option<DiskReport>,
    pub warnings: Vec<String>,
    pub kernel: String,
    /// The whole command: connecting, moving, flushing and verifying.
    pub wall_ns: u64,
    /// From the first byte sent to the last byte received.
    pub data_ns: u64,
    /// The receiver's fsync of the file.
    pub sync_ns: u64,
    /// Reading the file back from disk and hashing it.
    pub verify_ns: u64,
    /// Bytes this copy brought to the receiver's disk over `data_ns + sync_ns`.
    pub rate_bps: f64,
    pub ranges: Vec<RangeReport>,
}

/// One stream's range: what was sent, what is on the receiver's disk.
#[derive(Serialize, Debug)]
pub struct RangeReport {
    pub stream: u32,
    pub offset_bytes: u64,
    pub length_bytes: u64,
    /// What the receiver held before this copy (zero unless resumed).
    pub resumed_bytes: u64,
    /// Bytes of the range sent, counting from its start (the resumed prefix included).
    pub sent_bytes: Option<u64>,
    pub received_bytes: Option<u64>,
    pub sent_sha256: Option<String>,
    pub received_sha256: Option<String>,
    /// Bytes this copy brought over the time to the range's last byte.
    pub rate_bps: Option<f64>,
}

pub fn run(options: &CopyOptions, interrupted: &AtomicBool) -> Result<CopyReport> {
    report::file_name(&options.out.join("copy.json"))?;
    let wall = Instant::now();
    let outcome = if options.get {
        get(options, interrupted)?
    } else {
        put(options, interrupted)?
    };
    let mut report = build_report(options, outcome, interrupted.load(Ordering::Relaxed), wall);
    if report.committed && options.disk_bytes > 0 {
        measure_disks(options, &mut report, interrupted);
    }
    let interrupted = interrupted.load(Ordering::Relaxed);
    report::write_json(&options.out, "copy.json", &report)?;
    match &report.problem {
        Some(problem) if !interrupted => Err(ProbeError::Copy(problem.clone())),
        _ => Ok(report),
    }
}

/// What a copy did, for its report.
struct Outcome {
    size_bytes: u64,
    ranges: Vec<Range>,
    /// Per range, the bytes the receiver held before this copy (zero unless resumed).
    resumed: Vec<u64>,
    sent: Vec<RangeDigest>,
    verdict: Verdict,
}

fn put(options: &CopyOptions, interrupted: &AtomicBool) -> Result<Outcome> {
    let local = options.local.display();
    let file = File::open(&options.local)
        .map_err(|e| ProbeError::invalid("local", &local, e.to_string()))?;
    let meta = file
        .metadata()
        .map_err(|e| ProbeError::invalid("local", &local, e.to_string()))?;
    if !meta.is_file() {
        return Err(ProbeError::invalid(
            "local",
            &local,
            "is not a regular file",
        ));
    }
    let size_bytes = meta.len();
    let request = Message::StartPut(PutRequest {
        name: options.remote.clone(),
        size_bytes,
        streams: options.streams,
        overwrite: options.overwrite,
        resume: options.resume,
    });
    let ranges = transfer::split(size_bytes, options.streams);
    let mut starts = vec![Start::default(); ranges.len()];
    let (mut control, streams) = open_session(options, &request, |control| {
        if options.resume {
            let held = match expect(control, "held")? {
                Message::Held { ranges } => ranges,
                other => return Err(unexpected(other, "held")),
            };
            starts = resume::starts(&file, &ranges, &held)?;
        }
        Ok(())
    })?;
    let resumed = starts.iter().map(|s| s.bytes).collect();
    let start = Instant::now();
    let (sent, _) = transfer::run_streams(
        &streams,
        start,
        None,
        interrupted,
        options.progress,
        |lane| {
            let from = starts[lane.index].clone();
            let digest = transfer::send_range(&file, ranges[lane.index], from, lane);
            let _ = lane.socket.shutdown(Shutdown::Write);
            digest
        },
    );
    let sent = sent
        .into_iter()
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| ProbeError::io(format!("reading {local}"), e))?;
    let verdict = send_digests(&mut control, &sent)
        .and_then(|()| {
            let deadline = Instant::now() + verdict_timeout(size_bytes);
            match receive_until(&mut control, "received", deadline)? {
                Message::Received(verdict) => Ok(verdict),
                other => Err(unexpected(other, "received")),
            }
        })
        .unwrap_or_else(|e| Verdict::failed(format!("no verdict from the server: {e}")));
    Ok(Outcome {
        size_bytes,
        ranges,
        resumed,
        sent,
        verdict,
    })
}

fn send_digests(control: &mut TcpStream, sent: &[RangeDigest]) -> Result<()> {
    let message = Message::Sent {
        ranges: sent.to_vec(),
    };
    Ok(proto::send(control, &message)?)
}

/// Connects, asks for the copy, lets `before_ready` speak (a get learns the file's size, a
/// resume compares what is held), then opens the copy's streams.
fn open_session(
    options: &CopyOptions,
    request: &Message,
    before_ready: impl FnOnce(&mut TcpStream) -> Result<()>,
) -> Result<(TcpStream, Vec<TcpStream>)> {
    let server = client::resolve(&options.server)?;
    let mut control = client::connect_control(server, &options.secret)?;
    proto::send(&mut control, request)?;
    before_ready(&mut control)?;
    let streams = client::join_streams(&mut control, server, &Asked::default(), options.streams)?;
    match expect(&mut control, "begin")? {
        Message::Begin {} => Ok((control, streams)),
        other => Err(unexpected(other, "begin")),
    }
}

fn get(options: &CopyOptions, interrupted: &AtomicBool) -> Result<Outcome> {
    let (dir, name) = split_local(&options.local)?;
    let partial = Root::open(dir, "local")?.destination(name, options.overwrite, options.resume)?;
    let request = Message::StartGet(GetRequest {
        name: options.remote.clone(),
        streams: options.streams,
        resume: options.resume,
    });
    let (mut size_bytes, mut ranges, mut held) = (0, Vec::new(), Vec::new());
    let (mut control, streams) = open_session(options, &request, |control| {
        size_bytes = match expect(control, "source")? {
            Message::Source { size_bytes } => size_bytes,
            other => return Err(unexpected(other, "source")),
        };
        partial.check_space(size_bytes)?;
        ranges = transfer::split(size_bytes, options.streams);
        held = vec![RangeDigest::default(); ranges.len()];
        if options.resume {
            held = resume::held(partial.file(), &ranges)
                .map_err(|e| ProbeError::io(format!("reading the partial file of {name}"), e))?;
            let message = Message::Held {
                ranges: held.clone(),
            };
            proto::send(control, &message)?;
        }
        Ok(())
    })?;
    let start = Instant::now();
    let (received, counters) = transfer::run_streams(
        &streams,
        start,
        None,
        interrupted,
        options.progress,
        |lane| {
            let (range, held) = (ranges[lane.index], held[lane.index].bytes);
            transfer::receive_range(partial.file(), range, held, IDLE, lane)
        },
    );
    // Closing now resets a server still sending (after Ctrl-C), so it stops and reports.
    drop(streams);
    let wait = if interrupted.load(Ordering::Relaxed) {
        INTERRUPTED_WAIT
    } else {
        verdict_timeout(size_bytes)
    };
    let sent = match receive_until(&mut control, "sent", Instant::now() + wait) {
        Ok(Message::Sent { ranges }) => Ok(ranges),
        Ok(other) => Err(unexpected(other, "sent")),
        Err(e) => Err(e),
    };
    let digests = sent.as_deref().unwrap_or_default();
    // The local file of an interrupted get is the user's own: kept for a resume.
    let mut verdict = verify::settle(partial, &ranges, digests, received, &counters, true);
    if let Err(e) = &sent {
        verdict.problem = Some(format!("no digests from the server: {e}"));
    }
    let _ = proto::send(&mut control, &Message::Received(verdict.clone()));
    Ok(Outcome {
        size_bytes,
        resumed: held.iter().map(|h| h.bytes).collect(),
        ranges,
        sent: digests.to_vec(),
        verdict,
    })
}

/// Both ends' disks, where the file was read and written: one buffered pass of 1 MiB blocks
/// each, one end after the other (they may share a disk). A disk not measured is a warning.
fn measure_disks(options: &CopyOptions, report: &mut CopyReport, interrupted: &AtomicBool) {
    let request = DiskRequest {
        size_bytes: options.disk_bytes,
        block_bytes: vec![1 << 20],
        direct: false,
    };
    let local =
        split_local(&options.local).and_then(|(dir, _)| disk::measure(dir, &request, interrupted));
    match local {
        Ok(measured) => report.local_disk = Some(measured),
        Err(e) => report
            .warnings
            .push(format!("local disk not measured: {e}")),
    }
    match disk_remote::run(&options.server, &options.secret, &request) {
        Ok(measured) => report.server_disk = Some(measured),
        Err(e) => report
            .warnings
            .push(format!("server's disk not measured: {e}")),
    }
}

/// The directory a local file goes in and its name in it.
fn split_local(path: &Path) -> Result<(&Path, &str)> {
    let name = path
        .file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| ProbeError::invalid("local", path.display(), "must name a file"))?;
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    Ok((dir.unwrap_or(Path::new(".")), name))
}

fn rate_bps(bytes: u64, ns: u64) -> Option<f64> {
    (ns > 0).then(|| bytes as f64 * 8.0 / (ns as f64 / 1e9))
}

fn build_report(
    options: &CopyOptions,
    outcome: Outcome,
    interrupted: bool,
    wall: Instant,
) -> CopyReport {
    let Outcome {
        size_bytes,
        ranges,
        resumed,
        sent,
        verdict,
    } = outcome;
    let on_disk = &verdict.ranges;
    let data_ns = on_disk
        .iter()
        .chain(&sent)
        .filter_map(|d| d.last_byte_ns)
        .max()
        .unwrap_or(0);
    // What moved in this copy: on disk now, less what a resumed copy already held.
    let moved_bytes = |i: usize, on_disk: &RangeDigest| on_disk.bytes.saturating_sub(resumed[i]);
    let arrived_bytes: u64 = on_disk
        .iter()
        .enumerate()
        .map(|(i, d)| moved_bytes(i, d))
        .sum();
    let ranges = ranges
        .iter()
        .enumerate()
        .map(|(i, range)| {
            let (sent, got) = (sent.get(i), on_disk.get(i));
            RangeReport {
                stream: i as u32,
                offset_bytes: range.offset_bytes,
                length_bytes: range.length_bytes,
                resumed_bytes: resumed[i],
                sent_bytes: sent.map(|d| d.bytes),
                received_bytes: got.map(|d| d.bytes),
                sent_sha256: sent.map(|d| d.sha256.clone()),
                received_sha256: got.map(|d| d.sha256.clone()),
                rate_bps: got.and_then(|d| rate_bps(moved_bytes(i, d), d.last_byte_ns?)),
            }
        })
        .collect();
    CopyReport {
        tool: "tcpeval-probe".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        mode: "copy".into(),
        server: options.server.clone(),
        direction: if options.get { "get" } else { "put" }.into(),
        local: options.local.display().to_string(),
        remote: options.remote.clone(),
        size_bytes,
        streams: options.streams,
        overwrite: options.overwrite,
        resume: options.resume,
        committed: verdict.committed,
        interrupted,
        problem: verdict.problem,
        local_disk: None,
        server_disk: None,
        warnings: Vec::new(),
        kernel: report::kernel_release(),
        wall_ns: wall.elapsed().as_nanos() as u64,
        data_ns,
        sync_ns: verdict.sync_ns,
        verify_ns: verdict.verify_ns,
        rate_bps: rate_bps(arrived_bytes, data_ns + verdict.sync_ns).unwrap_or(0.0),
        ranges,
    }
}
