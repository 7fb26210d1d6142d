//! What the CPUs did during a test, on one end: each core's busy and softirq shares
//! (`/proc/stat`); per thread of this process, the time it ran and the time it was runnable but
//! waited for a CPU (`/proc/self/task/*/schedstat`: a quota that throttles the cgroup and other
//! programs on the same core both show there); the time its cgroup's CPU quota held it back and,
//! under a quota, the group's use of it and the share of periods throttled (`cpu_cgroup.rs`,
//! when the cgroup's files are visible); and over the whole test, the other processes that used
//! the CPU most (`other_processes.rs`). A transfer is CPU-limited when the link is not full and
//! one of these is near its ceiling (docs/diagnose.md).
//!
//! Sampled every `INTERVAL` by a thread of its own, so a short burst near 100% is not averaged
//! away over the test; the report keeps each interval and the means.

use std::fs;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::cpu_cgroup::{CpuCgroup, QuotaCounters};
use crate::other_processes::{self, OtherProcess, ProcessTimes};

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
    /// The share of the interval the busiest thread was runnable (running or waiting for a
    /// CPU): 1 for a thread that never sleeps, whatever it got. The busiest thread's, not the
    /// largest of any thread's: a thread that wakes often and waits each time for a loaded
    /// CPU shows a large runnable share while it hardly needs one.
    #[serde(default)]
    pub busiest_thread_runnable: f64,
    /// All of this process's threads, in cores.
    pub process_cores: f64,
    /// The share of the interval this process's cgroup was throttled by its CPU quota;
    /// `None` when no quota applies or the kernel does not say.
    pub throttled: Option<f64>,
    /// The CPU quota binding this process's cgroup (its own or an ancestor's) over the
    /// interval, its fields beside the others.
    #[serde(flatten)]
    pub quota: QuotaInterval,
}

/// A CPU quota over one interval (Documentation/scheduler/sched-bwc.rst); every field `None`
/// without a quota or when the cgroup's files are not visible.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct QuotaInterval {
    /// The quota, in cores (quota / period).
    pub quota_cores: Option<f64>,
    /// The cgroup's CPU use over the interval, as a share of the quota (1 = all of it; a
    /// little over 1 is a period's overrun).
    pub quota_used: Option<f64>,
    /// Of the enforcement periods that ended in the interval, the share in which the group
    /// ran out of quota (0 when none ended: the group did not run).
    pub throttled_periods: Option<f64>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct CpuReport {
    pub interval_ns: u64,
    pub intervals: Vec<CpuInterval>,
    /// The cgroup whose `cpu.stat` was read, if any.
    pub cgroup: Option<String>,
    /// Over the whole test, the other processes that used the CPU most (at most
    /// `other_processes::MOST`, the busiest first; this process left out).
    #[serde(default)]
    pub others: Vec<OtherProcess>,
    /// What finding them cost: the CPU time of the two passes over /proc, summed.
    #[serde(default)]
    pub others_scan_cpu_ns: u64,
    /// The quota's figures over the whole test: with an enforcement period longer than the
    /// interval (a period of 1 s lets the group run its quota at once, then holds it), the
    /// intervals' figures swing from several times the quota to a fraction of it.
    #[serde(default)]
    pub whole_test_quota: QuotaInterval,
}

impl CpuReport {
    /// The report as a client keeps a server's: at most `MOST` processes, every peer-chosen
    /// text escaped (a server is a stranger to the client as much as the reverse).
    pub fn sanitized(mut self) -> Self {
        self.others.truncate(other_processes::MOST);
        self.others = self.others.iter().map(OtherProcess::escaped).collect();
        self.cgroup = self.cgroup.map(|c| crate::escape::peer(&c));
        self
    }
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
    quota: Option<QuotaCounters>,
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
    let scan_started = thread_cpu_ns();
    let processes = ProcessTimes::now();
    let first_scan_ns = thread_cpu_ns() - scan_started;
    let mut cgroup = CpuCgroup::of_this_process();
    let mut report = CpuReport {
        interval_ns: INTERVAL.as_nanos() as u64,
        cgroup: cgroup.as_ref().map(|c| c.stat.display().to_string()),
        ..CpuReport::default()
    };
    let first = snapshot(cgroup.as_mut());
    let mut before = first.clone();
    let mut tick: u32 = 1;
    while !stop.load(Ordering::Relaxed) {
        // Short sleeps, so that finishing does not wait a whole interval.
        if Instant::now() < start + INTERVAL * tick {
            thread::sleep(Duration::from_millis(10));
            continue;
        }
        let after = snapshot(cgroup.as_mut());
        let elapsed = start.elapsed();
        report
            .intervals
            .extend(interval(&before, &after, elapsed.as_nanos() as u64));
        before = after;
        tick = next_tick(tick, elapsed);
    }
    let wall_s = first.at.map_or(0.0, |at| at.elapsed().as_secs_f64());
    let last_quota = cgroup.as_mut().and_then(CpuCgroup::quota_counters);
    report.whole_test_quota = quota_interval(first.quota, last_quota, wall_s).unwrap_or_default();
    let scan_started = thread_cpu_ns();
    report.others = processes.busiest_since();
    report.others_scan_cpu_ns = first_scan_ns + (thread_cpu_ns() - scan_started);
    report
}

/// The tick after one read at `elapsed`: the next, unless this reading came late (this
/// thread throttled by a quota, or starved); then the first at least half an interval away,
/// so that no interval is a sliver whose shares are noise.
fn next_tick(tick: u32, elapsed: Duration) -> u32 {
    let half_ahead = (elapsed + INTERVAL / 2).as_nanos();
    let due = half_ahead.div_ceil(INTERVAL.as_nanos()) as u32;
    (tick + 1).max(due)
}

/// The CPU time this thread has used, in ns (0 if the clock cannot be read).
fn thread_cpu_ns() -> u64 {
    nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID).map_or(0, |t| {
        t.tv_sec() as u64 * 1_000_000_000 + t.tv_nsec() as u64
    })
}

fn snapshot(cgroup: Option<&mut CpuCgroup>) -> Snapshot {
    Snapshot {
        at: Some(Instant::now()),
        cores: fs::read_to_string("/proc/stat")
            .map(|text| parse_cores(&text))
            .unwrap_or_default(),
        threads: thread_schedstats(),
        throttled_ns: cgroup.as_deref().and_then(CpuCgroup::throttled_ns),
        quota: cgroup.and_then(CpuCgroup::quota_counters),
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
    let busiest = (0..running.len()).max_by(|&a, &b| running[a].total_cmp(&running[b]));
    let busiest_runnable = busiest.map_or(0.0, |i| (running[i] + waiting[i]).min(1.0));
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
        busiest_thread_runnable: busiest_runnable,
        process_cores: running.iter().sum(),
        throttled,
        quota: quota_interval(before.quota, after.quota, wall_s).unwrap_or_default(),
    })
}

fn quota_interval(
    before: Option<QuotaCounters>,
    after: Option<QuotaCounters>,
    wall_s: f64,
) -> Option<QuotaInterval> {
    let (before, after) = (before?, after?);
    let used_s = after.usage_ns.saturating_sub(before.usage_ns) as f64 / 1e9;
    let periods = after.periods.saturating_sub(before.periods);
    let throttled = after
        .throttled_periods
        .saturating_sub(before.throttled_periods);
    Some(QuotaInterval {
        quota_cores: Some(after.quota_cores),
        quota_used: Some(used_s / (after.quota_cores * wall_s)),
        throttled_periods: Some(if periods == 0 {
            0.0
        } else {
            (throttled as f64 / periods as f64).min(1.0)
        }),
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
    fn a_quota_interval_is_the_use_and_the_throttled_periods_between_readings() {
        let at = |usage_ms: u64, periods: u64, throttled_periods: u64| QuotaCounters {
            quota_cores: 0.5,
            usage_ns: usage_ms * 1_000_000,
            periods,
            throttled_periods,
        };
        // 0.25 s at half a core allows 125 ms; 100 ms were used.
        let share = quota_interval(Some(at(1000, 10, 2)), Some(at(1100, 13, 4)), 0.25).unwrap();
        assert!((share.quota_used.unwrap() - 0.8).abs() < 1e-12, "{share:?}");
        assert!((share.throttled_periods.unwrap() - 2.0 / 3.0).abs() < 1e-12);
        let idle = quota_interval(Some(at(5, 3, 1)), Some(at(5, 3, 1)), 0.25).unwrap();
        assert_eq!(idle.throttled_periods, Some(0.0));
        assert_eq!(quota_interval(None, Some(at(1, 1, 1)), 0.25), None);
    }

    #[test]
    fn a_late_reading_skips_to_a_tick_at_least_half_an_interval_away() {
        let ms = Duration::from_millis;
        // On time (INTERVAL = 250 ms): the next tick.
        assert_eq!(next_tick(4, ms(1001)), 5);
        // Read at 1.97 s for the tick of 1 s: not 2 s (30 ms away) but 2.25 s.
        assert_eq!(next_tick(4, ms(1970)), 9);
        assert_eq!(next_tick(4, ms(1870)), 8, "2 s is 130 ms away");
    }

    #[test]
    fn a_peers_report_keeps_a_few_processes_escaped() {
        let hog = |pid: u32| OtherProcess {
            pid,
            command: "hog\n\u{1b}[2J".into(),
            cores: 1.0,
        };
        let report = CpuReport {
            others: (0..1000).map(hog).collect(),
            cgroup: Some("/x\nforged".into()),
            ..Default::default()
        }
        .sanitized();
        assert_eq!(report.others.len(), other_processes::MOST);
        assert_eq!(report.others[0].command, "hog\\u{a}\\u{1b}[2J");
        assert_eq!(report.cgroup.as_deref(), Some("/x\\u{a}forged"));
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
        // The same, of one thread, the busiest: never asleep, so runnable all of every
        // interval after the first (which may open before the spinner starts); 0.9 leaves
        // room for the timing of the readings.
        let runnable = report.intervals[1..]
            .iter()
            .map(|i| i.busiest_thread_runnable);
        assert!(
            runnable.clone().all(|r| r > 0.9),
            "{:?}",
            runnable.collect::<Vec<_>>()
        );
        assert!(report.intervals.len() >= 3);
    }
}
