//! Watching the control connection during a test: the client sends `stop` when its user
//! presses Ctrl-C, and a closed connection means the same.
//!
//! The watcher reads from a second descriptor of the control socket on its own thread. It
//! must not outlive the test: a client that finishes and keeps its control connection open
//! would otherwise leave one thread and one descriptor behind per test, past any bound on
//! clients. So it looks for data in short waits and ends when the test does; dropping the
//! `StopWatch` ends and joins it.

use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::datapath;
use crate::proto::{self, MAX_REQUEST_FRAME_BYTES};

/// How long the watcher gives a message that has begun to arrive.
const MESSAGE_TIMEOUT: Duration = Duration::from_secs(1);
/// How often the watcher looks whether the test is over: its end waits this long at most,
/// and a hundred wake-ups a second cost a test nothing it would measure.
const POLL: Duration = Duration::from_millis(10);

pub struct StopWatch {
    stop: Arc<AtomicBool>,
    done: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl StopWatch {
    /// Watches `control` until `until` or until dropped.
    pub fn start(control: &TcpStream, until: Instant) -> StopWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let done = Arc::new(AtomicBool::new(false));
        let thread = control.try_clone().ok().map(|watcher| {
            let (stop, done) = (Arc::clone(&stop), Arc::clone(&done));
            thread::spawn(move || watch(watcher, &stop, &done, until))
        });
        StopWatch { stop, done, thread }
    }

    /// Set once the client said stop or went away.
    pub fn flag(&self) -> &Arc<AtomicBool> {
        &self.stop
    }
}

fn watch(mut watcher: TcpStream, stop: &AtomicBool, done: &AtomicBool, until: Instant) {
    let _ = watcher.set_read_timeout(Some(POLL));
    let mut first = [0u8; 1];
    while !done.load(Ordering::Relaxed) && Instant::now() < until {
        match watcher.peek(&mut first) {
            Err(e) if datapath::is_retry(&e) => continue,
            Ok(n) if n > 0 => {
                // Read the message: unread bytes at close would reset the connection and
                // could destroy the results sent just before.
                let deadline = Instant::now() + MESSAGE_TIMEOUT;
                let _ = proto::receive(&mut watcher, MAX_REQUEST_FRAME_BYTES, deadline, "stop");
            }
            // Closed, reset, or a message: the client wants the test over.
            _ => {}
        }
        stop.store(true, Ordering::Relaxed);
        return;
    }
}

impl Drop for StopWatch {
    fn drop(&mut self) {
        self.done.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Message;
    use crate::test_sockets::connected_pair as pair;

    fn wait_for(flag: &AtomicBool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if flag.load(Ordering::Relaxed) {
                return true;
            }
            thread::sleep(Duration::from_millis(5));
        }
        false
    }

    #[test]
    fn a_stop_message_or_a_close_sets_the_flag() {
        let far = Instant::now() + Duration::from_secs(60);
        let (mut client, server) = pair();
        let watch = StopWatch::start(&server, far);
        proto::send(&mut client, &Message::Stop {}).unwrap();
        assert!(wait_for(watch.flag()));
        let (client, server) = pair();
        let watch = StopWatch::start(&server, far);
        drop(client);
        assert!(wait_for(watch.flag()));
    }

    #[test]
    fn the_watcher_ends_with_the_test_though_the_client_stays_silent() {
        let (_client, server) = pair();
        let watch = StopWatch::start(&server, Instant::now() + Duration::from_secs(300));
        thread::sleep(Duration::from_millis(120));
        let flag = Arc::clone(watch.flag());
        let dropped = Instant::now();
        drop(watch);
        // Joined within one poll interval (10 ms), with room for a loaded machine.
        assert!(
            dropped.elapsed() < Duration::from_millis(500),
            "{:?}",
            dropped.elapsed()
        );
        assert!(!flag.load(Ordering::Relaxed));
    }
}
