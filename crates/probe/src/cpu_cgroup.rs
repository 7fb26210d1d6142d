//! This process's CPU cgroup: the time its quota held it back, and the quota itself.
//!
//! On Linux 6.x a task over its quota is throttled only on its way back to user space, so a
//! receiver that spends its time in the kernel shows little `throttled_usec`. What a quota
//! leaves no doubt about is the group's use against the quota and how many enforcement
//! periods ended throttled (`nr_throttled` of `nr_periods`, Documentation/scheduler/
//! sched-bwc.rst). The binding quota is the smallest, in cores, of the group's own and its
//! ancestors' (each level enforces its own); its group's counters are the ones read.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

/// The cgroup's files, found once when sampling starts.
pub struct CpuCgroup {
    /// The `cpu.stat` of the process's own group.
    pub stat: PathBuf,
    v2: bool,
    quota: Option<QuotaGroup>,
}

/// The group whose quota binds, and where its usage is counted.
struct QuotaGroup {
    dir: PathBuf,
    usage: UsageSource,
}

enum UsageSource {
    /// v2: `usage_usec` of `cpu.stat`.
    CpuStat,
    /// v1 with `cpuacct` mounted beside `cpu`: `cpuacct.usage`, ns.
    Cpuacct,
    /// v1 with `cpuacct` mounted apart (its groups are not these): the run time of the tasks
    /// listed in the group, from their `schedstat`, accumulated reading by reading. A thread
    /// that exits takes its time since the last reading with it.
    Tasks(TaskTimes),
}

/// The group's tasks' run time summed over readings: each reading adds what every listed
/// thread ran since the one before (all of it for a thread not seen before).
#[derive(Default)]
struct TaskTimes {
    last_ns: HashMap<u32, u64>,
    total_ns: u64,
}

impl TaskTimes {
    fn read(&mut self, tasks: &Path) -> u64 {
        self.add(tasks_run_ns(tasks))
    }

    fn add(&mut self, now: HashMap<u32, u64>) -> u64 {
        for (tid, ran_ns) in &now {
            let before = self.last_ns.get(tid).copied().unwrap_or(0);
            self.total_ns += ran_ns.saturating_sub(before);
        }
        self.last_ns = now;
        self.total_ns
    }
}

/// The quota's cumulative counters at one instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuotaCounters {
    pub quota_cores: f64,
    pub usage_ns: u64,
    pub periods: u64,
    pub throttled_periods: u64,
}

impl CpuCgroup {
    pub fn of_this_process() -> Option<Self> {
        Self::of_process("self")
    }

    /// `pid` as named under /proc: a number or `self`.
    fn of_process(pid: &str) -> Option<Self> {
        let membership = fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
        let mounts = fs::read_to_string(format!("/proc/{pid}/mountinfo")).ok()?;
        let found = find_cpu_cgroup(&membership, &mounts)?;
        let dir = found.mount.join(&found.relative);
        let stat = dir.join("cpu.stat");
        if !stat.exists() {
            return None;
        }
        let quota = binding_quota_dir(&found.mount, &dir, found.v2).map(|dir| {
            let usage = if found.v2 {
                UsageSource::CpuStat
            } else if dir.join("cpuacct.usage").exists() {
                UsageSource::Cpuacct
            } else {
                UsageSource::Tasks(TaskTimes::default())
            };
            QuotaGroup { dir, usage }
        });
        Some(CpuCgroup {
            stat,
            v2: found.v2,
            quota,
        })
    }

    /// The time the group was throttled, v2 `throttled_usec` or v1 `throttled_time` (ns).
    pub fn throttled_ns(&self) -> Option<u64> {
        let text = fs::read_to_string(&self.stat).ok()?;
        if self.v2 {
            stat_value(&text, "throttled_usec").map(|v| v * 1000)
        } else {
            stat_value(&text, "throttled_time")
        }
    }

    /// The binding quota's counters; `None` without a quota (or once it is lifted).
    pub fn quota_counters(&mut self) -> Option<QuotaCounters> {
        let group = self.quota.as_mut()?;
        let quota_cores = read_quota_cores(&group.dir, self.v2)?;
        let stat = fs::read_to_string(group.dir.join("cpu.stat")).ok()?;
        let usage_ns = match &mut group.usage {
            UsageSource::CpuStat => stat_value(&stat, "usage_usec")? * 1000,
            UsageSource::Cpuacct => fs::read_to_string(group.dir.join("cpuacct.usage"))
                .ok()?
                .trim()
                .parse()
                .ok()?,
            UsageSource::Tasks(times) => times.read(&group.dir.join("tasks")),
        };
        Some(QuotaCounters {
            quota_cores,
            usage_ns,
            periods: stat_value(&stat, "nr_periods")?,
            throttled_periods: stat_value(&stat, "nr_throttled")?,
        })
    }
}

/// Of `dir` and its ancestors up to the mount, the one with the smallest quota in cores.
fn binding_quota_dir(mount: &Path, dir: &Path, v2: bool) -> Option<PathBuf> {
    dir.ancestors()
        .take_while(|d| d.starts_with(mount))
        .filter_map(|d| Some((read_quota_cores(d, v2)?, d)))
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, d)| d.to_path_buf())
}

fn read_quota_cores(dir: &Path, v2: bool) -> Option<f64> {
    let (quota_us, period_us) = if v2 {
        parse_cpu_max(&fs::read_to_string(dir.join("cpu.max")).ok()?)?
    } else {
        let quota = fs::read_to_string(dir.join("cpu.cfs_quota_us")).ok()?;
        let period = fs::read_to_string(dir.join("cpu.cfs_period_us")).ok()?;
        parse_v1_quota(&quota, &period)?
    };
    Some(quota_us as f64 / period_us as f64)
}

/// v2 `cpu.max`: `$MAX $PERIOD` in µs, `max` for no quota.
fn parse_cpu_max(text: &str) -> Option<(u64, u64)> {
    let mut fields = text.split_whitespace();
    let quota = fields.next()?.parse().ok()?;
    let period: u64 = fields.next()?.parse().ok()?;
    (period > 0).then_some((quota, period))
}

/// v1 `cpu.cfs_quota_us` (-1 for no quota) and `cpu.cfs_period_us`.
fn parse_v1_quota(quota: &str, period: &str) -> Option<(u64, u64)> {
    let quota = quota.trim().parse::<i64>().ok()?;
    let period = period.trim().parse::<u64>().ok()?;
    (quota > 0 && period > 0).then_some((quota as u64, period))
}

/// The value of `key` in a `cpu.stat`-style file of `key value` lines.
fn stat_value(text: &str, key: &str) -> Option<u64> {
    text.lines().find_map(|line| {
        let (name, value) = line.split_once(' ')?;
        (name == key).then(|| value.trim().parse().ok())?
    })
}

/// The run time (first field of `schedstat`) of each thread id listed in `tasks`.
fn tasks_run_ns(tasks: &Path) -> HashMap<u32, u64> {
    let Ok(list) = fs::read_to_string(tasks) else {
        return HashMap::new();
    };
    list.lines()
        .filter_map(|tid| {
            let tid: u32 = tid.trim().parse().ok()?;
            let text = fs::read_to_string(format!("/proc/{tid}/schedstat")).ok()?;
            Some((tid, text.split_whitespace().next()?.parse::<u64>().ok()?))
        })
        .collect()
}

/// Where the process's CPU cgroup is: a mount point and the group's path below it.
#[derive(Debug, PartialEq)]
struct Found {
    mount: PathBuf,
    relative: PathBuf,
    v2: bool,
}

/// The v1 `cpu` controller wins when it is mounted: on a hybrid host the v2 hierarchy then
/// has no CPU controller.
fn find_cpu_cgroup(membership: &str, mountinfo: &str) -> Option<Found> {
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
            v1_mount = Some(PathBuf::from(mount_point));
        } else if fstype == "cgroup2" {
            v2_mount = Some(PathBuf::from(mount_point));
        }
    }
    for line in membership.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let relative = PathBuf::from(path.trim_start_matches('/'));
        let (mount, v2) = if controllers.split(',').any(|c| c == "cpu") {
            (v1_mount.clone(), false)
        } else if controllers.is_empty() && v1_mount.is_none() {
            (v2_mount.clone(), true)
        } else {
            continue;
        };
        if let Some(mount) = mount {
            return Some(Found {
                mount,
                relative,
                v2,
            });
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v1_cpu_controller_is_found_on_a_hybrid_host() {
        let membership = "4:memory:/x\n1:cpu:/lab/probe\n0::/\n";
        let mounts = "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                      40 25 0:27 / /sys/fs/cgroup/unified rw - cgroup2 cgroup2 rw\n";
        let found = find_cpu_cgroup(membership, mounts).unwrap();
        assert_eq!(
            found.mount.join(&found.relative),
            PathBuf::from("/sys/fs/cgroup/cpu/lab/probe")
        );
        assert!(!found.v2);
    }

    #[test]
    fn v2_is_used_when_no_v1_cpu_controller_is_mounted() {
        let membership = "0::/user.slice/probe\n";
        let mounts = "40 25 0:27 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let found = find_cpu_cgroup(membership, mounts).unwrap();
        assert_eq!(found.mount, PathBuf::from("/sys/fs/cgroup"));
        assert_eq!(found.relative, PathBuf::from("user.slice/probe"));
        assert!(found.v2);
    }

    #[test]
    fn quotas_parse_and_no_quota_is_none() {
        assert_eq!(parse_cpu_max("20000 100000\n"), Some((20000, 100000)));
        assert_eq!(parse_cpu_max("max 100000\n"), None);
        assert_eq!(parse_v1_quota("50000\n", "100000\n"), Some((50000, 100000)));
        assert_eq!(parse_v1_quota("-1\n", "100000\n"), None);
    }

    #[test]
    fn cpu_stat_values_are_read_by_whole_key() {
        let v2 = "usage_usec 9000\nuser_usec 5000\nnr_periods 40\nnr_throttled 30\n\
                  throttled_usec 700\n";
        assert_eq!(stat_value(v2, "usage_usec"), Some(9000));
        assert_eq!(stat_value(v2, "nr_throttled"), Some(30));
        assert_eq!(stat_value(v2, "throttled"), None);
        let v1 = "nr_periods 12\nnr_throttled 11\nthrottled_time 123456\n";
        assert_eq!(stat_value(v1, "throttled_time"), Some(123456));
    }

    #[test]
    fn task_run_times_keep_what_exited_threads_ran() {
        let mut times = TaskTimes::default();
        assert_eq!(times.add(HashMap::from([(1, 100), (2, 50)])), 150);
        // Thread 2 exited after running 50 ns; thread 1 ran 30 more.
        assert_eq!(times.add(HashMap::from([(1, 130)])), 180);
        // Thread 3 is new: all its run time falls after the last reading.
        assert_eq!(times.add(HashMap::from([(1, 140), (3, 20)])), 210);
    }

    #[test]
    fn the_smallest_quota_among_the_ancestors_binds() {
        let root = std::env::temp_dir().join(format!("probe-quota-{}", std::process::id()));
        let leaf = root.join("slice/leaf");
        fs::create_dir_all(&leaf).unwrap();
        fs::write(root.join("cpu.max"), "max 100000\n").unwrap();
        fs::write(root.join("slice/cpu.max"), "50000 100000\n").unwrap();
        fs::write(leaf.join("cpu.max"), "150000 100000\n").unwrap();
        let found = binding_quota_dir(&root, &leaf, true);
        fs::remove_dir_all(&root).unwrap();
        assert_eq!(found, Some(root.join("slice")));
    }

    /// A cgroup of its own with a CPU quota and one process in it spinning; all removed
    /// when dropped, the test passing or not.
    struct SpinningInQuota {
        dir: PathBuf,
        spinner: std::process::Child,
    }

    impl SpinningInQuota {
        /// `None` where this test cannot make a cgroup (not root, no writable controller).
        fn start(quota_us: u64, period_us: u64) -> Option<Self> {
            let membership = fs::read_to_string("/proc/self/cgroup").ok()?;
            let mounts = fs::read_to_string("/proc/self/mountinfo").ok()?;
            let found = find_cpu_cgroup(&membership, &mounts)?;
            let dir = found
                .mount
                .join(format!("tcpeval-probe-quota-{}", std::process::id()));
            fs::create_dir(&dir).ok()?;
            let spinner = std::process::Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .spawn()
                .ok()?;
            let group = SpinningInQuota { dir, spinner };
            let set = if found.v2 {
                fs::write(group.dir.join("cpu.max"), format!("{quota_us} {period_us}"))
            } else {
                fs::write(group.dir.join("cpu.cfs_period_us"), period_us.to_string()).and_then(
                    |()| fs::write(group.dir.join("cpu.cfs_quota_us"), quota_us.to_string()),
                )
            };
            set.ok()?;
            let procs = group.dir.join("cgroup.procs");
            fs::write(procs, group.spinner.id().to_string()).ok()?;
            Some(group)
        }
    }

    impl Drop for SpinningInQuota {
        fn drop(&mut self) {
            let _ = self.spinner.kill();
            let _ = self.spinner.wait();
            // The group is removable once the kernel has let go of the dead task.
            for _ in 0..100 {
                if fs::remove_dir(&self.dir).is_ok() {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
        }
    }

    #[test]
    fn a_spinning_process_uses_its_whole_quota_and_is_throttled_most_periods() {
        // A tenth of a core in 100 ms periods: any machine, however loaded, gives a spinning
        // process that much, so the quota and not the machine is what holds it back.
        let Some(group) = SpinningInQuota::start(10_000, 100_000) else {
            eprintln!("skipped: no writable CPU cgroup controller here");
            return;
        };
        let mut cgroup = CpuCgroup::of_process(&group.spinner.id().to_string()).unwrap();
        let before = cgroup.quota_counters().unwrap();
        let started = std::time::Instant::now();
        std::thread::sleep(std::time::Duration::from_millis(1000));
        let after = cgroup.quota_counters().unwrap();
        let wall_ns = started.elapsed().as_nanos() as f64;
        assert!((after.quota_cores - 0.1).abs() < 1e-9, "{after:?}");
        let used = (after.usage_ns - before.usage_ns) as f64 / (after.quota_cores * wall_ns);
        let periods = after.periods - before.periods;
        let throttled =
            (after.throttled_periods - before.throttled_periods) as f64 / periods as f64;
        // The window cuts about ten periods, one of them part-used at each edge, and a period
        // may overrun its quota by a scheduler slice: ±20%.
        assert!((0.8..=1.2).contains(&used), "used {used} of the quota");
        // A spinner exhausts its quota in every period it runs; the period the window opens
        // in may have been spent already: at least 7 of 10.
        assert!(
            throttled >= 0.7,
            "{throttled} of {periods} periods throttled"
        );
    }
}
