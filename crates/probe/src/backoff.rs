//! Waiting out an accept that failed for want of a resource.
//!
//! When the process is out of descriptors (EMFILE), the system out of them (ENFILE) or of
//! memory, `accept` fails at once and keeps failing while the connection waits in the
//! backlog: retrying at once only spins a core and starves the tests that would free the
//! descriptors. Such failures pause the accept loop, doubling the pause up to a bound; the
//! first success resets it. Other failures (a connection reset before it was accepted) are
//! about one connection and are retried at once.

use std::io;
use std::time::Duration;

const FIRST_PAUSE: Duration = Duration::from_millis(10);
/// A connection waits at most this long in the backlog beyond what freeing a descriptor takes.
const LONGEST_PAUSE: Duration = Duration::from_secs(1);

pub struct Backoff {
    next: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Backoff { next: FIRST_PAUSE }
    }
}

impl Backoff {
    /// How long to pause after `error`: None when it is about one connection only.
    pub fn after(&mut self, error: &io::Error) -> Option<Duration> {
        let exhausted = matches!(
            error.raw_os_error(),
            Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
        );
        if !exhausted {
            return None;
        }
        let pause = self.next;
        self.next = (self.next * 2).min(LONGEST_PAUSE);
        Some(pause)
    }

    pub fn reset(&mut self) {
        self.next = FIRST_PAUSE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exhaustion_pauses_longer_each_time_up_to_a_bound_and_success_resets() {
        let mut backoff = Backoff::default();
        let emfile = io::Error::from_raw_os_error(libc::EMFILE);
        let pauses: Vec<u64> = (0..9)
            .map(|_| backoff.after(&emfile).unwrap().as_millis() as u64)
            .collect();
        assert_eq!(pauses, [10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
        backoff.reset();
        assert_eq!(backoff.after(&emfile), Some(FIRST_PAUSE));
        let aborted = io::Error::from_raw_os_error(libc::ECONNABORTED);
        assert_eq!(backoff.after(&aborted), None);
    }
}
