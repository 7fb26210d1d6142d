//! The server's log on stderr: one escaped line per event, rate-limited per source.
//!
//! Every event a stranger can cause (a refused handshake, a malformed frame) is a line, so an
//! unlimited log is a way to fill the operator's disk and bury what matters. Lines are counted
//! in fixed windows: each source network (`source.rs`: /24 or /64) may write
//! `LINES_PER_SOURCE` lines a window and all sources together `LINES_IN_ALL`; what is held
//! back is counted and, when the window ends, one line per source says how many of its lines
//! were suppressed. Every line passes through `escape` whole, so none can hold a newline or a
//! terminal control, and none is longer than `LINE_BYTES`.

use std::collections::HashMap;
use std::fmt::Display;
use std::io::Write;
use std::net::SocketAddr;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::escape::escape;
use crate::source::{self, Prefix};

pub const WINDOW: Duration = Duration::from_secs(10);
/// Enough for a source's real trouble to show (a few failed tests), too few to flood.
pub const LINES_PER_SOURCE: u32 = 20;
/// Bounds the log and the table of sources (only sources that wrote a line are kept).
pub const LINES_IN_ALL: u32 = 200;
/// The longest line the log writes, newline excluded.
pub const LINE_BYTES: usize = 1024;

/// Whom a line is counted against.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Key {
    Peer(Prefix),
    /// The server's own events (accept failures), which no peer's budget should hide.
    Server,
}

#[derive(Default)]
struct Count {
    written: u32,
    suppressed: u64,
}

struct Window {
    start: Instant,
    written: u32,
    counts: HashMap<Key, Count>,
    /// Lines of sources that had written nothing when the shared budget ran out.
    suppressed_unlisted: u64,
}

pub struct Log {
    state: Mutex<(Window, Box<dyn Write + Send>)>,
}

impl Log {
    pub fn new(out: Box<dyn Write + Send>, now: Instant) -> Log {
        Log {
            state: Mutex::new((Window::new(now), out)),
        }
    }

    /// A line about one client: `client ADDRESS:PORT: message`.
    pub fn client(&self, peer: SocketAddr, message: impl Display) {
        let key = Key::Peer(source::prefix(peer.ip()));
        self.line_at(Instant::now(), key, &format!("client {peer}: {message}"));
    }

    /// A line about the server itself.
    pub fn server(&self, message: impl Display) {
        self.line_at(Instant::now(), Key::Server, &message.to_string());
    }

    /// Ends the window if it is over: the suppressed counts are written even when the
    /// sources have gone quiet. Called once a second.
    pub fn tick(&self) {
        let mut state = self.lock();
        let (window, out) = &mut *state;
        window.roll_if_over(Instant::now(), out.as_mut());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, (Window, Box<dyn Write + Send>)> {
        // A thread that panicked while logging left nothing half-done worth refusing.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn line_at(&self, now: Instant, key: Key, text: &str) {
        let mut state = self.lock();
        let (window, out) = &mut *state;
        window.roll_if_over(now, out.as_mut());
        if window.admit(key) {
            write_line(out.as_mut(), &escape(text, LINE_BYTES));
        }
    }
}

impl Window {
    fn new(start: Instant) -> Window {
        Window {
            start,
            written: 0,
            counts: HashMap::new(),
            suppressed_unlisted: 0,
        }
    }

    /// Whether a line of `key` may be written now; counts it either way.
    fn admit(&mut self, key: Key) -> bool {
        let shared_left = self.written < LINES_IN_ALL;
        let count = match self.counts.get_mut(&key) {
            Some(count) => count,
            None if shared_left => self.counts.entry(key).or_default(),
            None => {
                self.suppressed_unlisted += 1;
                return false;
            }
        };
        if !shared_left || count.written >= LINES_PER_SOURCE {
            count.suppressed += 1;
            return false;
        }
        count.written += 1;
        self.written += 1;
        true
    }

    fn roll_if_over(&mut self, now: Instant, out: &mut dyn Write) {
        if now.saturating_duration_since(self.start) < WINDOW {
            return;
        }
        let window_s = WINDOW.as_secs();
        for (key, count) in &self.counts {
            if count.suppressed > 0 {
                let whose = match key {
                    Key::Peer(prefix) => format!("from {prefix}"),
                    Key::Server => "of the server".to_string(),
                };
                write_line(out, &format!(
                    "log: {} lines {whose} suppressed in the last {window_s} s (at most {LINES_PER_SOURCE} a source, {LINES_IN_ALL} in all)",
                    count.suppressed
                ));
            }
        }
        if self.suppressed_unlisted > 0 {
            write_line(out, &format!(
                "log: {} lines from other sources suppressed in the last {window_s} s (at most {LINES_IN_ALL} in all)",
                self.suppressed_unlisted
            ));
        }
        *self = Window::new(now);
    }
}

/// One write per line, so lines of different threads never interleave.
fn write_line(out: &mut dyn Write, line: &str) {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line.as_bytes());
    bytes.push(b'\n');
    // Nowhere to report a failing log; the server goes on serving.
    let _ = out.write_all(&bytes);
}

/// The process's log, on stderr.
pub fn log() -> &'static Log {
    static LOG: OnceLock<Log> = OnceLock::new();
    LOG.get_or_init(|| Log::new(Box::new(std::io::stderr()), Instant::now()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Captured {
        fn lines(&self) -> Vec<String> {
            let text = String::from_utf8(self.0.lock().unwrap().clone()).unwrap();
            text.lines().map(str::to_string).collect()
        }
    }

    fn peer(text: &str) -> Key {
        Key::Peer(source::prefix(text.parse().unwrap()))
    }

    #[test]
    fn a_flooding_source_is_cut_at_its_budget_and_its_count_reported() {
        let captured = Captured::default();
        let t0 = Instant::now();
        let log = Log::new(Box::new(captured.clone()), t0);
        for i in 0..1000 {
            log.line_at(t0, peer("10.9.9.1"), &format!("flood {i}"));
        }
        log.line_at(t0, peer("10.1.1.1"), "a quiet client's one line");
        log.line_at(t0 + WINDOW, peer("10.9.9.1"), "next window");
        let lines = captured.lines();
        let floods = lines.iter().filter(|l| l.starts_with("flood")).count();
        assert_eq!(floods, LINES_PER_SOURCE as usize);
        assert!(lines.contains(&"a quiet client's one line".to_string()));
        assert!(lines.contains(&format!(
            "log: 980 lines from 10.9.9.0/24 suppressed in the last 10 s (at most {LINES_PER_SOURCE} a source, {LINES_IN_ALL} in all)"
        )));
        assert_eq!(lines.last().unwrap(), "next window");
    }

    #[test]
    fn many_sources_share_one_bound_and_the_table_stays_small() {
        let captured = Captured::default();
        let t0 = Instant::now();
        let log = Log::new(Box::new(captured.clone()), t0);
        for i in 0..5000u32 {
            let ip = format!("10.{}.{}.1", i / 256, i % 256);
            log.line_at(t0, peer(&ip), "x");
        }
        assert_eq!(captured.lines().len(), LINES_IN_ALL as usize);
        assert_eq!(log.lock().0.counts.len(), LINES_IN_ALL as usize);
        log.line_at(t0 + WINDOW, Key::Server, "later");
        let lines = captured.lines();
        assert!(lines.contains(&format!(
            "log: 4800 lines from other sources suppressed in the last 10 s (at most {LINES_IN_ALL} in all)"
        )));
    }

    #[test]
    fn a_line_is_escaped_and_cut() {
        let captured = Captured::default();
        let log = Log::new(Box::new(captured.clone()), Instant::now());
        let peer: SocketAddr = "10.9.9.9:1".parse().unwrap();
        log.client(
            peer,
            format!("x\nclient 1.2.3.4:5: FORGED\u{1b}[2J{}", "y".repeat(5000)),
        );
        let lines = captured.lines();
        assert_eq!(lines.len(), 1);
        assert!(
            lines[0].starts_with("client 10.9.9.9:1: x\\u{a}client 1.2.3.4:5: FORGED\\u{1b}[2J")
        );
        assert!(lines[0].len() <= LINE_BYTES + 32);
        assert!(!lines[0].chars().any(char::is_control));
    }
}
