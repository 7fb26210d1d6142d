//! The server's end of a copy: it receives a file into its root (put) or sends one from it
//! (get), over the streams the client opened, bounded like every other test.
//!
//! A server started without `--root` rejects every copy. A put reserves its whole size on
//! disk before it is admitted (`partial.rs`), is written into a locked, hidden partial file,
//! verified and renamed into place only if every byte matches (`verify.rs`). A put that does
//! not finish leaves its partial file only when the client asked to resume (as rsync keeps
//! one only with `--partial`): otherwise strangers' and crashed clients' leftovers would
//! hold the disk until someone deleted them by hand. A corrupt file, or one a write failed
//! on, is always removed.

use std::fs::File;
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::client;
use crate::datapath::Counters;
use crate::error::{ProbeError, Result};
use crate::log::log;
use crate::partial::Partial;
use crate::proto::{self, GetRequest, Message, PutRequest, MAX_REQUEST_FRAME_BYTES};
use crate::resume;
use crate::root::Root;
use crate::server::{self, Limits, Refusal};
use crate::sockopt::Asked;
use crate::transfer::{self, Lane, Range, RangeDigest, Start};
use crate::verify;

/// How long the sender waits for the receiver's verdict: flushing and reading back a large
/// file takes time (assumed no slower than 20 MB/s, and never less than a minute).
pub fn verdict_timeout(size_bytes: u64) -> Duration {
    Duration::from_secs(60) + Duration::from_secs(size_bytes / 20_000_000)
}

/// The root, if this server has one, and the request's bounds.
fn admit<'r>(
    root: Option<&'r Root>,
    name: &str,
    streams: u32,
    limits: &Limits,
) -> Result<&'r Root> {
    let root = root.ok_or_else(|| {
        ProbeError::invalid(
            "name",
            name,
            "cannot be copied: this server was started without --root",
        )
    })?;
    if streams == 0 || streams > limits.max_streams {
        return Err(ProbeError::invalid(
            "streams",
            streams,
            format!("must be 1..={} on this server", limits.max_streams),
        ));
    }
    Ok(root)
}

fn check_size(size_bytes: u64, limits: &Limits) -> Result<()> {
    if size_bytes > limits.max_bytes {
        return Err(ProbeError::invalid(
            "size_bytes",
            size_bytes,
            format!("must be at most {} on this server", limits.max_bytes),
        ));
    }
    Ok(())
}

/// A refused request as the client sees it: the field, the value and the reason.
fn rejected(e: ProbeError) -> Message {
    match e {
        ProbeError::Invalid {
            field,
            value,
            reason,
        } => Refusal::new(field, value, reason).message(),
        other => Refusal::new("name", "", other.to_string()).message(),
    }
}

/// A put admitted: its partial file, its space reserved, and what each range already holds.
fn admit_put(
    request: &PutRequest,
    ranges: &[Range],
    limits: &Limits,
    root: Option<&Root>,
) -> Result<(Partial, Vec<RangeDigest>)> {
    let root = admit(root, &request.name, request.streams, limits)?;
    check_size(request.size_bytes, limits)?;
    let partial = root.destination(&request.name, request.overwrite, request.resume)?;
    let held = match request.resume {
        true => resume::held(partial.file(), ranges)
            .map_err(|e| ProbeError::io(format!("reading {}", request.name), e))?,
        false => vec![RangeDigest::default(); ranges.len()],
    };
    if let Err(e) = partial.reserve(request.size_bytes) {
        partial.give_up(request.resume, ranges, &held_bytes(&held));
        return Err(e);
    }
    Ok((partial, held))
}

fn held_bytes(held: &[RangeDigest]) -> Vec<u64> {
    held.iter().map(|h| h.bytes).collect()
}

/// Per range, what the partial file holds after the data: what arrived, or, where writing
/// failed, nothing worth keeping.
fn arrived_bytes(received: &[std::io::Result<u64>]) -> Vec<u64> {
    received
        .iter()
        .map(|r| r.as_ref().copied().unwrap_or(0))
        .collect()
}

pub fn serve_put(
    mut control: TcpStream,
    request: &PutRequest,
    limits: &Limits,
    root: Option<&Root>,
) -> Result<()> {
    let ranges = transfer::split(request.size_bytes, request.streams);
    let (partial, held) = match admit_put(request, &ranges, limits, root) {
        Ok(admitted) => admitted,
        Err(e) => return proto::send(&mut control, &rejected(e)).map_err(Into::into),
    };
    if request.resume {
        let message = Message::Held {
            ranges: held.clone(),
        };
        if let Err(e) = proto::send(&mut control, &message) {
            partial.give_up(true, &ranges, &held_bytes(&held));
            return Err(e.into());
        }
    }
    // The streams close on return: that resets a sender we stopped listening to.
    let streams = run_copy_streams(&mut control, request.streams, limits, |lane| {
        let (range, held) = (ranges[lane.index], held[lane.index].bytes);
        transfer::receive_range(partial.file(), range, held, limits.idle_timeout, lane)
    });
    let (received, counters, cut) = match streams {
        Ok(done) => done,
        Err(e) => {
            partial.give_up(request.resume, &ranges, &held_bytes(&held));
            return Err(e);
        }
    };
    let sent = match receive_sent(&mut control, limits) {
        Ok(sent) => sent,
        Err(e) => {
            // The client is gone: what arrived stays only if it asked to resume and no
            // write failed (a failed write leaves bytes nobody can vouch for).
            let resume = request.resume && received.iter().all(|r| r.is_ok());
            partial.give_up(resume, &ranges, &arrived_bytes(&received));
            return Err(e);
        }
    };
    let keep = request.resume;
    let mut verdict = verify::settle(partial, &ranges, &sent, received, &counters, keep);
    if let (Some(problem), true) = (&mut verdict.problem, cut) {
        let limit_s = limits.max_duration.as_secs();
        problem.push_str(&format!(" (cut at this server's limit of {limit_s} s)"));
    }
    if let (Some(problem), Ok(peer)) = (&verdict.problem, control.peer_addr()) {
        log().client(
            peer,
            format!("put {}: not committed: {problem}", request.name),
        );
    }
    proto::send(&mut control, &Message::Received(verdict))?;
    Ok(())
}

/// Opens the copy's streams, starts the clock (`Begin`) and runs `work` on each stream
/// until all are done or the server's duration limit is reached (then `cut` is true); the
/// streams close after.
fn run_copy_streams<T: Send>(
    control: &mut TcpStream,
    streams: u32,
    limits: &Limits,
    work: impl Fn(&Lane) -> T + Sync,
) -> Result<(Vec<T>, Vec<Counters>, bool)> {
    let joined = server::open_data_connections(control, &Asked::default(), streams, limits)?;
    proto::send(control, &Message::Begin {})?;
    let start = Instant::now();
    let deadline = start + limits.max_duration;
    let never = AtomicBool::new(false);
    let (outcomes, counters) =
        transfer::run_streams(&joined, start, Some(deadline), &never, false, work);
    Ok((outcomes, counters, Instant::now() >= deadline))
}

fn receive_sent(control: &mut TcpStream, limits: &Limits) -> Result<Vec<RangeDigest>> {
    let deadline = Instant::now() + limits.idle_timeout;
    match proto::receive(control, MAX_REQUEST_FRAME_BYTES, deadline, "sent")? {
        Message::Sent { ranges } => Ok(ranges),
        other => Err(client::unexpected(other, "sent")),
    }
}

/// Where each range starts: after what the client's partial file holds when it resumes
/// (checked against our file), else at its beginning.
fn starts(
    control: &mut TcpStream,
    request: &GetRequest,
    file: &File,
    ranges: &[Range],
    limits: &Limits,
) -> Result<Vec<Start>> {
    if !request.resume {
        return Ok(vec![Start::default(); ranges.len()]);
    }
    let deadline = Instant::now() + limits.idle_timeout;
    match proto::receive(control, MAX_REQUEST_FRAME_BYTES, deadline, "held")? {
        Message::Held { ranges: held } => resume::starts(file, ranges, &held),
        other => Err(client::unexpected(other, "held")),
    }
}

pub fn serve_get(
    mut control: TcpStream,
    request: &GetRequest,
    limits: &Limits,
    root: Option<&Root>,
) -> Result<()> {
    let admitted = admit(root, &request.name, request.streams, limits)
        .and_then(|root| root.source(&request.name))
        .and_then(|(file, size)| check_size(size, limits).map(|()| (file, size)));
    let (file, size_bytes) = match admitted {
        Ok(source) => source,
        Err(e) => return proto::send(&mut control, &rejected(e)).map_err(Into::into),
    };
    proto::send(&mut control, &Message::Source { size_bytes })?;
    let ranges = transfer::split(size_bytes, request.streams);
    let starts = match starts(&mut control, request, &file, &ranges, limits) {
        Ok(starts) => starts,
        Err(e) => return proto::send(&mut control, &rejected(e)).map_err(Into::into),
    };
    let (sent, _, cut) = run_copy_streams(&mut control, request.streams, limits, |lane| {
        let from = starts[lane.index].clone();
        let digest = transfer::send_range(&file, ranges[lane.index], from, lane);
        let _ = lane.socket.shutdown(Shutdown::Write);
        digest
    })?;
    let sent = match sent.into_iter().collect::<std::io::Result<Vec<_>>>() {
        Ok(sent) => sent,
        Err(e) => {
            let refusal = ProbeError::io(format!("reading {}", request.name), e);
            return proto::send(&mut control, &rejected(refusal)).map_err(Into::into);
        }
    };
    proto::send(&mut control, &Message::Sent { ranges: sent })?;
    let deadline = Instant::now() + verdict_timeout(size_bytes);
    match proto::receive(&mut control, MAX_REQUEST_FRAME_BYTES, deadline, "received")? {
        Message::Received(verdict) if !verdict.committed => {
            let problem = verdict.problem.unwrap_or_default();
            let limit_s = limits.max_duration.as_secs();
            let cut = if cut {
                format!(" (cut at the limit of {limit_s} s)")
            } else {
                String::new()
            };
            if let Ok(peer) = control.peer_addr() {
                let name = &request.name;
                log().client(
                    peer,
                    format!("get {name}: not committed by the client: {problem}{cut}"),
                );
            }
        }
        _ => {}
    }
    Ok(())
}
