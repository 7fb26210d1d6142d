"""`exit_with`: a process ends with another one that is not its parent (a pool worker with its
sweep), even when that one is killed and not yet reaped."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

FOLLOWER = (
    "import sys, time; from tcpeval.processes import exit_with; "
    "exit_with(int(sys.argv[1])); print('following', flush=True); time.sleep(60)"
)


@contextmanager
def started(*command: str) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        yield process
    finally:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def test_a_follower_ends_when_its_leader_is_killed_even_unreaped() -> None:
    with (
        started("sleep", "60") as leader,
        started(sys.executable, "-c", FOLLOWER, str(leader.pid)) as follower,
    ):
        assert follower.stdout is not None
        assert follower.stdout.readline() == "following\n"
        assert follower.poll() is None
        leader.kill()  # a zombie until the `with` reaps it
        assert follower.wait(timeout=10) == 1


def test_a_follower_of_a_process_already_gone_ends_at_once() -> None:
    with started("true") as gone:
        gone.wait()
        with started(sys.executable, "-c", FOLLOWER, str(gone.pid)) as follower:
            assert follower.wait(timeout=10) == 1
            assert follower.stdout is not None
            assert follower.stdout.read() == ""
