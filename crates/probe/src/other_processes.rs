//! The other programs that used the CPU during a test: what a diagnosis names when the
//! transfer had to wait for a core.
//!
//! Each process's user and system time (`/proc/[pid]/stat`, proc(5)) is read once when the
//! test starts and once when it ends, never per interval: one pass costs one small read per
//! process (see docs/probe.md for the figure with 500 processes). A process that started
//! during the test counts from zero; one that ended before the test did is not seen.

use std::fs;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::escape::escape;
use crate::sys;

/// How many processes a report names.
pub const MOST: usize = 5;
/// `comm` is at most 15 bytes in the kernel (TASK_COMM_LEN); escaped, it may grow fourfold.
const COMM_BYTES: usize = 64;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct OtherProcess {
    pub pid: u32,
    /// The process's name (`comm`), escaped: another program chose it.
    pub command: String,
    /// CPU time over the test, as a share of one core.
    pub cores: f64,
}

impl OtherProcess {
    /// The same, safe to keep whoever sent it (a peer's report is not trusted).
    pub fn escaped(&self) -> Self {
        OtherProcess {
            command: escape(&self.command, COMM_BYTES),
            ..self.clone()
        }
    }
}

/// Every process's CPU ticks at one instant, sorted by pid.
pub struct ProcessTimes {
    at: Instant,
    ticks: Vec<(u32, u64)>,
}

impl ProcessTimes {
    pub fn now() -> Self {
        let at = Instant::now();
        let mut ticks: Vec<(u32, u64)> = read_all().map(|(pid, ticks, _)| (pid, ticks)).collect();
        ticks.sort_unstable();
        ProcessTimes { at, ticks }
    }

    /// The `MOST` processes other than this one that used the most CPU since `self`.
    pub fn busiest_since(&self) -> Vec<OtherProcess> {
        let mut used = self.used_since();
        used.truncate(MOST);
        used
    }

    /// Every process other than this one that used CPU since `self`, the busiest first.
    fn used_since(&self) -> Vec<OtherProcess> {
        let wall_s = self.at.elapsed().as_secs_f64();
        let ticks_per_s = sys::clock_ticks_per_s() as f64;
        let own = std::process::id();
        let mut used: Vec<OtherProcess> = read_all()
            .filter(|(pid, _, _)| *pid != own)
            .filter_map(|(pid, ticks, comm)| {
                let before = self
                    .ticks
                    .binary_search_by_key(&pid, |t| t.0)
                    .map_or(0, |i| self.ticks[i].1);
                let delta = ticks.checked_sub(before).filter(|d| *d > 0)?;
                Some(OtherProcess {
                    pid,
                    command: escape(&comm, COMM_BYTES),
                    cores: delta as f64 / ticks_per_s / wall_s.max(1e-9),
                })
            })
            .collect();
        used.sort_by(|a, b| b.cores.total_cmp(&a.cores));
        used
    }
}

/// (pid, utime + stime in clock ticks, comm) of every process /proc shows.
fn read_all() -> impl Iterator<Item = (u32, u64, String)> {
    fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(|entry| {
            let pid: u32 = entry.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = fs::read(format!("/proc/{pid}/stat")).ok()?;
            let (ticks, comm) = parse_stat(&String::from_utf8_lossy(&stat))?;
            Some((pid, ticks, comm))
        })
}

/// `pid (comm) state ppid ... utime stime ...`: comm may hold spaces and parentheses, so the
/// fields are counted from its last `)`; utime and stime are fields 14 and 15.
fn parse_stat(text: &str) -> Option<(u64, String)> {
    let open = text.find('(')?;
    let close = text.rfind(')')?;
    let comm = text.get(open + 1..close)?.to_string();
    let mut after = text.get(close + 1..)?.split_whitespace().skip(11);
    let utime: u64 = after.next()?.parse().ok()?;
    let stime: u64 = after.next()?.parse().ok()?;
    Some((utime + stime, comm))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn stat_is_read_past_a_name_with_spaces_and_parentheses() {
        let text = "4242 (a) b (c) R 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0\n";
        assert_eq!(parse_stat(text), Some((300, "a) b (c".to_string())));
        assert_eq!(parse_stat("12 (short) R 1"), None);
    }

    #[test]
    fn a_name_with_controls_is_escaped() {
        let peer = OtherProcess {
            pid: 1,
            command: "evil\n\u{1b}[2J".into(),
            cores: 0.5,
        };
        assert_eq!(peer.escaped().command, "evil\\u{a}\\u{1b}[2J");
    }

    #[test]
    fn a_spinning_child_is_named_and_this_process_is_not() {
        let before = ProcessTimes::now();
        let mut spinner = std::process::Command::new("sh")
            .args(["-c", "while :; do :; done"])
            .spawn()
            .unwrap();
        // This process spins too, to show it is left out however busy it is.
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let own = std::thread::spawn(move || {
            while !flag.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        std::thread::sleep(Duration::from_millis(600));
        // All of them: on a machine busy with other work the child need not be in the top 5.
        let used = before.used_since();
        stop.store(true, Ordering::Relaxed);
        own.join().unwrap();
        let _ = spinner.kill();
        let _ = spinner.wait();
        assert!(used.iter().all(|p| p.pid != std::process::id()));
        assert!(used.windows(2).all(|w| w[0].cores >= w[1].cores));
        let child = used.iter().find(|p| p.pid == spinner.id());
        // Clock ticks are 10 ms: the child's share is known to ±0.02 over 600 ms, and on a
        // machine with other work it gets less than a core; a tenth shows it ran.
        assert!(
            child.is_some_and(|c| c.command == "sh" && c.cores > 0.1),
            "{used:?}"
        );
    }
}
