"""Commands in network namespaces, and processes that die with their parent.

Every process the lab starts gets PR_SET_PDEATHSIG(SIGKILL): `ip netns exec` execs the
command in the same process, so the signal reaches it when the Python that started it dies,
even by SIGKILL. A busy-polling emulator left running would otherwise spin forever.
"""

from __future__ import annotations

import selectors
import signal
import subprocess
from collections.abc import Sequence

from tcpeval.backends.protocol import BackendError
from tcpeval.processes import die_with_parent

COMMAND_TIMEOUT_S = 30
# What the probe's listening endpoints (serve, cbr-sink) print once bound, then HOST:PORT.
LISTENING = "listening on "
LISTEN_TIMEOUT_S = 5


class LabError(BackendError):
    """A command the lab needs failed; the message names the command and what it said."""


def sh(*command: str) -> str:
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=COMMAND_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise LabError(f"{' '.join(command)}: {error}") from None
    if done.returncode:
        raise LabError(f"{' '.join(command)}: {done.stderr.strip() or done.returncode}")
    return done.stdout


def in_ns(ns: str, *command: str) -> list[str]:
    return ["ip", "netns", "exec", ns, *command]


def ns_sh(ns: str, *command: str) -> str:
    return sh(*in_ns(ns, *command))


def set_sysctls(ns: str, settings: dict[str, str]) -> dict[str, str]:
    """Writes sysctls in a namespace and reads each back: returns what the kernel holds."""
    for key, value in settings.items():
        ns_sh(ns, "sysctl", "-qw", f"{key}={value}")
    return {key: read_ns_sysctl(ns, key) for key in settings}


def read_ns_sysctl(ns: str, key: str) -> str:
    return " ".join(ns_sh(ns, "sysctl", "-n", key).split())


def spawn(
    ns: str, command: Sequence[str], cpu: int | None = None, stdout: int | None = subprocess.PIPE
) -> subprocess.Popen[str]:
    """Starts `command` in `ns`, pinned to `cpu` when given; killed if this process dies."""
    pinned = ["taskset", "-c", str(cpu)] if cpu is not None else []
    return subprocess.Popen(
        in_ns(ns, *pinned, *command),
        stdout=stdout,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=die_with_parent,
    )


def stop(process: subprocess.Popen[str], grace_s: float = 5.0) -> None:
    """SIGTERM, then SIGKILL after `grace_s`; pipes closed."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=grace_s)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    for pipe in (process.stdout, process.stderr):
        if pipe is not None:
            pipe.close()


def read_line(process: subprocess.Popen[str], timeout_s: float) -> str:
    """The next line the process prints, or "" if none comes within `timeout_s`."""
    assert process.stdout is not None
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        if not selector.select(timeout_s):
            return ""
    return process.stdout.readline()


def listening_address(process: subprocess.Popen[str], what: str) -> str:
    """The HOST:PORT a probe endpoint says it listens on; if it does not say so in time, it
    is stopped and LabError names `what` with what it said instead."""
    line = read_line(process, LISTEN_TIMEOUT_S)
    if not line.startswith(LISTENING):
        said = (
            process.stderr.read().strip() if process.stderr and process.poll() is not None else ""
        )
        stop(process)
        raise LabError(f"{what} did not start: {(line.strip() or said)!r}")
    return line.removeprefix(LISTENING).strip()
