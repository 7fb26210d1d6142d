"""A systemd of a test's own, for machines whose PID 1 is not systemd: booted as PID 1 of new
PID, mount, cgroup, network, UTS and IPC namespaces.

A booting systemd changes the host: it empties /tmp, writes the journal and utmp, makes
directories under /root and cgroups at the hierarchy's root. Here it sees the host's root file
system read-only, and everything it may write is a tmpfs of its own mount namespace (/run,
/tmp, /var, /root, /etc/systemd/system); its cgroup file systems are mounted afresh inside its
cgroup namespace, rooted at a cgroup made for it and removed after. It boots a target that
wants nothing, so only what a test starts runs. Units go in /run/systemd/system; `systemctl`
and other commands reach it through nsenter (`run`).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

SYSTEMD = Path("/lib/systemd/systemd")
CGROUPS = Path("/sys/fs/cgroup")
BOOT_TIMEOUT_S = 30
COMMAND_TIMEOUT_S = 30

BOOT = """
set -e
mount --make-rprivate /
mount -o remount,bind,ro /
for dir in /run /tmp /var /root /etc/systemd/system; do mount -t tmpfs tmpfs "$dir"; done
mount -t tmpfs tmpfs /sys/fs/cgroup
mkdir /sys/fs/cgroup/systemd /sys/fs/cgroup/unified
mount -t cgroup -o none,name=systemd cgroup /sys/fs/cgroup/systemd
mount -t cgroup2 cgroup2 /sys/fs/cgroup/unified
mkdir -p /run/systemd/system
printf '[Unit]\\nDescription=only what a test starts\\n' > /etc/systemd/system/idle.target
exec env container=tcpeval-test {systemd} --system --unit=idle.target
"""


class Systemd:
    def __init__(self, pid: int) -> None:
        self.pid = pid

    def run(
        self, *command: str, stdin: str | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        """`command` inside every namespace of this systemd."""
        enter = ["nsenter", "-t", str(self.pid), "-m", "-p", "-n", "-u", "-i", "-C"]
        return subprocess.run([*enter, *command], input=stdin, capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_S, check=check)  # fmt: skip

    def add_unit(self, name: str, text: str) -> None:
        """Writes /run/systemd/system/NAME (a unit, or a drop-in as UNIT.d/FILE.conf)."""
        path = f"/run/systemd/system/{name}"
        self.run("sh", "-c", 'mkdir -p "$(dirname "$1")" && cat > "$1"', "-", path, stdin=text)

    def net(self, *command: str) -> list[str]:
        """`command` in this systemd's network namespace only (the host's files and PIDs)."""
        return ["nsenter", "-t", str(self.pid), "-n", *command]


@contextmanager
def booted(name: str) -> Iterator[Systemd]:
    """A systemd booted and idle; killed with everything it ran, its cgroups removed."""
    own = [CGROUPS / hierarchy / name for hierarchy in ("systemd", "unified")]
    for cgroup in own:
        cgroup.mkdir()
    # The shell enters the cgroups before unshare makes the cgroup namespace rooted there.
    enter = "; ".join(f"echo $$ > {cgroup}/cgroup.procs" for cgroup in own)
    unshare = ["unshare", "--pid", "--fork", "--mount", "--uts", "--ipc", "--net", "--cgroup",
               "--mount-proc", "sh", "-c", BOOT.format(systemd=SYSTEMD)]  # fmt: skip
    wrapper = subprocess.Popen(
        ["sh", "-c", f'{enter}; exec "$@"', "-", *unshare],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    systemd: Systemd | None = None
    try:
        systemd = Systemd(_systemd_pid(wrapper))
        _wait_running(systemd)
        yield systemd
    finally:
        if systemd is not None:
            with suppress(ProcessLookupError):
                os.kill(systemd.pid, signal.SIGKILL)  # PID 1 of its namespace: all go with it
        wrapper.kill()
        wrapper.communicate(timeout=COMMAND_TIMEOUT_S)
        for cgroup in own:
            _remove_cgroup(cgroup)


def _systemd_pid(wrapper: subprocess.Popen[str]) -> int:
    """The PID (in ours) of the systemd the wrapper's unshare forked."""
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while time.monotonic() < deadline:
        if wrapper.poll() is not None:
            said = wrapper.stderr.read() if wrapper.stderr else ""
            raise RuntimeError(f"systemd did not boot: {said}")
        for child in Path(f"/proc/{wrapper.pid}/task/{wrapper.pid}/children").read_text().split():
            if Path(f"/proc/{child}/exe").resolve() == SYSTEMD.resolve():
                return int(child)
        time.sleep(0.05)
    raise RuntimeError(f"systemd did not start within {BOOT_TIMEOUT_S} s")


def _wait_running(systemd: Systemd) -> None:
    deadline = time.monotonic() + BOOT_TIMEOUT_S
    while time.monotonic() < deadline:
        state = systemd.run("systemctl", "is-system-running", check=False).stdout.strip()
        if state in {"running", "degraded"}:
            return
        time.sleep(0.1)
    raise RuntimeError(f"systemd not running within {BOOT_TIMEOUT_S} s")


def _remove_cgroup(cgroup: Path) -> None:
    """Removes the cgroup and every one systemd made in it, deepest first; a cgroup is
    removable once the kernel has reaped its last process, so a few tries are allowed."""
    if not cgroup.exists():
        return
    for _ in range(50):
        try:
            for directory in sorted(cgroup.rglob("*"), key=lambda p: len(p.parts), reverse=True):
                if directory.is_dir():
                    directory.rmdir()
            cgroup.rmdir()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"could not remove {cgroup}")
