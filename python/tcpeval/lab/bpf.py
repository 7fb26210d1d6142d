"""The lab's BPF congestion controls: tcpeval's own implementations of the stacks this kernel
lacks (crates/bpf, each written from its paper or RFC), registered for one run under
run-unique names and gone after it.

A registration is a `tcpeval-bpf hold` process in the host's namespace (a congestion control
registered through struct_ops is visible in every namespace). It holds the struct_ops link, so
the stack stays registered exactly as long as the process lives: the process dies with the
lab (PR_SET_PDEATHSIG), and its PID is in the run's ledger, for the ledger's undo to kill
should it outlive the run.
"""

from __future__ import annotations

import functools
import json
import subprocess
from contextlib import suppress
from dataclasses import dataclass, field
from typing import Any

from tcpeval.lab.ledger import Ledger
from tcpeval.lab.netns import LabError, read_line, stop
from tcpeval.probe.binary import find_binary
from tcpeval.processes import die_with_parent

BINARY = "tcpeval-bpf"
# Loading runs the verifier over every program of the object: well under a second here.
REGISTER_TIMEOUT_S = 30
# Linux's TCP_CA_NAME_MAX (16) with its terminating NUL.
NAME_MAX_BYTES = 15


@dataclass(frozen=True)
class Stack:
    """A BPF stack as `tcpeval-bpf list` describes it."""

    name: str
    params: tuple[str, ...]
    # Its receiver must echo every CE mark (DCTCP's feedback, RFC 8257 §3.2), which the
    # receiving kernel does only when its own socket runs the same stack.
    per_packet_echo: bool


@dataclass
class Registration:
    stack: str
    name: str
    params: dict[str, Any]
    process: subprocess.Popen[str]
    programs: dict[str, dict[str, int]] = field(default_factory=dict)
    """Once released: each program's calls and run time in the kernel (`run_ns`), counted
    while `kernel.bpf_stats_enabled` was 1 (bench/bench_bpf.py sets it)."""


@functools.cache
def stacks() -> dict[str, Stack]:
    """The BPF stacks by name; none when the loader is not installed."""
    try:
        listed = json.loads(_call("list"))
    except (FileNotFoundError, LabError):
        return {}
    return {
        entry["name"]: Stack(entry["name"], tuple(entry["params"]), entry["per_packet_echo"])
        for entry in listed
    }


@functools.cache
def unsupported() -> str | None:
    """Why this host cannot run the BPF stacks, or None when it can."""
    try:
        _call("check")
    except (FileNotFoundError, LabError) as error:
        return str(error)
    return None


def resolve(table: dict[str, Any]) -> dict[str, Any]:
    """A cc table checked against the stack's parameters (the simulator's names, defaults and
    ranges) and completed; LabError names the parameter at fault."""
    return dict(json.loads(_call("resolve", "--cc", json.dumps(table)))["params"])


def register(ledger: Ledger, table: dict[str, Any], name: str) -> Registration:
    """Registers the stack `table` names (with its parameters) as `name` until the run ends."""
    process = subprocess.Popen(
        [str(find_binary(BINARY)), "hold", "--name", name, "--cc", json.dumps(table)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=die_with_parent,
    )
    ledger.add_holder(process.pid, name)
    line = read_line(process, REGISTER_TIMEOUT_S)
    if not line:
        raise LabError(f"registering {table['name']} as {name}: {_last_words(process)}")
    held = json.loads(line)
    return Registration(held["stack"], held["name"], held["params"], process)


def release(registration: Registration) -> None:
    """Unregisters: the holder exits when its input closes, and the kernel drops the link;
    it says last what the kernel counted of its programs."""
    process = registration.process
    if process.stdin is not None:
        process.stdin.close()
    last = read_line(process, REGISTER_TIMEOUT_S)
    stop(process)
    with suppress(ValueError):
        registration.programs = json.loads(last)["programs"]


def run_unique_name(prefix: str, stack: str, index: int) -> str:
    """`<run prefix><stack>`, with the registration's index after the first, cut to fit."""
    suffix = str(index) if index else ""
    return f"{prefix}{stack[: NAME_MAX_BYTES - len(prefix) - len(suffix)]}{suffix}"


def _last_words(process: subprocess.Popen[str]) -> str:
    """What a holder that did not register said before it exited (killed if still silent)."""
    try:
        _, said = process.communicate(timeout=REGISTER_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        process.kill()
        _, said = process.communicate()
    return said.strip().removeprefix(f"{BINARY}: ") or "no answer"


def _call(*arguments: str) -> str:
    command = [str(find_binary(BINARY)), *arguments]
    done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=30)
    if done.returncode:
        said = done.stderr.strip().removeprefix(f"{BINARY}: ")
        raise LabError(said or f"{BINARY} {arguments[0]} exited {done.returncode}")
    return done.stdout
