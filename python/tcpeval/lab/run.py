"""One lab run: a scenario's flows as real kernel TCP connections between namespaces, through
the emulated bottleneck, measured with the probe's TCP_INFO sampler, judged by the emulator's
self-check, returned in the result shape every backend shares.

Each flow is one `tcpeval-probe tcp` client in its group's namespace, started at the flow's
own start (jitter included); one probe server in the receiver namespace takes them all.
Every process is started from this thread: the kernel kills a child when the thread that
started it ends (PR_SET_PDEATHSIG), which is what we want of this one only.

The run's clock starts with the emulator's: `t0` is the instant it says it started relaying
(CLOCK_REALTIME, which the probes' and the emulator's times are all on), so its samples and
its induced losses (`drop_at`, counted from its start) fall at their times on the run's clock
with no offset. The flows are launched once it has said so, 0.1–0.2 ms after `t0` (the
`ready` line's trip); their measured starts say exactly when.
"""

from __future__ import annotations

import json
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from tcpeval.lab import bpf, checks, emulator, kernel, sources
from tcpeval.lab.emulator import Emulator, Endpoint
from tcpeval.lab.ledger import Ledger, clean_stale, host_lock, new_prefix, read_sysctl
from tcpeval.lab.netns import LabError, listening_address, ns_sh, set_sysctls, spawn, stop
from tcpeval.lab.topology import EMULATOR_CPU, KERNEL_CPU, RECEIVER_IP, Host, build, mtu_for
from tcpeval.metrics import jain_index
from tcpeval.probe.binary import probe_binary
from tcpeval.probe.driver import result_from_raw
from tcpeval.probe.netns import secret_file
from tcpeval.probe.settings import TcpSettings
from tcpeval.result import FLOW_COLUMNS, Result
from tcpeval.scenario import Scenario, describe, resolution

# The TCP_INFO history and the queue are sampled this often, or at the scenario's interval
# when it is finer.
SAMPLE_INTERVAL_NS = 10_000_000
# A process given this long past the run's end has hung.
END_MARGIN_S = 30
# How often a run looks whether its emulator still lives while the traffic runs: a dead
# one ends the run at once, not when the clients time out.
WATCH_S = 0.25
# The probe server's handshake deadline here: its default (2 s) is for strangers; a flow's
# client on a loaded host may take longer to answer, and nobody else can connect.
HANDSHAKE_TIMEOUT_MS = 10_000
# The per-CPU input backlog: the kernel's default (1000) overflows outside the bottleneck
# at a few hundred Mb/s when the emulator releases a batch.
BACKLOG_PKTS = 10_000
# A sweep on a cluster may send a host a second run while the first goes on.
LOCK_WAIT_S = 3600


@dataclass
class Group:
    """One [[flow]] table as the lab runs it: a namespace of its own."""

    index: int
    flows: list[dict[str, Any]]
    host: Host | None = None

    @property
    def first(self) -> dict[str, Any]:
        return self.flows[0]


@dataclass
class LabFlow:
    """One flow: its probe client's settings and raw output."""

    id: int
    group: Group
    spec: dict[str, Any]
    settings: TcpSettings | None = None
    raw: Path | None = None


@dataclass(frozen=True)
class PathEnds:
    """Where a caller's own traffic enters and leaves an emulated path."""

    sender_ns: str
    sender_ip: str
    receiver_ns: str
    receiver_ip: str


def run_lab(scenario: Scenario) -> Result:
    """Runs `scenario` in the lab of this host (root); one run at a time."""
    started = time.monotonic()
    with _session() as (ledger, tmp):
        result = LabRun(scenario, ledger, tmp).run()
    result.summary["backend"]["wall_seconds"] = time.monotonic() - started
    return result


@contextmanager
def emulated_path(scenario: Scenario) -> Iterator[PathEnds]:
    """The scenario's path between its first group's namespace and the receiver, emulated
    for the scenario's duration, with no traffic of its own: for tools that bring theirs
    (`tcpeval diagnose` is tested on it). Everything is removed on the way out."""
    with _session() as (ledger, tmp):
        lab = LabRun(scenario, ledger, tmp)
        with lab.path() as ends:
            yield ends


@contextmanager
def _session() -> Iterator[tuple[Ledger, Path]]:
    """The host's lab to ourselves, and every change to it undone afterwards."""
    with host_lock(LOCK_WAIT_S), tempfile.TemporaryDirectory(prefix="tcpeval-lab-") as tmp:
        clean_stale()
        ledger = Ledger(new_prefix())
        ledger.save()
        try:
            yield ledger, Path(tmp)
        finally:
            ledger.undo()


class LabRun:
    def __init__(self, scenario: Scenario, ledger: Ledger, tmp: Path) -> None:
        self.scenario = scenario
        self.ledger = ledger
        self.tmp = tmp
        self.resolved = resolution(scenario).resolved
        self.link = self.resolved["links"][0]
        self.duration_ns = self.resolved["duration_ns"]
        self.interval_ns = min(SAMPLE_INTERVAL_NS, self.resolved["sample_interval_ns"])
        self.groups = _groups(self.resolved)
        self.flows = [
            LabFlow(index, self.groups[spec["group"]], spec)
            for index, spec in enumerate(self.resolved["flows"])
        ]
        self.cbr = sources.plan(self.resolved["sources"], self.duration_ns)
        self.secret = secret_file(tmp)
        # Group index → the BPF stack registered for it (lab/bpf.py).
        self.registrations: dict[int, bpf.Registration] = {}

    def run(self) -> Result:
        self._build()
        try:
            self._register_stacks()
            asked, granted = self._configure_hosts()
            server, address = self._server()
            try:
                sinks = sources.start_sinks(self.cbr, self.topology, self.tmp)
                measured = self._measure(address)
            finally:
                stop(server)
        finally:
            self._release_stacks()
        source_reports = sources.collect(sinks)
        return self._result(*measured, source_reports, asked, granted)

    @contextmanager
    def path(self) -> Iterator[PathEnds]:
        """The hosts configured and the emulator running, for someone else's traffic."""
        self._build()
        try:
            self._register_stacks()
            self._configure_hosts()
            self.ledger.clear_cpu(EMULATOR_CPU)
            emu = Emulator(self.topology, self._emulator_config(), self.tmp)
            sender = self.topology.senders[0]
            receiver = self.topology.receiver
            try:
                yield PathEnds(sender.ns, sender.ip, receiver.ns, receiver.ip)
            except BaseException:
                emu.kill()
                raise
            emu.finish()
        finally:
            self._release_stacks()

    def _build(self) -> None:
        mtus = [mtu_for(g.first["mss_bytes"]) for g in self.groups]
        self.topology = build(self.ledger, mtus, [s.mtu_bytes for s in self.cbr])
        for group, host in zip(self.groups, self.topology.senders, strict=True):
            group.host = host

    def _measure(self, address: str) -> tuple[dict[str, Any], pd.DataFrame, dict[str, int]]:
        """Runs the traffic through the emulator: its statistics, its samples and the
        kernel's drops outside the bottleneck; the CE packets each direction's receiving
        kernels counted go to `received_ce`."""
        backlog_before = kernel.backlog_drops()
        links_before = kernel.link_drops(self.topology.veths())
        receivers = self._receivers()
        ip_before = {ns: kernel.ip_counters(ns) for nss in receivers.values() for ns in nss}
        # A thread of any process landing on the emulator's CPU runs a whole time slice
        # (~1 ms here: DAMON's kdamond, the host agent) before the emulator gets it back.
        self.threads_moved = self.ledger.clear_cpu(EMULATOR_CPU)
        steal_before_ms = kernel.steal_ms(EMULATOR_CPU)
        emu = Emulator(self.topology, self._emulator_config(), self.tmp)
        try:
            self.t0_unix_ns = emu.start_unix_ns
            t0 = time.monotonic() - (time.time_ns() - self.t0_unix_ns) / 1e9
            self._launch_all(address, t0, emu.check_alive)
            _wait_until(t0 + self.duration_ns / 1e9, emu.check_alive)
            stats, samples = emu.finish()
        except BaseException:
            emu.kill()
            raise
        self.steal_ms = kernel.steal_ms(EMULATOR_CPU) - steal_before_ms
        drops = {"kernel backlog": kernel.backlog_drops() - backlog_before}
        links_after = kernel.link_drops(self.topology.veths())
        drops |= {f"veth {dev}": links_after[dev] - n for dev, n in links_before.items()}
        ip_delta = {
            ns: {key: value - ip_before[ns][key] for key, value in kernel.ip_counters(ns).items()}
            for ns in ip_before
        }
        self.received_ce = {
            direction: sum(ip_delta[ns]["InCEPkts"] for ns in nss)
            for direction, nss in receivers.items()
        }
        # A header the emulator rewrote (CE) with a wrong checksum is dropped on arrival.
        drops["IP header checksum errors"] = sum(d["InCsumErrors"] for d in ip_delta.values())
        return stats, samples, drops

    def _receivers(self) -> dict[str, list[str]]:
        """The namespaces each direction delivers to: the receiver (forward), every sender
        and source (reverse)."""
        return {
            "forward": [self.topology.receiver.ns],
            "reverse": [host.ns for host in self.topology.left_hosts],
        }

    def _emulator_config(self) -> dict[str, Any]:
        # A group's induced losses are its address's: the backend asks them only of groups of
        # one flow (backends/lab.py).
        endpoints = [
            Endpoint(
                g.host.ip, *_one_way_delays_ns(g.first), drop_at_ns=tuple(g.first["drop_at_ns"])
            )
            for g in self.groups
            if g.host
        ]
        delay_ns = self.link["delay_ns"]
        endpoints += [Endpoint(h.ip, delay_ns, delay_ns) for h in self.topology.sources]
        reverse_queue = any(f["reverse"] for f in self.resolved["flows"])
        reverse_queue |= any(s.reverse for s in self.cbr)
        self.config = emulator.config(
            self.link, self.topology, endpoints, reverse_queue, self.duration_ns, self.interval_ns
        )
        return self.config

    # Congestion controls

    def _register_stacks(self) -> None:
        """Registers each BPF stack a group asks for, once per distinct table (stack and
        parameters), under a name unique to this run; the kernel's own stacks need nothing.
        A stack tcpeval has in BPF always runs as that, even where the kernel has a module or
        a registration of the same name: the lab judges the same code on every host."""
        by_table: dict[str, bpf.Registration] = {}
        for group in self.groups:
            table = group.first["cc"]
            if table["name"] not in bpf.stacks():
                continue
            key = json.dumps(table, sort_keys=True)
            if key not in by_table:
                name = bpf.run_unique_name(self.ledger.prefix, table["name"], len(by_table))
                by_table[key] = bpf.register(self.ledger, table, name)
            self.registrations[group.index] = by_table[key]

    def _release_stacks(self) -> None:
        for registration in {id(r): r for r in self.registrations.values()}.values():
            bpf.release(registration)

    def _kernel_cc(self, group: Group) -> str:
        """The name the kernel knows the group's stack by."""
        registration = self.registrations.get(group.index)
        return registration.name if registration else str(group.first["cc"]["name"])

    def _receiver_cc(self) -> str:
        """The receiver's sockets run the stack of a group that needs DCTCP's per-packet
        echo (RFC 8257 §3.2; the kernel echoes so only for a socket whose stack asks), else
        the first group's. One receiver serves every group: with such a stack beside a
        classic ECN sender, that sender's ACKs carry the per-packet echo too."""
        stacks = bpf.stacks()
        for group in self.groups:
            registration = self.registrations.get(group.index)
            if registration and stacks[registration.stack].per_packet_echo:
                return registration.name
        return self._kernel_cc(self.groups[0])

    def _bpf_details(self) -> dict[str, dict[str, Any]]:
        """Each BPF stack registered: what it is, its complete parameters, its groups, and
        how its ECN differs from the scenario's where this kernel forces it."""
        details: dict[str, dict[str, Any]] = {}
        for index, registration in self.registrations.items():
            entry = details.setdefault(
                registration.name,
                {
                    "stack": registration.stack,
                    "params": registration.params,
                    "groups": [],
                    "programs": registration.programs,
                },
            )
            entry["groups"].append(index)
            if any(flow.get("ecn") == "l4s" for flow in self.groups[index].flows):
                entry["ecn"] = L4S_ON_CLASSIC_FEEDBACK
        return details

    # Hosts

    def _configure_hosts(self) -> tuple[dict[str, str], dict[str, str]]:
        """Sets every sysctl and route the run relies on; returns them asked and read back."""
        if int(read_sysctl("net.core.netdev_max_backlog")) < BACKLOG_PKTS:
            self.ledger.set_global_sysctl("net.core.netdev_max_backlog", str(BACKLOG_PKTS))
        buffer_bytes = _buffer_bytes(self.groups, self.link)
        if any(g.first["window_pkts"] is not None for g in self.groups):
            for key in ("net.core.rmem_max", "net.core.wmem_max"):
                if int(read_sysctl(key)) < buffer_bytes:
                    self.ledger.set_global_sysctl(key, str(buffer_bytes))
        self._allow_algorithms()
        asked: dict[str, str] = {}
        granted: dict[str, str] = {}
        hosts = [(g.host, g, self._kernel_cc(g), _tcp_ecn(g)) for g in self.groups if g.host]
        receiver = (self.topology.receiver, self.groups[0], self._receiver_cc())
        hosts.append((*receiver, TCP_ECN_ACCEPT))
        for host, group, cc, tcp_ecn in hosts:
            wanted = _host_sysctls(group.first, cc, buffer_bytes) | {
                "net.ipv4.tcp_ecn": tcp_ecn,
                # Linux's default is 0; 1 probes for a smaller MSS once timeouts suggest a
                # black hole (RFC 4821 §7.7).
                "net.ipv4.tcp_mtu_probing": "1"
                if self.scenario.flow[group.index].mtu_probing
                else "0",
            }
            asked |= {f"{host.ns}:{k}": v for k, v in wanted.items()}
            granted |= {f"{host.ns}:{k}": v for k, v in set_sysctls(host.ns, wanted).items()}
        for group in self.groups:
            assert group.host is not None
            _route(group.host, "10.201.0.0/16", group.first)
            _route(self.topology.receiver, f"{group.host.ip}/32", group.first)
        return asked, granted

    def _allow_algorithms(self) -> None:
        """A namespace other than the host's may default only to an algorithm the host
        allows (tcp_set_default_congestion_control: EPERM otherwise)."""
        key = "net.ipv4.tcp_allowed_congestion_control"
        allowed = read_sysctl(key).split()
        wanted = [self._kernel_cc(g) for g in self.groups]
        missing = [name for name in dict.fromkeys(wanted) if name not in allowed]
        if missing:
            self.ledger.set_global_sysctl(key, " ".join([*allowed, *missing]))

    def _server(self) -> tuple[subprocess.Popen[str], str]:
        limit_s = self.duration_ns // 10**9 + END_MARGIN_S
        # No stranger reaches this namespace: the bounds a server facing the internet keeps
        # on handshakes (per address, per network, and their deadline) would only refuse
        # flows that start together from one host on a loaded machine.
        every_flow = str(len(self.flows) + 1)
        command = [
            str(probe_binary()), "serve", "--listen", f"{RECEIVER_IP}:0", "--secret-file",
            str(self.secret), "--max-clients", every_flow, "--max-handshakes", every_flow,
            "--max-handshakes-per-address", every_flow, "--max-handshakes-per-prefix",
            every_flow, "--handshake-timeout-ms", str(HANDSHAKE_TIMEOUT_MS),
            "--max-duration-s", str(limit_s),
        ]  # fmt: skip
        process = spawn(self.topology.receiver.ns, command, cpu=KERNEL_CPU)
        return process, listening_address(process, "the probe server")

    # Traffic

    def _launch_all(self, address: str, t0: float, alive: Callable[[], None]) -> None:
        """Starts each flow's client and each source at its start time, in start order,
        then waits for them all; `alive` raises if the emulator died meanwhile."""
        starts: list[tuple[int, LabFlow | sources.Source]] = [
            (f.spec["start_ns"], f) for f in self.flows
        ]
        starts += [(s.start_ns, s) for s in self.cbr]
        clients = []
        for start_ns, item in sorted(starts, key=lambda entry: entry[0]):
            _wait_until(t0 + start_ns / 1e9, alive)
            if isinstance(item, sources.Source):
                clients.append(sources.start_sender(item, self.topology))
            else:
                clients.append(self._start_client(item, address))
        deadline = t0 + self.duration_ns / 1e9 + END_MARGIN_S
        for process in clients:
            _wait_for(process, deadline, alive)

    def _start_client(self, flow: LabFlow, address: str) -> subprocess.Popen[str]:
        host = flow.group.host
        assert host is not None
        flow.settings = self._settings(flow.spec, self._kernel_cc(flow.group), address)
        flow.raw = self.tmp / f"flow{flow.id}"
        arguments = [*flow.settings.arguments(), "--out", str(flow.raw)]
        return spawn(host.ns, [str(probe_binary()), "tcp", *arguments], cpu=KERNEL_CPU)

    def _settings(self, spec: dict[str, Any], cc: str, address: str) -> TcpSettings:
        end_ns = spec["stop_ns"] if spec["stop_ns"] is not None else self.duration_ns
        window, size, pacing = spec["window_pkts"], spec["size_bytes"], spec["pacing_rate_bps"]
        return TcpSettings(
            server=address,
            secret_file=str(self.secret),
            cc=cc,
            window=None if window is None else f"{window * spec['mss_bytes']}B",
            # The MSS comes from the veth's MTU, as on a real host (TCP_MAXSEG would count
            # the timestamp option twice).
            pacing=None if pacing is None else f"{pacing}bps",
            duration=None if size else f"{(end_ns - spec['start_ns']) // 10**6}ms",
            bytes=None if size is None else f"{size}B",
            reverse=spec["reverse"],
            sample_interval=f"{self.interval_ns // 10**6}ms",
        )

    # The result

    def _result(
        self,
        stats: dict[str, Any],
        samples: pd.DataFrame,
        kernel_drops: dict[str, int],
        source_reports: list[dict[str, Any]],
        asked: dict[str, str],
        granted: dict[str, str],
    ) -> Result:
        probes = [
            (f, result_from_raw(f.raw, f.settings, 0.0)) for f in self.flows if f.raw and f.settings
        ]
        frames, flows = _merge_flows(probes, self.t0_unix_ns)
        valid, reason, records = checks.verdict(
            self._checks(stats, kernel_drops, probes, flows, asked, granted)
        )
        reverse = self.config["reverse"]["rate_bps"] is not None
        links = _links_frame(samples, reverse)
        bottleneck = self._link_summary(stats["forward"], links, "bottleneck")
        summary = {
            "backend": {
                "name": "lab",
                "wall_seconds": 0.0,
                "duration_s": self.duration_ns / 1e9,
                "valid": valid,
                "invalid_reason": reason,
                "details": {
                    "checks": records,
                    "emulator": stats,
                    "emulator_config": self.config,
                    "sysctls": granted,
                    "global_sysctls_changed": self.ledger.sysctls,
                    "threads_moved_off_the_emulators_cpu": self.threads_moved,
                    "hypervisor_steal_ms_on_the_emulators_cpu": self.steal_ms,
                    "induced_drops": self._induced_drops(stats),
                    "kernel": Path("/proc/sys/kernel/osrelease").read_text().strip(),
                    "sample_interval_s": self.interval_ns / 1e9,
                    "bpf_stacks": self._bpf_details(),
                },
            },
            "scenario": describe(self.scenario),
            "flows": flows,
            "bottleneck": bottleneck,
            "links": [bottleneck, *self._reverse_summary(stats, links)],
            "jain_index": jain_index([f["goodput_mbps"] for f in flows]) if flows else None,
            "sources": source_reports,
            "exchanges": [],
            "transfers": [],
        }
        return Result(summary=summary, flows=frames, links=links)

    def _checks(
        self,
        stats: dict[str, Any],
        kernel_drops: dict[str, int],
        probes: list[tuple[LabFlow, Result]],
        flows: list[dict[str, Any]],
        asked: dict[str, str],
        granted: dict[str, str],
    ) -> list[checks.Check]:
        smallest_rtt_ns = min(g.first["rtt_ns"] for g in self.groups)
        found: list[checks.Check | None] = [checks.own_drops(stats, kernel_drops)]
        for name, loss in (("forward", self.link["loss"]), ("reverse", self.link["reverse_loss"])):
            direction = stats[name]
            found.append(checks.rate(direction, self._asked_rate_bps(name), name))
            found += checks.delays(direction, name)
            found.append(checks.lateness(direction, smallest_rtt_ns, name, self.steal_ms))
            found.append(checks.random_loss(direction, loss, name))
        if not self.cbr and not any(f["reverse"] for f in self.resolved["flows"]):
            retransmitted = sum(f["retransmits"] or 0 for f in flows)
            path = checks.PathShape(
                reorders=self.link["reorder"] is not None,
                black_hole=self.link["mtu_black_hole_bytes"] is not None,
            )
            found.append(checks.retransmits(stats["forward"], retransmitted, path))
        found.append(checks.marks(stats, self.received_ce))
        frames = [result.flows for _, result in probes]
        reorder = self.link["reorder"]
        found.append(checks.reordering(_last_total(frames, "reord_seen"), reorder is not None))
        found.append(checks.held_back(stats["forward"], reorder))
        found.append(checks.unset_ssthresh(frames))
        found.append(checks.settings(asked | self._asked_sockets(), granted | _sockets(probes)))
        programs = {r.name: r.programs for r in self.registrations.values()}
        found.append(checks.skipped_calls(programs))
        return [check for check in found if check is not None]

    def _induced_drops(self, stats: dict[str, Any]) -> list[dict[str, Any]]:
        """Per flow that asked for induced losses, the times asked and the arrival of each
        segment dropped, on the run's clock (s): the emulator's, which counts from `t0`."""
        endpoints = {e["ip"]: e for e in stats["forward"]["endpoints"]}
        found = []
        for flow in self.flows:
            host = flow.group.host
            if not flow.spec["drop_at_ns"] or host is None:
                continue
            dropped_ns = endpoints[host.ip]["dropped_at_ns"]
            found.append(
                {
                    "flow": flow.id,
                    "asked_s": sorted(t / 1e9 for t in flow.spec["drop_at_ns"]),
                    "dropped_s": [t / 1e9 for t in dropped_ns],
                }
            )
        return found

    def _asked_rate_bps(self, direction: str) -> int | None:
        """The scenario's rate (never the emulator's config: that is what is judged)."""
        if direction == "reverse" and self.config["reverse"]["rate_bps"] is None:
            return None
        return int(self.link["rate_bps"])

    def _asked_sockets(self) -> dict[str, Any]:
        """Each socket's algorithm and MSS; not the MSS behind a path-MTU black hole, which
        a kernel that probes lowers (RFC 4821 §7.7): that is what such a run measures."""
        asked = {}
        for flow in self.flows:
            asked[f"flow {flow.id} cc"] = self._kernel_cc(flow.group)
            if self.link["mtu_black_hole_bytes"] is None:
                asked[f"flow {flow.id} mss"] = flow.spec["mss_bytes"]
        return asked

    def _link_summary(
        self, direction: dict[str, Any], links: pd.DataFrame, name: str
    ) -> dict[str, Any]:
        """Utilization, bytes sent and the mean queue over the scenario's duration (the run's
        clock starts with the emulator, just before the first flow is launched; a flow's
        connection set-up makes it send a little past the end); drops over the whole run, as
        the flows' retransmissions."""
        own = links[(links["link"] == name) & (links["t_s"] <= self.duration_ns / 1e9)]
        rate_bps = self.link["rate_bps"]
        queue_pkts = self.link["queue_pkts"]
        largest = max(h.mtu_bytes for h in self.topology.left_hosts)
        tx_bytes = int(own["tx_bytes"].iloc[-1]) if len(own) else 0
        return {
            "name": name,
            "utilization": tx_bytes * 8 / (rate_bps * self.duration_ns / 1e9),
            "drops": checks.bottleneck_drops(direction),
            "queue_drops": direction["queue_drops"],
            "random_drops": direction["random_drops"],
            "induced_drops": direction["induced_drops"],
            "aqm_drops": direction["aqm_drops"],
            "aqm_marks": direction["aqm_marks"],
            "policer_drops": direction["policer_drops"],
            "black_hole_drops": direction["black_hole_drops"],
            "reordered_pkts": direction["reordered_pkts"],
            "mean_queue_pkts": float(own["queue_pkts"].mean()) if len(own) else 0.0,
            "capacity_pkts": queue_pkts or self.link["queue_bytes"] // largest,
            "tx_bytes": tx_bytes,
        }

    def _reverse_summary(self, stats: dict[str, Any], links: pd.DataFrame) -> list[dict]:
        if self.config["reverse"]["rate_bps"] is None:
            return []
        return [self._link_summary(stats["reverse"], links, "bottleneck:reverse")]


def _merge_flows(
    probes: list[tuple[LabFlow, Result]], t0_unix_ns: int
) -> tuple[pd.DataFrame, list[dict]]:
    """Each flow's stream, numbered as the scenario numbers flows, on the run's clock (the
    probe says when its stream began on the wall clock)."""
    frames, flows = [], []
    for flow, probe in probes:
        assert flow.raw is not None
        began_unix_ns = json.loads((flow.raw / "summary.json").read_text())["start_unix_ns"]
        offset_s = (began_unix_ns - t0_unix_ns) / 1e9
        frame = probe.flows.copy()
        frame["flow"] = flow.id
        frame["t_s"] += offset_s
        frames.append(frame)
        (stream,) = probe.summary["flows"]
        flows.append(
            stream
            | {
                "id": flow.id,
                "group": flow.group.index,
                "rtt_ms": flow.spec["rtt_ns"] / 1e6,
                "min_rtt_ms": stream["rtt_ms"],
                # The scenario's name for the stack (a BPF stack runs under a run-unique one).
                "cc": flow.spec["cc"]["name"],
                "start_s": stream["start_s"] + offset_s,
                "end_s": stream["end_s"] + offset_s,
            }
        )
    if not frames:
        return pd.DataFrame(columns=list(FLOW_COLUMNS)), flows
    return pd.concat(frames, ignore_index=True), flows


def _sockets(probes: list[tuple[LabFlow, Result]]) -> dict[str, Any]:
    """What each socket got: its algorithm (from the sending end) and its MSS."""
    got = {}
    for flow, probe in probes:
        details = probe.summary["backend"]["details"]
        (granted,) = details["server_granted"] if details["reverse"] else details["granted"]
        got[f"flow {flow.id} cc"] = granted.get("cc")
        if len(probe.flows):
            got[f"flow {flow.id} mss"] = int(probe.flows["snd_mss_bytes"].iloc[-1])
    return got


def _last_total(frames: list[pd.DataFrame], column: str) -> int | None:
    if not frames or any(column not in frame for frame in frames):
        return None
    return int(sum(frame.groupby("flow")[column].last().sum() for frame in frames))


def _links_frame(samples: pd.DataFrame, reverse: bool) -> pd.DataFrame:
    """The emulator's samples: on the run's clock, which starts with the emulator's."""
    kept = samples[reverse | (samples["direction"] == "forward")]
    names = {"forward": "bottleneck", "reverse": "bottleneck:reverse"}
    return pd.DataFrame(
        {
            "t_s": kept["t_ns"] / 1e9,
            "link": kept["direction"].map(names),
            "queue_pkts": kept["queue_pkts"].astype(float),
            "drops": kept["drops"].astype("uint64"),
            "tx_bytes": kept["sent_bytes"].astype("uint64"),
            "queue_bytes": kept["queue_bytes"].astype(float),
        }
    ).reset_index(drop=True)


def _groups(resolved: dict[str, Any]) -> list[Group]:
    groups: dict[int, Group] = {}
    for flow in resolved["flows"]:
        groups.setdefault(flow["group"], Group(flow["group"], [])).flows.append(flow)
    return list(groups.values())


# net.ipv4.tcp_ecn: 1 asks for ECN on the connections it opens and accepts it, 2 (Linux's
# default) only accepts it when asked, 0 neither. This kernel takes nothing above 2 (no
# AccECN), which L4S senders need; the backend refuses `ecn = "l4s"` (backends/lab.py).
TCP_ECN_ASK = "1"
TCP_ECN_ACCEPT = "2"
TCP_ECN_OFF = "0"


L4S_ON_CLASSIC_FEEDBACK = (
    "l4s asked; ran on DCTCP-style feedback (classic ECN negotiation, every CE mark echoed; "
    "this kernel has no AccECN) with ECT(0) (a BPF stack cannot set ECT(1))"
)


def _tcp_ecn(group: Group) -> str:
    """A sender namespace asks for classic ECN (RFC 3168) if any of its flows wants it, and
    is off otherwise. Its flows open the connections, also those whose data comes back
    (`reverse`): ECN is negotiated by the SYN, then both ends send ECT. `l4s` reaches here
    only for a BPF stack with DCTCP's echo (backends/lab.py), which runs on classic ECN."""
    wanted = {flow.get("ecn", "off") for flow in group.flows}
    unknown = wanted - {"off", "classic", "l4s"}
    if unknown:
        raise LabError(f"flow[{group.index}].ecn: {sorted(unknown)} is not supported in the lab")
    return TCP_ECN_ASK if wanted & {"classic", "l4s"} else TCP_ECN_OFF


def _one_way_delays_ns(flow: dict[str, Any]) -> tuple[int, int]:
    """A flow's delays as the emulator applies them: (left to right, right to left). Its
    data direction takes `forward_delay_ns` where given, else half the RTT; a reverse flow's
    data go right to left."""
    rtt_ns, data_ns = flow["rtt_ns"], flow["forward_delay_ns"]
    if data_ns is None:
        return rtt_ns // 2, rtt_ns - rtt_ns // 2
    if flow["reverse"]:
        return rtt_ns - data_ns, data_ns
    return data_ns, rtt_ns - data_ns


def _host_sysctls(flow: dict[str, Any], cc: str, buffer_bytes: int) -> dict[str, str]:
    """Per-namespace settings: a new namespace defaults to bbr, keeps ssthresh between
    connections and caps buffers at 4 MB; none of that is what a scenario means."""
    return {
        "net.ipv4.tcp_congestion_control": cc,
        "net.ipv4.tcp_no_metrics_save": "1",
        "net.ipv4.tcp_sack": "1" if flow["sack"] else "0",
        "net.ipv4.tcp_wmem": f"4096 16384 {buffer_bytes}",
        "net.ipv4.tcp_rmem": f"4096 131072 {buffer_bytes}",
        # Linux's default; 0 acknowledges every segment while a hole is open.
        "net.ipv4.tcp_comp_sack_nr": "44" if flow["sack_compression"] else "0",
        # Bit 1 is RACK loss detection (Linux's default); without it, DupThresh alone.
        "net.ipv4.tcp_recovery": "1" if flow["loss_detection"] == "rack" else "0",
        # 3 is Linux's default (tail loss probes on); 0 turns them off.
        "net.ipv4.tcp_early_retrans": "3" if flow["tail_loss_probe"] else "0",
        # Linux's defaults (1, 2); 0 stops D-SACK reports and their undo, and F-RTO.
        "net.ipv4.tcp_dsack": "1" if flow["undo"] else "0",
        "net.ipv4.tcp_frto": "2" if flow["undo"] else "0",
        # Linux's default (1, with a random offset per connection).
        "net.ipv4.tcp_timestamps": "1" if flow["timestamps"] else "0",
    }


def _buffer_bytes(groups: list[Group], link: dict[str, Any]) -> int:
    """Room for four times the largest path (BDP plus queue), and at least 16 MB: the
    buffers must never be what limits a flow the scenario did not limit."""
    largest_rtt_ns = max(g.first["rtt_ns"] for g in groups)
    queue_bytes = link["queue_bytes"] or (link["queue_pkts"] or 0) * 9000
    path_bytes = link["rate_bps"] * largest_rtt_ns // 8 // 10**9 + queue_bytes
    return max(16 << 20, 4 * path_bytes)


def _route(host: Host, destination: str, flow: dict[str, Any]) -> None:
    """initcwnd and rto_min are per route in Linux (ip-route(8))."""
    rto_ms = max(1, flow["min_rto_ns"] // 10**6)
    ns_sh(host.ns, "ip", "route", "replace", destination, "dev", host.dev,
          "initcwnd", str(flow["initial_cwnd_pkts"]), "rto_min", f"{rto_ms}ms")  # fmt: skip


def _wait_until(deadline: float, alive: Callable[[], None]) -> None:
    """Sleeps until `deadline`, calling `alive` every WATCH_S."""
    while (remaining := deadline - time.monotonic()) > 0:
        alive()
        time.sleep(min(remaining, WATCH_S))


def _wait_for(process: subprocess.Popen[str], deadline: float, alive: Callable[[], None]) -> None:
    """Waits for `process` to end by `deadline`, calling `alive` every WATCH_S."""
    while True:
        alive()
        try:
            left_s = max(0.0, deadline - time.monotonic())
            _, errors = process.communicate(timeout=min(WATCH_S, left_s))
            break
        except subprocess.TimeoutExpired:
            if time.monotonic() >= deadline:
                stop(process)
                raise LabError("a lab process did not finish in time") from None
    if process.returncode:
        said = (errors or "").strip().splitlines()
        raise LabError(f"a lab process failed: {said[-1] if said else process.returncode}")
