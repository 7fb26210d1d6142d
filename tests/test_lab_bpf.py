"""tcpeval's BPF stacks in the lab: each registered for a run under a name of its own, run by
the real kernel's TCP, and gone afterwards — also when the run is killed, and beside another
registration of the same stack.

Real kernel sockets in namespaces the lab makes; the stacks are registered in this kernel
(visible in every namespace) only while a run or a test holds them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from lab_runs import LAB, checks_of, run, scenario, started_from_the_command_line, valid_run
from tcpeval.lab import bpf, clean
from tcpeval.lab.ledger import Ledger, lab_dir
from tcpeval.probe.binary import find_binary
from tcpeval.scenario import parse_scenario

AVAILABLE = Path("/proc/sys/net/ipv4/tcp_available_congestion_control")
BUILT_IN = {"reno", "cubic", "bbr"}
# The kernel drops a registration when the holder's link is released: at once, give or take
# the scheduler.
UNREGISTER_TIMEOUT_S = 5


def registered() -> set[str]:
    return set(AVAILABLE.read_text().split())


def gone(names: set[str]) -> bool:
    """Whether none of `names` is registered, waiting for the kernel a little."""
    deadline = time.monotonic() + UNREGISTER_TIMEOUT_S
    while names & registered() and time.monotonic() < deadline:
        time.sleep(0.1)
    return not names & registered()


def flow_of(stack: str) -> dict:
    """A flow of `stack` with the ECN it needs: the ECN stacks' own default or classic."""
    ecn = {"dctcp": "classic", "prague": "l4s"}.get(stack, "off")
    return {"cc": stack, "rtt": "20ms", "ecn": ecn}


@pytest.mark.parametrize("stack", sorted(bpf.stacks()))
def test_each_stack_runs_in_the_kernel_under_its_own_name_and_is_gone_after(stack):
    result = valid_run(scenario(duration="10s", flow=[flow_of(stack)]))
    ((name, held),) = result.summary["backend"]["details"]["bpf_stacks"].items()
    assert held["stack"] == stack
    assert name != stack
    # The socket ran the registration (the `settings` check reads TCP_CONGESTION back).
    assert checks_of(result)["settings read back"]["ok"]
    assert result.summary["flows"][0]["cc"] == stack
    # It carried the flow; how well is for the specification checks (tests/test_kernel_*.py)
    # and the fidelity table to judge. Reno itself keeps ~45 Mb/s of this path on a busy host.
    assert result.summary["flows"][0]["goodput_mbps"] > 25, result.summary["flows"][0]
    assert gone({name})


def test_a_killed_run_leaves_no_stack_registered_and_no_namespace(tmp_path):
    run_process = started_from_the_command_line(tmp_path, "aimd", subprocess.DEVNULL)
    before = registered()
    deadline = time.monotonic() + 20
    while not (ours := registered() - before) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert ours, "the run never registered its stack"
    time.sleep(2)
    os.kill(run_process.pid, signal.SIGKILL)
    run_process.wait()
    assert gone(ours)
    clean(wait_s=10)
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert "tl" not in " ".join(line.split()[0] for line in listed.splitlines())


def hold(name: str, stack: str = "aimd") -> subprocess.Popen[str]:
    """A registration of the test's own, as another user or a stale run would leave."""
    command = [
        str(find_binary(bpf.BINARY)),
        "hold",
        "--name",
        name,
        "--cc",
        f'{{"name":"{stack}"}}',
    ]
    holder = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None
    assert json.loads(holder.stdout.readline())["name"] == name
    return holder


def test_a_run_beside_another_registration_of_its_stack_takes_a_name_of_its_own():
    outside = hold("aimd")  # the stack's plain name, taken by someone else
    try:
        result = run(scenario(duration="4s", flow=[flow_of("aimd")]))
        (name,) = result.summary["backend"]["details"]["bpf_stacks"]
        assert name != "aimd"
        assert checks_of(result)["settings read back"]["ok"]
        assert "aimd" in registered(), "the run removed a registration it did not make"
    finally:
        outside.communicate(timeout=10)
    assert gone({name, "aimd"})


def test_a_stale_runs_registration_is_removed_by_the_next_run():
    """A run killed so that its holder survived it (the holder is no child of this test's
    lab run): the ledger it left names the holder, which the next run kills."""
    stale = Ledger("tlfeed")
    stale.owner_pid = 1 << 22  # no such process
    holder = hold("tlfeedaimd")
    stale.add_holder(holder.pid, "tlfeedaimd")
    try:
        run(scenario(duration="2s", flow=[flow_of("aimd")]))
        assert holder.wait(timeout=10) == -signal.SIGKILL
    finally:
        holder.kill()
        holder.communicate()
        (lab_dir() / "tlfeed.json").unlink(missing_ok=True)
    assert gone({"tlfeedaimd"})


def test_parameters_are_the_simulators_and_a_wrong_one_is_refused_by_name():
    good = parse_scenario(scenario(flow=[{"cc": {"name": "aimd", "b": 0.3}, "rtt": "20ms"}]))
    assert LAB.supports(good) == []
    bad = parse_scenario(scenario(flow=[{"cc": {"name": "aimd", "b": 1.5}, "rtt": "20ms"}]))
    (problem,) = LAB.supports(bad)
    assert problem.field == "flow[0].cc", problem
    assert "b" in problem.reason, problem
    built_in = parse_scenario(scenario(flow=[{"cc": {"name": "cubic", "beta": 0.7}, "rtt": "9ms"}]))
    (problem,) = LAB.supports(built_in)
    assert "from the host" in problem.reason, problem


def test_the_backends_list_says_where_each_stack_comes_from():
    origins = LAB.algorithm_origins()
    assert {origins[name] for name in BUILT_IN} == {"built in"}
    assert {origins[name] for name in bpf.stacks()} == {"BPF"}
