//! Moving a file over N streams: the split into ranges and the sender's and the receiver's
//! loop for one range, run on every stream at once.
//!
//! Stream i carries range i, read and written with positional I/O, so the streams never
//! share a file offset. The sender hashes (SHA-256) exactly the bytes it sent; the receiver
//! verifies what reached its disk (`verify.rs`).

use std::fs::File;
use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::auth;
use crate::client::{self, SUPERVISE_TICK};
use crate::datapath::{self, Counters, BUFFER_BYTES, POLL};

/// Ranges start on page boundaries, so no two streams write into one page.
pub const ALIGN_BYTES: u64 = 4096;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range {
    pub offset_bytes: u64,
    pub length_bytes: u64,
}

/// What one end did with one range: bytes sent (or found on disk), their SHA-256 in hex, and
/// when its last byte went (or came), in ns since `begin`.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct RangeDigest {
    pub bytes: u64,
    pub sha256: String,
    pub last_byte_ns: Option<u64>,
}

/// Splits `size_bytes` into `streams` contiguous ranges of (nearly) equal, page-aligned
/// length; the last ones may be empty when the file is small.
pub fn split(size_bytes: u64, streams: u32) -> Vec<Range> {
    let streams = u64::from(streams.max(1));
    let chunk = size_bytes.div_ceil(streams).next_multiple_of(ALIGN_BYTES);
    (0..streams)
        .map(|i| {
            let start = (i * chunk).min(size_bytes);
            let end = ((i + 1) * chunk).min(size_bytes);
            Range {
                offset_bytes: start,
                length_bytes: end - start,
            }
        })
        .collect()
}

/// What one stream's thread is given: its index, its socket, when to stop, where to count
/// its bytes, and the clock every stream shares.
pub struct Lane<'a> {
    pub index: usize,
    pub socket: &'a TcpStream,
    pub stop: &'a AtomicBool,
    pub counters: &'a Counters,
    pub start: Instant,
}

/// Where a range resumes: the bytes the receiver already holds and the sender's hash of
/// them (both zero for a fresh copy).
#[derive(Clone, Default)]
pub struct Start {
    pub bytes: u64,
    pub hash: Sha256,
}

/// Runs `work` on every stream, one thread each, until all are done; sets their `stop` at
/// `deadline` or when `interrupted` is, and prints a progress line a second if asked.
/// Returns each stream's outcome and counters (times since `start`).
pub fn run_streams<T: Send>(
    streams: &[TcpStream],
    start: Instant,
    deadline: Option<Instant>,
    interrupted: &AtomicBool,
    progress: bool,
    work: impl Fn(&Lane) -> T + Sync,
) -> (Vec<T>, Vec<Counters>) {
    let counters: Vec<Counters> = streams.iter().map(|_| Counters::default()).collect();
    let stop = AtomicBool::new(false);
    let outcomes = thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter()
            .zip(&counters)
            .enumerate()
            .map(|(index, (socket, counters))| {
                let (work, stop) = (&work, &stop);
                scope.spawn(move || {
                    work(&Lane {
                        index,
                        socket,
                        stop,
                        counters,
                        start,
                    })
                })
            })
            .collect();
        let mut next_report = Duration::from_secs(1);
        let mut last_bytes: Vec<u64> = counters.iter().map(Counters::total).collect();
        while !handles.iter().all(|h| h.is_finished()) {
            if deadline.is_some_and(|d| Instant::now() >= d) || interrupted.load(Ordering::Relaxed)
            {
                stop.store(true, Ordering::Relaxed);
            }
            if progress && start.elapsed() >= next_report {
                client::print_progress(start.elapsed(), &counters, &mut last_bytes);
                next_report += Duration::from_secs(1);
            }
            thread::sleep(SUPERVISE_TICK);
        }
        handles
            .into_iter()
            .map(|h| h.join().expect("a stream thread does not panic"))
            .collect()
    });
    (outcomes, counters)
}

pub(crate) fn digest(bytes: u64, hash: Sha256, counters: &Counters) -> RangeDigest {
    RangeDigest {
        bytes,
        sha256: auth::to_hex(&hash.finalize()),
        last_byte_ns: counters.span().1,
    }
}

/// Sends the rest of `range` of `file` after `from`, until done or `stop`; a socket error
/// ends the range early (the digest says how far it got), a disk error is returned.
pub fn send_range(
    file: &File,
    range: Range,
    from: Start,
    lane: &Lane,
) -> std::io::Result<RangeDigest> {
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let mut socket = lane.socket;
    let _ = socket.set_write_timeout(Some(POLL));
    let (mut done_bytes, mut hash) = (from.bytes, from.hash);
    'range: while done_bytes < range.length_bytes {
        let want = (range.length_bytes - done_bytes).min(BUFFER_BYTES as u64) as usize;
        let read = file.read_at(&mut buffer[..want], range.offset_bytes + done_bytes)?;
        if read == 0 {
            return Err(std::io::Error::new(
                ErrorKind::UnexpectedEof,
                "the file shrank while it was being sent",
            ));
        }
        let mut chunk = &buffer[..read];
        while !chunk.is_empty() {
            if lane.stop.load(Ordering::Relaxed) {
                break 'range;
            }
            match socket.write(chunk) {
                Ok(0) => break 'range,
                Ok(n) => {
                    hash.update(&chunk[..n]);
                    lane.counters.add(n, lane.start);
                    done_bytes += n as u64;
                    chunk = &chunk[n..];
                }
                Err(e) if datapath::is_retry(&e) => {}
                Err(_) => break 'range,
            }
        }
    }
    Ok(digest(done_bytes, hash, lane.counters))
}

/// Receives the rest of `range` after the `held_bytes` the file holds, until the range is
/// full, the peer closes, `stop`, or nothing comes for `idle`; returns the bytes the range
/// now holds. A disk error is returned.
pub fn receive_range(
    file: &File,
    range: Range,
    held_bytes: u64,
    idle: Duration,
    lane: &Lane,
) -> std::io::Result<u64> {
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let mut socket = lane.socket;
    let _ = socket.set_read_timeout(Some(POLL));
    let mut done_bytes = held_bytes;
    let mut last_activity = Instant::now();
    while done_bytes < range.length_bytes && !lane.stop.load(Ordering::Relaxed) {
        // Never more than the range: a peer cannot make us write past it.
        let want = (range.length_bytes - done_bytes).min(BUFFER_BYTES as u64) as usize;
        match socket.read(&mut buffer[..want]) {
            Ok(0) => break,
            Ok(n) => {
                file.write_all_at(&buffer[..n], range.offset_bytes + done_bytes)?;
                lane.counters.add(n, lane.start);
                done_bytes += n as u64;
                last_activity = Instant::now();
            }
            Err(e) if datapath::is_retry(&e) => {
                if last_activity.elapsed() > idle {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    Ok(done_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn covers_exactly(size_bytes: u64, streams: u32) {
        let ranges = split(size_bytes, streams);
        assert_eq!(ranges.len(), streams as usize);
        let mut next = 0;
        for r in &ranges {
            assert_eq!(
                r.offset_bytes, next,
                "{size_bytes} over {streams}: {ranges:?}"
            );
            assert!(r.length_bytes == 0 || r.offset_bytes % ALIGN_BYTES == 0);
            next += r.length_bytes;
        }
        assert_eq!(next, size_bytes);
    }

    #[test]
    fn ranges_cover_the_file_contiguously_on_page_boundaries() {
        for size in [
            0,
            1,
            4095,
            4096,
            4097,
            10 << 20,
            (10 << 20) + 1,
            1_000_000_007,
        ] {
            for streams in [1, 2, 3, 4, 7, 128] {
                covers_exactly(size, streams);
            }
        }
        assert_eq!(
            split(8192, 2),
            vec![
                Range {
                    offset_bytes: 0,
                    length_bytes: 4096
                },
                Range {
                    offset_bytes: 4096,
                    length_bytes: 4096
                }
            ]
        );
        // A small file goes in one range; the other streams carry nothing.
        let small = split(10, 4);
        assert_eq!(small[0].length_bytes, 10);
        assert!(small[1..].iter().all(|r| r.length_bytes == 0));
    }
}
