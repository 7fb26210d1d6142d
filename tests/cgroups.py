"""Cgroups a test makes for the processes it starts: a CPU quota, a cap on disk reads, a CPU
weight. Each lives in the v1 controller's hierarchy when the host mounts one, in the unified
(v2) tree otherwise, is named after its purpose and this process, and is removed on the way
out with any process still inside moved to its parent.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PREFIX = "tcpeval-test-"


def join(procs_file: Path) -> list[str]:
    """A prefix that moves the command into a cgroup before it starts."""
    return ["sh", "-c", f'echo $$ > {procs_file} && exec "$@"', "sh"]


@contextmanager
def cpu_quota(purpose: str, share: float) -> Iterator[Path]:
    """A cgroup whose processes together get `share` of one CPU; yields its procs file."""
    period_us = 1_000_000
    quota_us = max(1000, int(share * period_us))
    v1 = CGROUP_ROOT / "cpu"
    if (v1 / "cpu.cfs_quota_us").exists():
        with cgroup(v1, purpose) as group:
            (group / "cpu.cfs_period_us").write_text(str(period_us))
            (group / "cpu.cfs_quota_us").write_text(str(quota_us))
            yield group / "cgroup.procs"
    else:
        with cgroup(CGROUP_ROOT, purpose) as group:
            (group / "cpu.max").write_text(f"{quota_us} {period_us}")
            yield group / "cgroup.procs"


@contextmanager
def cpu_weight(purpose: str, tasks: int) -> Iterator[Path]:
    """A cgroup that weighs as much as `tasks` nice-0 processes: a group competes with its
    siblings as one, so its default weight would make its tasks together count as one."""
    v1 = CGROUP_ROOT / "cpu"
    if (v1 / "cpu.shares").exists():
        with cgroup(v1, purpose) as group:
            (group / "cpu.shares").write_text(str(1024 * tasks))
            yield group / "cgroup.procs"
    else:
        with cgroup(CGROUP_ROOT, purpose) as group:
            (group / "cpu.weight").write_text(str(min(10_000, 100 * tasks)))
            yield group / "cgroup.procs"


@contextmanager
def read_capped(purpose: str, directory: Path, bytes_per_s: int) -> Iterator[Path]:
    """A cgroup whose reads from the disk holding `directory` are capped."""
    device = _disk_device(directory)
    v1 = CGROUP_ROOT / "blkio"
    if (v1 / "blkio.throttle.read_bps_device").exists():
        with cgroup(v1, purpose) as group:
            (group / "blkio.throttle.read_bps_device").write_text(f"{device} {bytes_per_s}")
            yield group / "cgroup.procs"
    else:
        with cgroup(CGROUP_ROOT, purpose) as group:
            (group / "io.max").write_text(f"{device} rbps={bytes_per_s}")
            yield group / "cgroup.procs"


def _disk_device(directory: Path) -> str:
    """MAJOR:MINOR of the whole disk under `directory` (throttles apply to disks)."""
    dev = os.stat(directory).st_dev
    sys_dev = Path(f"/sys/dev/block/{os.major(dev)}:{os.minor(dev)}")
    if (sys_dev / "partition").exists():
        return (sys_dev.resolve().parent / "dev").read_text().strip()
    return f"{os.major(dev)}:{os.minor(dev)}"


@contextmanager
def cgroup(hierarchy: Path, purpose: str) -> Iterator[Path]:
    """A new group in `hierarchy`; groups a killed test left behind are removed first."""
    remove_stale(hierarchy)
    group = hierarchy / f"{PREFIX}{purpose}-{os.getpid()}"
    group.mkdir()
    try:
        yield group
    finally:
        remove(group)


def remove_stale(hierarchy: Path) -> None:
    """Removes the groups of test processes that no longer run."""
    for group in hierarchy.glob(f"{PREFIX}*"):
        owner = group.name.rsplit("-", 1)[-1]
        if owner.isdigit() and not Path(f"/proc/{owner}").exists():
            remove(group)


def remove(group: Path) -> None:
    """Moves any process still inside to the parent, then removes the group."""
    for pid in (group / "cgroup.procs").read_text().split():
        with suppress(OSError):
            (group.parent / "cgroup.procs").write_text(pid)
    with suppress(OSError):
        group.rmdir()
