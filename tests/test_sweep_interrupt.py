"""Ctrl-C in a sweep: the first stops it within a few seconds, saying what was kept and how to
resume, and a second one ends it at once; neither hangs or prints a traceback, and a resumed
sweep finishes every run with the numbers of an uninterrupted one."""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import NamedTuple

import pandas as pd
import pytest

import tcpeval

TRIES = 20
AT_ONCE = 4  # sweeps running side by side: with the CPU hog, the machine is loaded
EXIT_BOUND_S = 5.0  # the bound a user may expect after Ctrl-C (the pool's grace is 3 s)
RESUME_LINE = "run the same command again to resume where it stopped"
# Eight runs of a second or two each on 2 cores: Ctrl-C lands before, between and during runs.
GRID = """
repeats = 2
[base]
name = "interrupted"
duration = "20s"
[base.bottleneck]
rate = "2Gbps"
queue = "100%bdp"
[[base.flow]]
cc = "reno"
rtt = "20ms"
[axes]
"flow.0.cc" = ["reno", "cubic"]
"flow.0.rtt" = ["20ms", "40ms"]
"""


def start_sweep(grid: Path, out: Path) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "tcpeval", "sweep", str(grid), "--out", str(out)]
    return subprocess.Popen(
        [*command, "--jobs", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


class Interrupted(NamedTuple):
    took_s: float
    """From the first SIGINT to the sweep's end."""
    started: bool
    """Whether the sweep command had begun (its directory made) when the SIGINT came: before,
    the command line was still being read, and there is nothing to keep or resume."""
    stdout: str
    stderr: str


def interrupted(
    sweep: subprocess.Popen[str], out: Path, after_s: float, again_s: float | None
) -> Interrupted:
    """Send SIGINT `after_s` from now (and again `again_s` later)."""
    time.sleep(after_s)
    sent, started = time.monotonic(), out.exists()
    sweep.send_signal(signal.SIGINT)
    if again_s is not None:
        time.sleep(again_s)
        if sweep.poll() is None:
            sweep.send_signal(signal.SIGINT)
    try:
        stdout, stderr = sweep.communicate(timeout=EXIT_BOUND_S * 4)
    except subprocess.TimeoutExpired:
        sweep.kill()
        stdout, stderr = sweep.communicate()
    return Interrupted(time.monotonic() - sent, started, stdout, stderr)


@pytest.fixture
def cpu_hog() -> object:
    hog = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    yield hog
    hog.kill()
    hog.wait()


@pytest.mark.usefixtures("cpu_hog")
def test_ctrl_c_at_random_moments_always_ends_the_sweep_within_seconds(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    moments = random.Random(7)
    for batch in range(TRIES // AT_ONCE):
        outs = [tmp_path / f"try{batch}-{i}" for i in range(AT_ONCE)]
        sweeps = [start_sweep(grid, out) for out in outs]
        # Imports take about a second; past 6 s most of these sweeps are in their last runs.
        delays = sorted(moments.uniform(0.3, 6.0) for _ in sweeps)
        again = [moments.choice([None, 0.05, 0.5]) for _ in sweeps]
        started = time.monotonic()
        for sweep, out, delay, second in zip(sweeps, outs, delays, again, strict=True):
            waited = max(0.0, delay - (time.monotonic() - started))
            ended = interrupted(sweep, out, waited, second)
            what = f"Ctrl-C at {delay:.1f} s (again after {second} s)"
            assert ended.took_s < EXIT_BOUND_S, f"{what}: ended {ended.took_s:.1f} s later"
            # -2: killed by a SIGINT that came as the interpreter exited (a shell shows 130)
            assert sweep.returncode in (0, 130, -2), f"{what}: exit {sweep.returncode}"
            assert "Traceback" not in ended.stderr, f"{what}: {ended.stderr}"
            if ended.started and "8 runs: 8 done" not in ended.stdout:  # not done already
                assert RESUME_LINE in ended.stderr, f"{what}: {ended.stdout} {ended.stderr}"


def test_a_resumed_sweep_gives_the_numbers_of_an_uninterrupted_one(tmp_path: Path) -> None:
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    sweep = start_sweep(grid, tmp_path / "resumed")
    assert interrupted(sweep, tmp_path / "resumed", 3.0, None).took_s < EXIT_BOUND_S
    report = tcpeval.sweep(grid, tmp_path / "resumed", progress=False)
    assert (report.total, report.failed) == (8, 0)
    tcpeval.sweep(grid, tmp_path / "whole", progress=False)
    resumed = tcpeval.load(tmp_path / "resumed").drop(columns="wall_seconds")
    whole = tcpeval.load(tmp_path / "whole").drop(columns="wall_seconds")
    pd.testing.assert_frame_equal(resumed, whole)


def test_a_second_ctrl_c_ends_a_slow_stop_at_once() -> None:
    # A stop that would take 60 s (a run unwinding slowly, say): the second Ctrl-C does not wait.
    program = textwrap.dedent("""
        import sys, time
        from tcpeval.interrupts import second_ctrl_c_exits
        with second_ctrl_c_exits("stopping now"):
            try:
                print("ready", flush=True)
                time.sleep(60)
            except KeyboardInterrupt:
                print("stopping", flush=True)
                time.sleep(60)
    """)
    slow = subprocess.Popen(
        [sys.executable, "-c", program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert slow.stdout is not None
    assert slow.stdout.readline() == "ready\n"
    slow.send_signal(signal.SIGINT)
    assert slow.stdout.readline() == "stopping\n"
    sent = time.monotonic()
    slow.send_signal(signal.SIGINT)
    _, stderr = slow.communicate(timeout=10)
    assert time.monotonic() - sent < 1.0
    assert slow.returncode == 130
    assert stderr == "\ninterrupted again: stopping now\n"
