//! What the CPUs did during a test, on one end: each core's busy and softirq shares
//! (`/proc/stat`); per thread of this process, the time it ran and the time it was runnable but
//! waited for a CPU (`/proc/self/task/*/schedstat`: a quota that throttles the cgroup and other
//! programs on the same core both show there); and the time its cgroup's CPU quota held it back
//! (`cpu.stat`, when that file is visible). A transfer is CPU-limited when the link is not full
//! and one of these is near its ceiling (docs/diagnose.md).
//!
//! Sampled every `INTERVAL` by a thread of its own, so a short burst near 100% is not averaged
//! away over the test; the report keeps each interval and the means.

use std::fs;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub const INTERVAL: Duration = Duration::from_millis(250);

/// One interval's shares, each in [0, 1] of one core (or of the wall time).
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct CpuInterval {
    pub t_ns: u64,
    /// Per core: the share not idle (iowait counts as idle).
    pub core_busy: Vec<f64>,
    /// Per core: the share spent in softirq (network receive work lands here).
    pub core_softirq: Vec<f64>,
    /// The busiest thread of this process, as a share of one core.
    pub busiest_thread: f64,
    /// The thread of this process that waited longest for a CPU while runnable, as a share
    /// of the interval.
    pub most_waiting_thread: f64,
    /// All of this process's threads, in cores.
    pub process_cores: f64,
    /// The share of the interval this process's cgroup was throttled by its CPU quota;
    /// `None` when no quota applies or the kernel does not say.
    pub throttled: Option<f64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct CpuReport {
    pub interval_ns: u64,
    pub intervals: Vec<CpuInterval>,
    /// The cgroup whose `cpu.stat` was read, if any.
    pub cgroup: Option<String>,
}

/// Cumulative counters at one instant.
#[derive(Debug, Clone, Default)]
struct Snapshot {
    at: Option<Instant>,
    /// Per core: (busy, softirq, total) in clock ticks.
    cores: Vec<(u64, u64, u64)>,
    /// Per thread id: (ns on a CPU, ns runnable and waiting).
    threads: Vec<(u32, (u64, u64))>,
    throttled_ns: Option<u64>,
}

pub struct CpuSampler {
    stop: Arc<AtomicBool>,
    handle: JoinHandle<CpuReport>,
}

impl CpuSampler {
    pub fn start(start: Instant) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let handle = thread::spawn(move || sample_loop(start, &flag));
        CpuSampler { stop, handle }
    }

    pub fn finish(self) -> CpuReport {
        self.stop.store(true, Ordering::Relaxed);
        self.handle.join().unwrap_or_default()
    }
}

fn sample_loop(start: Instant, stop: &AtomicBool) -> CpuReport {
    let cgroup = CpuCgroup::of_this_process();
    let mut report = CpuReport {
        interval_ns: INTERVAL.as_nanos() as u64,
        intervals: Vec::new(),
        cgroup: cgroup.as_ref().map(|c| c.stat.display().to_string()),
    };
    let mut before = snapshot(cgroup.as_ref());
    let mut tick: u32 = 1;
    while !stop.load(Ordering::Relaxed) {
        // Short sleeps, so that finishing does not wait a whole interval.
        if Instant::now() < start + INTERVAL * tick {
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        let after = snapshot(cgroup.as_ref());
        let t_ns = start.elapsed().as_nanos() as u64;
        report.intervals.extend(interval(&before, &after, t_ns));
        before = after;
        tick += 1;
    }
    report
}

fn snapshot(cgroup: Option<&CpuCgroup>) -> Snapshot {
    Snapshot {
        at: Some(Instant::now()),
        cores: fs::read_to_string("/proc/stat")
            .map(|text| parse_cores(&text))
            .unwrap_or_default(),
        threads: thread_schedstats(),
        throttled_ns: cgroup.and_then(CpuCgroup::throttled_ns),
    }
}

fn interval(before: &Snapshot, after: &Snapshot, t_ns: u64) -> Option<CpuInterval> {
    let wall_s = after.at?.duration_since(before.at?).as_secs_f64();
    if wall_s <= 0.0 || before.cores.len() != after.cores.len() {
        return None;
    }
    let share = |(busy0, soft0, total0): (u64, u64, u64),
                 (busy1, soft1, total1): (u64, u64, u64)| {
        let total = total1.saturating_sub(total0).max(1) as f64;
        (
            busy1.saturating_sub(busy0) as f64 / total,
            soft1.saturating_sub(soft0) as f64 / total,
        )
    };
    let (core_busy, core_softirq) = before
        .cores
        .iter()
        .zip(&after.cores)
        .map(|(b, a)| share(*b, *a))
        .unzip();
    let (running, waiting): (Vec<f64>, Vec<f64>) = after
        .threads
        .iter()
        .map(|(tid, (ran_ns, waited_ns))| {
            let earlier = before.threads.iter().find(|(t, _)| t == tid);
            let (ran0, waited0) = earlier.map_or((0, 0), |t| t.1);
            let share = |now: u64, then: u64| now.saturating_sub(then) as f64 / 1e9 / wall_s;
            (share(*ran_ns, ran0), share(*waited_ns, waited0))
        })
        .unzip();
    let max = |values: &[f64]| values.iter().copied().fold(0.0, f64::max).min(1.0);
    let throttled = match (before.throttled_ns, after.throttled_ns) {
        (Some(b), Some(a)) => Some((a.saturating_sub(b) as f64 / 1e9 / wall_s).min(1.0)),
        _ => None,
    };
    Some(CpuInterval {
        t_ns,
        core_busy,
        core_softirq,
        busiest_thread: max(&running),
        most_waiting_thread: max(&waiting),
        process_cores: running.iter().sum(),
        throttled,
    })
}

/// `cpuN user nice system idle iowait irq softirq steal ...` lines (proc(5)); guest time is
/// already inside user and nice.
fn parse_cores(text: &str) -> Vec<(u64, u64, u64)> {
    text.lines()
        .filter(|line| line.starts_with("cpu") && !line.starts_with("cpu "))
        .map(|line| {
            let fields: Vec<u64> = line
                .split_whitespace()
                .skip(1)
                .take(8)
                .map(|f| f.parse().unwrap_or(0))
                .collect();
            let get = |i: usize| fields.get(i).copied().unwrap_or(0);
            let total: u64 = fields.iter().sum();
            let idle = get(3) + get(4);
            (total - idle, get(6), total)
        })
        .collect()
}

/// Per thread of this process: ns on a CPU and ns runnable but waiting (the first two fields
/// of `schedstat`, Documentation/scheduler/sched-stats.rst).
fn thread_schedstats() -> Vec<(u32, (u64, u64))> {
    let Ok(entries) = fs::read_dir("/proc/self/task") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let tid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let text = fs::read_to_string(entry.path().join("schedstat")).ok()?;
            Some((tid, parse_schedstat(&text)?))
        })
        .collect()
}

fn parse_schedstat(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}

/// The `cpu.stat` of this process's CPU cgroup, v2 (`throttled_usec`) or v1 (`throttled_time`,
/// ns), found through `/proc/self/cgroup` and the mounts.
struct CpuCgroup {
    stat: PathBuf,
    v2: bool,
}

impl CpuCgroup {
    fn of_this_process() -> Option<Self> {
        let membership = fs::read_to_string("/proc/self/cgroup").ok()?;
        let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
        let found = find_cpu_stat(&membership, &mounts)?;
        found.0.exists().then_some(CpuCgroup {
            stat: found.0,
            v2: found.1,
        })
    }

    fn throttled_ns(&self) -> Option<u64> {
        let text = fs::read_to_string(&self.stat).ok()?;
        let (key, scale) = if self.v2 {
            ("throttled_usec", 1000)
        } else {
            ("throttled_time", 1)
        };
        text.lines()
            .find_map(|line| line.strip_prefix(key)?.trim().parse::<u64>().ok())
            .map(|v| v * scale)
    }
}

/// (path of cpu.stat, is cgroup v2). The v1 `cpu` controller wins when it is mounted: on a
/// hybrid host the v2 hierarchy then has no CPU controller.
fn find_cpu_stat(membership: &str, mountinfo: &str) -> Option<(PathBuf, bool)> {
    let mut v1_mount = None;
    let mut v2_mount = None;
    for line in mountinfo.lines() {
        let Some((left, right)) = line.split_once(" - ") else {
            continue;
        };
        let mut right = right.split_whitespace();
        let (Some(mount_point), Some(fstype)) = (left.split_whitespace().nth(4), right.next())
        else {
            continue;
        };
        let options = right.nth(1).unwrap_or("");
        if fstype == "cgroup" && options.split(',').any(|o| o == "cpu") {
            v1_mount = Some(mount_point.to_string());
        } else if fstype == "cgroup2" {
            v2_mount = Some(mount_point.to_string());
        }
    }
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let relative = path.trim_start_matches('/');
        if controllers.split(',').any(|c| c == "cpu") {
            if let Some(mount) = &v1_mount {
                return Some((PathBuf::from(mount).join(relative).join("cpu.stat"), false));
            }
        }
        if controllers.is_empty() && v1_mount.is_none() {
            if let Some(mount) = &v2_mount {
                return Some((PathBuf::from(mount).join(relative).join("cpu.stat"), true));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_stat_cores_count_softirq_and_iowait_as_the_kernel_does() {
        let text = "cpu  1 2 3 4 5 6 7 8 0 0\ncpu0 10 0 10 70 10 0 5 0 0 0\ncpu1 0 0 0 100 0 0 0 0 0 0\nintr 1\n";
        let cores = parse_cores(text);
        assert_eq!(cores, vec![(25, 5, 105), (0, 0, 100)]);
    }

    #[test]
    fn schedstat_gives_running_and_waiting_ns() {
        assert_eq!(
            parse_schedstat("302871830 777212251 857\n"),
            Some((302871830, 777212251))
        );
        assert_eq!(parse_schedstat("12"), None);
    }

    #[test]
    fn v1_cpu_controller_is_found_on_a_hybrid_host() {
        let membership = "4:memory:/x\n1:cpu:/lab/probe\n0::/\n";
        let mounts = "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                      40 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let (path, v2) = find_cpu_stat(membership, mounts).unwrap();
        assert_eq!(path, PathBuf::from("/sys/fs/cgroup/cpu/lab/probe/cpu.stat"));
        assert!(!v2);
    }

    #[test]
    fn v2_is_used_when_no_v1_cpu_controller_is_mounted() {
        let membership = "0::/user.slice/probe\n";
        let mounts = "40 25 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let (path, v2) = find_cpu_stat(membership, mounts).unwrap();
        assert_eq!(
            path,
            PathBuf::from("/sys/fs/cgroup/user.slice/probe/cpu.stat")
        );
        assert!(v2);
    }

    #[test]
    fn a_spinning_thread_is_running_or_waiting_all_the_time() {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let spinner = thread::spawn(move || {
            let mut x = 0u64;
            while !flag.load(Ordering::Relaxed) {
                x = x.wrapping_add(1);
            }
            x
        });
        let sampler = CpuSampler::start(Instant::now());
        thread::sleep(Duration::from_millis(1100));
        let report = sampler.finish();
        stop.store(true, Ordering::Relaxed);
        spinner.join().unwrap();
        // Always runnable, the spinner either runs or waits for a CPU: the two shares add up
        // to the whole interval however loaded the machine is (other threads of this test
        // process can only raise either maximum).
        let accounted = report
            .intervals
            .iter()
            .map(|i| i.busiest_thread + i.most_waiting_thread)
            .fold(0.0, f64::max);
        assert!(accounted > 0.9, "{report:?}");
        assert!(report.intervals.len() >= 3);
    }
}
