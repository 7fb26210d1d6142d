"""The link emulator (`tcpeval-lab emulate`, crates/lab): its configuration, made from the
resolved scenario, and the process that relays the traffic between the two halves of the lab.

The bottleneck is the scenario's link 0: rate, queue, AQM, loss and policer, applied by the
same code the simulator runs (crates/netem), described in the same dialect (no translation);
the policer, as in the simulator, polices the forward direction only. An AQM asked to mark
sets CE in the real packets' IP headers. Reordering and a path-MTU black hole are netem's
too, forward direction only, as in the simulator. Each host's base RTT is split between the two
directions as a per-host delay: its data direction takes the flow's `forward_delay`, else
half. A host's induced losses (`drop_at`) are its entry's too: the
emulator drops the first TCP data segment from the host's address at or after each time, before
the queue. A reverse direction with its own rate and
queue exists, as in the simulator, only where reverse data or reverse loss needs it; otherwise
the return path is a delay line.
"""

from __future__ import annotations

import json
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval.lab.netns import LabError, read_line, spawn, stop
from tcpeval.lab.topology import EMULATOR_CPU, Topology
from tcpeval.probe.binary import find_binary

BINARY = "tcpeval-lab"
# The emulator exits on its own this long after the run should have ended.
SAFETY_MARGIN_NS = 60 * 10**9
READY_TIMEOUT_S = 10


@dataclass(frozen=True)
class Endpoint:
    """A host the emulator tells apart by its address: its one-way delays (the emulator's
    forward direction, left to right, and its reverse) and the times of its induced losses
    (ns on the run's clock, which starts with the emulator)."""

    ip: str
    forward_delay_ns: int
    reverse_delay_ns: int
    drop_at_ns: tuple[int, ...] = ()


def config(
    link: dict[str, Any],
    topology: Topology,
    endpoints: list[Endpoint],
    reverse_queue: bool,
    duration_ns: int,
    sample_interval_ns: int,
) -> dict[str, Any]:
    """The emulator's configuration for link 0 of a resolved scenario. The queue, AQM, loss
    and policer entries are netem's dialect (crates/netem/src/spec.rs) in both, so they pass
    through untouched; the reverse direction is drop-tail with the same limit."""
    forward = _direction(link, link["rate_bps"], link["aqm"], link["loss"], link["policer"], 1)
    forward |= {"reorder": link["reorder"], "mtu_black_hole_bytes": link["mtu_black_hole_bytes"]}
    reverse_rate = link["rate_bps"] if reverse_queue else None
    reverse = _direction(link, reverse_rate, DROPTAIL, link["reverse_loss"], None, 2)
    return {
        "left": topology.left_dev,
        "right": topology.right_dev,
        "cpu": EMULATOR_CPU,
        "max_duration_ns": duration_ns + SAFETY_MARGIN_NS,
        "sample_interval_ns": sample_interval_ns,
        "mtu_bytes": max(h.mtu_bytes for h in [*topology.left_hosts, topology.receiver]),
        "forward": forward,
        "reverse": reverse,
        "endpoints": [
            {
                "ip": e.ip,
                "forward_delay_ns": e.forward_delay_ns,
                "reverse_delay_ns": e.reverse_delay_ns,
                "drop_at_ns": list(e.drop_at_ns),
            }
            for e in endpoints
        ],
    }


DROPTAIL = {"name": "droptail"}


def _direction(
    link: dict[str, Any],
    rate_bps: int | None,
    aqm: dict[str, Any],
    loss: dict[str, Any],
    policer: dict[str, int] | None,
    seed: int,
) -> dict[str, Any]:
    return {
        "rate_bps": rate_bps,
        "queue_pkts": link["queue_pkts"],
        "queue_bytes": link["queue_bytes"],
        "aqm": aqm,
        "loss": loss,
        "policer": policer,
        "seed": seed,
    }


class Emulator:
    """The running emulator; `finish` stops it and reads what it measured. `start_unix_ns`:
    when it started relaying (CLOCK_REALTIME, as `time.time_ns`), which its times count from."""

    def __init__(self, topology: Topology, settings: dict[str, Any], directory: Path) -> None:
        self.directory = directory
        self.config_path = directory / "emulator.json"
        self.stats_path = directory / "emulator-stats.json"
        self.samples_path = directory / "emulator-links.csv"
        self.config_path.write_text(json.dumps(settings, indent=1))
        # The highest CFS weight: any task that lands on the emulator's CPU waits its turn.
        command = [
            "nice", "-n", "-20", str(find_binary(BINARY)), "emulate",
            "--config", str(self.config_path),
            "--stats", str(self.stats_path), "--samples", str(self.samples_path),
        ]  # fmt: skip
        self.process = spawn(topology.emulator_ns, command, cpu=EMULATOR_CPU)
        line = read_line(self.process, READY_TIMEOUT_S)
        said = line.split()
        if len(said) != 2 or said[0] != "ready" or not said[1].isdigit():
            self._fail(f"did not start (said {line.strip()!r})")
        self.start_unix_ns = int(said[1])

    def finish(self) -> tuple[dict[str, Any], pd.DataFrame]:
        """Stops the emulator; returns its statistics and its link samples."""
        exited_early = self.process.poll() is not None
        if not exited_early:
            self.process.send_signal(signal.SIGTERM)
        try:
            _, errors = self.process.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, errors = self.process.communicate()
        if exited_early or self.process.returncode or not self.stats_path.exists():
            said = errors.strip() or f"exit {self.process.returncode}"
            raise LabError(f"{BINARY} stopped before the run ended: {said}")
        return json.loads(self.stats_path.read_text()), pd.read_csv(self.samples_path)

    def check_alive(self) -> None:
        """LabError, saying what it last said, if the emulator has exited: the traffic has
        had no path since."""
        if self.process.poll() is None:
            return
        _, errors = self.process.communicate()
        said = (errors or "").strip().splitlines()
        ending = said[-1] if said else f"exit {self.process.returncode}"
        raise LabError(f"{BINARY} died during the run ({ending}): the traffic lost its path")

    def kill(self) -> None:
        stop(self.process, grace_s=1)

    def _fail(self, what: str) -> None:
        self.kill()
        raise LabError(f"{BINARY} {what}")
