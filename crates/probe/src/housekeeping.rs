//! The server's periodic chores, on one thread: closing the log's window (so suppressed
//! counts are written even after a flood stops) and sweeping stale partial files.

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use crate::log::log;
use crate::root::Root;
use crate::stale;

const TICK: Duration = Duration::from_secs(1);

/// Starts the chores' thread. It sweeps the root at once (a restarted server finds what its
/// last run left) without holding up the listening socket, then every `stale::interval`.
pub fn start(root: Arc<Option<Root>>, stale_after: Duration) {
    let every = stale::interval(stale_after);
    let spawned = thread::Builder::new()
        .name("housekeeping".into())
        .spawn(move || {
            sweep(root.as_ref().as_ref(), stale_after);
            let mut next_sweep = Instant::now() + every;
            loop {
                thread::sleep(TICK);
                log().tick();
                if Instant::now() >= next_sweep {
                    sweep(root.as_ref().as_ref(), stale_after);
                    next_sweep = Instant::now() + every;
                }
            }
        });
    if let Err(e) = spawned {
        log().server(format!(
            "no housekeeping thread ({e}): stale partial files stay"
        ));
    }
}

fn sweep(root: Option<&Root>, stale_after: Duration) {
    let Some(root) = root else {
        return;
    };
    let cleaned = root.clean_stale(stale_after);
    if cleaned.files > 0 {
        log().server(format!(
            "removed {} stale partial files ({} bytes on disk), unwritten for over {} s",
            cleaned.files,
            cleaned.bytes,
            stale_after.as_secs()
        ));
    }
}
