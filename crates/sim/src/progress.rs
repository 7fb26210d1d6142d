//! What a run shows while it goes, and how it is asked to stop: a few atomics the loop writes
//! now and then and another thread reads (the front end's progress bar and its Ctrl-C).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Events between two updates: often enough for a bar redrawn a few times a second, rare
/// enough to cost nothing against the ~50 ns an event takes.
pub const EVENTS_PER_UPDATE: u64 = 1 << 14;

#[derive(Debug, Default)]
pub struct Progress {
    now_ns: AtomicU64,
    events: AtomicU64,
    stop: AtomicBool,
}

impl Progress {
    /// Simulated time reached, ns.
    pub fn now_ns(&self) -> u64 {
        self.now_ns.load(Ordering::Relaxed)
    }

    /// Events handled so far.
    pub fn events(&self) -> u64 {
        self.events.load(Ordering::Relaxed)
    }

    /// Ask the run to stop at its next update; it then returns `RunError::Stopped`.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }

    /// Called by the loop every [`EVENTS_PER_UPDATE`] events; says whether to go on.
    pub(crate) fn update(&self, now_ns: u64, events: u64) -> bool {
        self.now_ns.store(now_ns, Ordering::Relaxed);
        self.events.store(events, Ordering::Relaxed);
        !self.stop.load(Ordering::Relaxed)
    }
}
