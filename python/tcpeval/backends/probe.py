"""The probe backend: a scenario's flows as real kernel TCP streams to a `tcpeval probe serve`
on another host, measured memory to memory with 10 ms TCP_INFO histories (crates/probe).

The path is real, so the keys that describe an emulated one (rate, queue, AQM, loss, delays,
other traffic) cannot be honoured and are refused by name; the scenario's `rtt` and
`bottleneck.rate` stay in the result as what the path was expected to be. Where the server is
comes from the environment, as a scheduler's address does for sweeps on Dask:
TCPEVAL_PROBE_SERVER (HOST:PORT) and TCPEVAL_PROBE_SECRET_FILE.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from tcpeval.backends.protocol import Problem, rate_changes, refusals
from tcpeval.lab import kernel
from tcpeval.probe import TcpSettings, run_tcp
from tcpeval.probe.binary import probe_binary
from tcpeval.result import Result
from tcpeval.scenario import Scenario
from tcpeval.scenario.resolve import window_pkts as window_limit_pkts
from tcpeval.units import Rate

SERVER = "TCPEVAL_PROBE_SERVER"
SECRET_FILE = "TCPEVAL_PROBE_SECRET_FILE"

EMULATED = "a real path has its own"
REFUSED = {
    "link": f"links are emulated; {EMULATED}",
    "bottleneck.queue": f"the queue is emulated; {EMULATED}",
    "bottleneck.queue_counts": f"the queue is emulated; {EMULATED}",
    "bottleneck.aqm": f"the AQM is emulated; {EMULATED}",
    "bottleneck.loss": f"loss is emulated; {EMULATED}",
    "bottleneck.ack_loss": f"loss is emulated; {EMULATED}",
    "bottleneck.policer": f"the policer is emulated; {EMULATED}",
    "bottleneck.delay": f"delay is emulated; {EMULATED}",
    "bottleneck.reorder": f"reordering is emulated; {EMULATED}",
    "bottleneck.mtu_black_hole": f"a black hole is emulated; {EMULATED}",
    "flow.forward_delay": f"delay is emulated; {EMULATED}",
    "bottleneck.outage": f"an outage is emulated; {EMULATED}",
    "bottleneck.ack_outage": f"an outage is emulated; {EMULATED}",
    "cbr": "no background traffic on a real path (use `tcpeval probe udp`)",
    "onoff": "no background traffic on a real path",
    "web": "no web traffic on a real path",
    "reqresp": "request-response is `tcpeval probe rr`",
    "pcap": "capture with tcpdump on the hosts",
    "flow.start": "every stream starts at once",
    "flow.stop": "every stream runs the whole test",
    "flow.start_jitter": "every stream starts at once",
    "flow.streams": "give `count` streams of one transfer",
    "flow.route": "the path is the network's",
    "flow.route_changes": "the path is the network's",
    "flow.drop_at": "a real path drops what it drops",
    "flow.drop_every": "a real path drops what it drops",
    "flow.sack": "the kernel's setting, per host",
    "flow.delayed_ack": "the kernel's setting, per host",
    "flow.sack_compression": "the kernel's setting, per host",
    "flow.host": "the hosts are what they are",
    "flow.window_reduction": "the kernel's behaviour",
    "flow.loss_detection": "the kernel's setting, per host",
    "flow.lost_retransmission": "the kernel's behaviour",
    "flow.tail_loss_probe": "the kernel's setting, per host",
    "flow.undo": "the kernel's setting, per host",
    "flow.timestamps": "the kernel's setting, per host",
    "flow.rto_in_recovery": "the kernel's behaviour",
    "flow.tso": "the hosts' offload settings (ethtool -K … tso gso)",
    "flow.mtu_probing": "the kernel's setting, per host (net.ipv4.tcp_mtu_probing)",
    "flow.initial_cwnd": "a route setting of the hosts (ip route … initcwnd)",
    "flow.min_rto": "a route setting of the hosts (ip route … rto_min)",
    "flow.source_rate": "memory to memory: no application rate",
    "flow.sink_rate": "memory to memory: no application rate",
}


class Probe:
    name = "probe"
    description = f"real kernel TCP to a `tcpeval probe serve` at ${SERVER}"
    runs_per_host: int | None = 1
    real_time: bool = True

    def available(self) -> str | None:
        if not os.environ.get(SERVER) or not os.environ.get(SECRET_FILE):
            return f"set {SERVER}=HOST:PORT and {SECRET_FILE}=FILE (a `tcpeval probe serve` there)"
        try:
            probe_binary()
        except Exception as error:
            return str(error)
        return None

    def algorithms(self) -> list[str]:
        return kernel.algorithms()

    def refused_keys(self) -> Mapping[str, str]:
        return REFUSED

    def supports(self, scenario: Scenario) -> list[Problem]:
        problems = refusals(self, scenario)
        problems += rate_changes(scenario, f"a changing rate is emulated; {EMULATED}")
        if len(scenario.flow) > 1:
            reason = "one [[flow]] group: the streams of a test share one algorithm"
            problems.append(Problem("flow[1]", None, reason))
        for index, group in enumerate(scenario.flow):
            if group.direction == "reverse":
                problems.append(Problem(f"flow[{index}].direction", "reverse", "use flow[0] only"))
            if group.cc.params:
                reason = "the kernel's algorithm takes its parameters from the host"
                problems.append(Problem(f"flow[{index}].cc", group.cc.name, reason))
            if isinstance(group.pacing, Rate) or group.pacing is None:
                continue
            problems.append(Problem(f"flow[{index}].pacing", group.pacing.given, "give a rate"))
        return problems

    def run(self, scenario: Scenario) -> Result:
        group = scenario.flow[0]
        route_rate_bps = scenario.route_rate_bps(scenario.route(group))
        window_pkts = window_limit_pkts("flow[0]", group, route_rate_bps)
        settings = TcpSettings(
            server=os.environ[SERVER],
            secret_file=os.environ[SECRET_FILE],
            streams=group.count,
            cc=group.cc.name,
            window=None if window_pkts is None else f"{window_pkts * group.mss.bytes}B",
            mss=group.mss.bytes if "mss" in group.model_fields_set else None,
            pacing=None if group.pacing is None else group.pacing.given,
            duration=None if group.size else scenario.duration.given,
            bytes=None if group.size is None else f"{group.size.bytes * group.count}B",
        )
        return run_tcp(settings, scenario.name)


BACKEND = Probe()
