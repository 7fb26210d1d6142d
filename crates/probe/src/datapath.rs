//! Moving bytes: the memory-to-memory sender and receiver loops shared by client and server.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::sys;
use std::os::fd::AsFd;

pub const BUFFER_BYTES: usize = 128 * 1024;
/// How often a blocked read or write wakes to look at the stop flag.
pub const POLL: Duration = Duration::from_millis(50);

/// Byte counts and first/last activity of one stream, shared with the progress line.
#[derive(Default)]
pub struct Counters {
    pub bytes: AtomicU64,
    pub first_ns: AtomicU64,
    pub last_ns: AtomicU64,
}

impl Counters {
    pub fn add(&self, n: usize, start: Instant) {
        let now_ns = start.elapsed().as_nanos() as u64;
        if self.bytes.fetch_add(n as u64, Ordering::Relaxed) == 0 {
            self.first_ns.store(now_ns, Ordering::Relaxed);
        }
        self.last_ns.store(now_ns, Ordering::Relaxed);
    }

    pub fn total(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }

    pub fn span(&self) -> (Option<u64>, Option<u64>) {
        if self.total() == 0 {
            return (None, None);
        }
        (
            Some(self.first_ns.load(Ordering::Relaxed)),
            Some(self.last_ns.load(Ordering::Relaxed)),
        )
    }
}

/// Writes until `stop`, or until `limit_bytes` are written.
pub fn send(
    mut socket: &TcpStream,
    limit_bytes: Option<u64>,
    stop: &AtomicBool,
    counters: &Counters,
    start: Instant,
) {
    let buffer = vec![0x5au8; BUFFER_BYTES];
    let _ = socket.set_write_timeout(Some(POLL));
    let mut left = limit_bytes.unwrap_or(u64::MAX);
    while left > 0 && !stop.load(Ordering::Relaxed) {
        let chunk = &buffer[..(left.min(BUFFER_BYTES as u64) as usize)];
        match socket.write(chunk) {
            Ok(0) => break,
            Ok(n) => {
                counters.add(n, start);
                left -= n as u64;
            }
            Err(e) if is_retry(&e) => {}
            Err(_) => break,
        }
    }
}

/// Reads until EOF, an error, `stop`, or more than `limit_bytes`; a peer that sends nothing
/// for `idle` is dropped.
pub fn receive(
    mut socket: &TcpStream,
    limit_bytes: u64,
    idle: Duration,
    stop: &AtomicBool,
    counters: &Counters,
    start: Instant,
) {
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let _ = socket.set_read_timeout(Some(POLL));
    let mut last_activity = Instant::now();
    while !stop.load(Ordering::Relaxed) && counters.total() <= limit_bytes {
        match socket.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                counters.add(n, start);
                last_activity = Instant::now();
            }
            Err(e) if is_retry(&e) => {
                if last_activity.elapsed() > idle {
                    break;
                }
            }
            Err(_) => break,
        }
    }
}

/// Waits until everything written has been acknowledged (or `limit` passes), so the last
/// sample describes the finished transfer rather than a queue still draining. Returns
/// whether it was: `false` when data was still unacknowledged at the limit.
pub fn drain(socket: &TcpStream, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match sys::tcp_info(socket.as_fd()) {
            Ok(r) if r.info.unacked == 0 && r.info.notsent_bytes == 0 => return true,
            Ok(_) => std::thread::sleep(Duration::from_millis(1)),
            Err(_) => return true,
        }
    }
    false
}

pub fn is_retry(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        ErrorKind::WouldBlock | ErrorKind::TimedOut | ErrorKind::Interrupted
    )
}
