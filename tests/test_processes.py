"""`exit_with`: a process ends with another one that is not its parent (a pool worker with its
sweep), even when that one is killed and not yet reaped. `held`: waiters take a lock in the
order they came, and a waiter killed in the queue does not block those behind it."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tcpeval.processes import held

FOLLOWER = (
    "import sys, time; from tcpeval.processes import exit_with; "
    "exit_with(int(sys.argv[1])); print('following', flush=True); time.sleep(60)"
)


WAITER = """
import sys
from pathlib import Path
from tcpeval.processes import held
with held(Path(sys.argv[1]), wait_s=60):
    print("got", sys.argv[2], flush=True)
"""


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


def test_waiters_take_a_lock_in_the_order_they_came(tmp_path: Path) -> None:
    """Five waiters queue 0.1 s apart behind the test, one of them killed while it waits;
    the others must get the lock in the order they asked (with flock alone, whichever polls
    first after each release wins)."""
    lock = tmp_path / "lock"
    log = tmp_path / "order"
    with held(lock), log.open("w") as out:
        waiters = []
        for name in "abcde":
            command = [sys.executable, "-c", WAITER, str(lock), name]
            waiters.append(subprocess.Popen(command, stdout=out, text=True))
            time.sleep(0.1)
        waiters[1].kill()  # "b" dies in the queue
        waiters[1].wait()
        time.sleep(0.3)
    for waiter in waiters:
        waiter.wait(timeout=10)
    got = [line.split()[1] for line in log.read_text().splitlines() if line.startswith("got")]
    assert got == ["a", "c", "d", "e"]
    assert not list((tmp_path / "lock.queue").iterdir())
