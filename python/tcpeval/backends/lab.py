"""The lab backend: a scenario's flows as real kernel TCP connections between network
namespaces on this host, through a link emulator that checks itself (tcpeval.lab, docs/lab.md).

It runs the dumbbell: one bottleneck ([bottleneck]) with the scenario's rate, queue, AQM and
loss; every [[flow]] group with its own RTT, algorithm, start, stop or size, count, window,
MSS, pacing, initial window, minimum RTO, SACK and induced losses; [[cbr]] sources. Its
algorithms are the kernel's built-in ones and tcpeval's BPF stacks (lab/bpf.py), which take
the simulator's parameters. What the kernel or the lab cannot do is refused by name.
"""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Mapping

from tcpeval.backends.protocol import Problem, rate_changes, refusals
from tcpeval.lab import bpf, kernel
from tcpeval.lab.emulator import BINARY
from tcpeval.lab.ledger import NAME_PREFIX
from tcpeval.lab.netns import LabError
from tcpeval.lab.run import run_lab
from tcpeval.probe.binary import find_binary, probe_binary
from tcpeval.result import Result
from tcpeval.scenario import FlowGroup, Scenario, cc_algorithms, resolution
from tcpeval.scenario.hosts import PROFILES, HostBehaviour, HostName
from tcpeval.units import Rate

REFUSED = {
    "link": "the lab emulates one bottleneck ([bottleneck]); no multi-link topologies",
    "web": "no web traffic in the lab yet",
    "reqresp": "no request-response in the lab yet (`tcpeval probe rr` on a real path)",
    "onoff": "no on-off sources in the lab yet",
    "pcap": "capture in the namespaces with tcpdump",
    "bottleneck.outage": "the emulator is never down",
    "bottleneck.ack_outage": "the emulator is never down",
    "flow.route": "one bottleneck: every flow crosses it",
    "flow.route_changes": "one bottleneck: every flow crosses it",
    "flow.streams": "give `count` flows instead",
    "flow.drop_every": "the kernel drops nothing on request",
    "flow.delayed_ack": "Linux always delays ACKs (RFC 1122 §4.2.3.2); it cannot be turned off",
    "flow.source_rate": "memory to memory: no application rate",
    "flow.sink_rate": "memory to memory: no application rate",
}
MIN_CPUS = 2
L4S_REASON = (
    "needs AccECN (RFC 9768), which this kernel lacks (net.ipv4.tcp_ecn accepts 0–2); "
    "a BPF stack with DCTCP's per-packet echo (prague) runs it on that feedback instead"
)
# A lab run's own registrations (lab/bpf.py), which other runs must not take for stacks.
RUN_REGISTRATION = re.compile(rf"{NAME_PREFIX}[0-9a-f]{{4}}")


class Lab:
    name = "lab"
    description = "real kernel TCP in network namespaces behind a self-checking emulator"
    runs_per_host: int | None = 1
    real_time: bool = True

    def available(self) -> str | None:
        if os.geteuid() != 0:
            return "needs root (network namespaces)"
        if (os.cpu_count() or 1) < MIN_CPUS:
            return f"needs {MIN_CPUS} CPUs: the emulator has one to itself"
        for tool in ("ip", "taskset", "sysctl"):
            if shutil.which(tool) is None:
                return f"needs `{tool}`"
        try:
            find_binary(BINARY)
            probe_binary()
        except FileNotFoundError as error:
            return str(error)
        return None

    def algorithms(self) -> list[str]:
        return list(self.algorithm_origins())

    def algorithm_origins(self) -> dict[str, str]:
        """Each algorithm and where it comes from: "built in" (the kernel's) or "BPF"
        (tcpeval's, which a run uses even where the kernel has one of that name)."""
        stacks = bpf.stacks() if bpf.unsupported() is None else {}
        origins = {
            name: "built in"
            for name in kernel.algorithms()
            if not RUN_REGISTRATION.match(name) and name not in stacks
        }
        return origins | dict.fromkeys(stacks, "BPF")

    def refused_keys(self) -> Mapping[str, str]:
        return REFUSED

    def supports(self, scenario: Scenario) -> list[Problem]:
        problems = [_explained(problem) for problem in refusals(self, scenario)]
        problems += rate_changes(scenario, "the emulator's rate is fixed for the run")
        for index, group in enumerate(scenario.flow):
            path = f"flow[{index}]"
            problems += _parameters(path, group.cc.resolved(), self.algorithm_origins())
            if group.pacing is not None and not isinstance(group.pacing, Rate):
                problems.append(Problem(f"{path}.pacing", group.pacing.given, "give a rate"))
            host = group.behaviour()
            if host.sack_compression != scenario.flow[0].behaviour().sack_compression:
                reason = "one receiver for every group: the same in every [[flow]]"
                problems.append(Problem(f"{path}.sack_compression", host.sack_compression, reason))
            problems += _kernel_recovery(path, group.host, host)
            problems += _drop_at(path, group)
        # Resolved only once nothing else is refused ([[web]] resolves only where it runs).
        return problems or _ecn(scenario)

    def run(self, scenario: Scenario) -> Result:
        return run_lab(scenario)


def _drop_at(path: str, group: FlowGroup) -> list[Problem]:
    """Induced losses need a group whose forward data the emulator can tell from every other
    flow's: it knows a group by its address, shared by all its flows."""
    if not group.drop_at:
        return []
    times = [time.given for time in group.drop_at]
    if group.count > 1:
        reason = (
            f"needs count = 1: the {group.count} flows of a group share its address, by which "
            "the emulator picks the segment to drop, so it cannot drop one flow's"
        )
        return [Problem(f"{path}.drop_at", times, reason)]
    if group.direction == "reverse":
        reason = (
            'needs direction = "forward": the emulator drops data on the forward path only, '
            "picked by its source address"
        )
        return [Problem(f"{path}.drop_at", times, reason)]
    return []


KERNEL_RECOVERY = PROFILES["linux"]
"""What this kernel does in recovery and cannot be told otherwise (PRR, resending a lost
retransmission, keeping ssthresh when a timeout interrupts recovery, TSO/GSO frames); its
loss detection (`tcp_recovery`) and undo (`tcp_dsack`, `tcp_frto`) are settings."""


def _kernel_recovery(path: str, host_name: HostName, host: HostBehaviour) -> list[Problem]:
    """The host switches this kernel cannot honour, named by the key that asked for them
    (`host` itself when the profile's default did)."""
    problems = []
    for key in ("window_reduction", "lost_retransmission", "rto_in_recovery", "tso"):
        wanted, kernel_does = getattr(host, key), getattr(KERNEL_RECOVERY, key)
        if wanted != kernel_does:
            from_profile = getattr(PROFILES[host_name], key) == wanted
            field, value = ("host", host_name) if from_profile else (key, wanted)
            reason = f"is not supported: this kernel's {key.replace('_', ' ')} is {kernel_does}"
            problems.append(Problem(f"{path}.{field}", value, reason))
    return problems


def _parameters(path: str, table: dict[str, object], origins: dict[str, str]) -> list[Problem]:
    """A BPF stack takes the simulator's parameters (checked by its loader against the
    simulator's ranges); the kernel's own algorithms take theirs from the host."""
    name = table["name"]
    if origins.get(str(name)) == "BPF":
        try:
            bpf.resolve(dict(table))
        except LabError as error:
            return [Problem(f"{path}.cc", name, str(error))]
    elif len(table) > 1:
        return [
            Problem(f"{path}.cc", name, "the kernel's algorithm takes its parameters from the host")
        ]
    return []


def _explained(problem: Problem) -> Problem:
    """A refused algorithm the simulator has says why the lab lacks it: no BPF version yet,
    or a kernel that cannot run BPF congestion controls (and what it lacks)."""
    simulated = {algorithm["name"] for algorithm in cc_algorithms()}
    if not problem.field.endswith(".cc") or problem.value not in simulated:
        return problem
    why_not = bpf.unsupported()
    if problem.value not in bpf.stacks():
        reason = "is not built into this kernel and has no BPF version in tcpeval yet"
    elif why_not is not None:
        reason = f"is a BPF stack, and {why_not}"
    else:
        return problem
    return Problem(problem.field, problem.value, reason)


def _ecn(scenario: Scenario) -> list[Problem]:
    """A flow's ECN the kernel cannot speak, named by its [[flow]] table: classic ECN
    (RFC 3168, tcp_ecn = 1) it can; L4S senders need AccECN feedback, which it lacks."""
    found = resolution(scenario)
    echoing = {name for name, stack in bpf.stacks().items() if stack.per_packet_echo}
    problems: dict[str, Problem] = {}
    for flow, origin in zip(found.resolved["flows"], found.origins["flows"], strict=True):
        if flow.get("ecn", "off") == "l4s" and flow["cc"]["name"] not in echoing:
            problems.setdefault(origin, Problem(f"{origin}.ecn", "l4s", L4S_REASON))
    return list(problems.values())


BACKEND = Lab()
