"""The model backend: the analytical models answer a scenario in the result shape every
backend shares, so the simulator, the kernel and the models can be set side by side.

Time is cut into epochs at every flow's start and stop; in each, the rates come from
`shares.share` (piecewise steady state). A flow whose window a single induced loss
(`drop_at`) cuts follows its algorithm's regrowth (`stacks.Stack.window_after_loss_pkts`).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping
from typing import Any

from tcpeval.backends.model.aqm import Discipline, discipline
from tcpeval.backends.model.flows import LinkState, ModelFlow
from tcpeval.backends.model.series import FlowPlan, Grid, flow_series, link_series
from tcpeval.backends.model.shares import share
from tcpeval.backends.model.stacks import REGROWTH, RESPONSE, Stack
from tcpeval.backends.protocol import Problem, rate_changes, refusals
from tcpeval.metrics import jain_index
from tcpeval.result import Result
from tcpeval.scenario import Scenario, cc_algorithms, describe, resolution
from tcpeval.scenario.model import DEFAULT_PACKET_BYTES

REFUSED = {
    "link": "the models know one shared link ([bottleneck] only)",
    "web": "no model of short web transfers",
    "reqresp": "no model of request-response exchanges",
    "onoff": "no model of on-off sources",
    "pcap": "a model has no packets to capture",
    "flow.size": "the models give steady rates, not completion times",
    "flow.streams": "the models give steady rates, not completion times",
    "bottleneck.ack_loss": "no model of loss on the ACK path",
    "bottleneck.policer": "no model of how a flow answers a policer's drops",
    "bottleneck.reorder": "no model of how a flow answers reordering",
    "bottleneck.mtu_black_hole": "no model of a path that drops the larger packets",
    "flow.mtu_probing": "the models' senders keep their MSS",
    "bottleneck.outage": "the models give the steady state of a path that stays up",
    "bottleneck.ack_outage": "the models give the steady state of a path that stays up",
    "flow.route_changes": "the models know one shared link ([bottleneck] only)",
}

# The queue disciplines with a model (backends/model/aqm.py); the others are refused.
MODELLED_AQMS = ("droptail", "step", "red")


class Models:
    name = "model"
    runs_per_host: int | None = None
    real_time: bool = False
    description = (
        f"analytical models: response functions ({', '.join(RESPONSE)}), window and rate "
        "limits, drop-tail link shares, DCTCP through a step marker, RED's equilibrium "
        "(marking or dropping); other stacks only where a limit of their own binds"
    )

    def available(self) -> str | None:
        return None

    def algorithms(self) -> list[str]:
        return [algorithm["name"] for algorithm in cc_algorithms()]

    def refused_keys(self) -> Mapping[str, str]:
        return REFUSED

    def supports(self, scenario: Scenario) -> list[Problem]:
        problems = refusals(self, scenario)
        problems += rate_changes(scenario, "the models give the steady state of one rate")
        if scenario.bottleneck is not None:
            aqm, loss = scenario.bottleneck.aqm, scenario.bottleneck.loss
            if aqm.name not in MODELLED_AQMS:
                problems.append(Problem("bottleneck.aqm", aqm.name, f"no model of {aqm.name} here"))
            if aqm.name == "step":
                problems += _dctcp_rtts(scenario)
            if not isinstance(loss, float):
                reason = "the models take independent random loss (a probability)"
                problems.append(Problem("bottleneck.loss", None, reason))
        for path, table in scenario.routed_tables():
            if getattr(table, "direction", "forward") == "reverse":
                reason = "the models know the forward direction only"
                problems.append(Problem(f"{path}.direction", "reverse", reason))
        for index, group in enumerate(scenario.flow):
            if group.drop_at and group.cc.name not in REGROWTH:
                reason = (
                    f"the models follow the regrowth after a loss of {', '.join(REGROWTH)} only"
                )
                problems.append(Problem(f"flow[{index}].drop_at", None, reason))
        return problems

    def run(self, scenario: Scenario) -> Result:
        started = time.perf_counter()
        resolved = resolution(scenario).resolved
        link = resolved["links"][0]
        flows = [
            _model_flow(scenario, index, flow, link) for index, flow in enumerate(resolved["flows"])
        ]
        queue_pkts = _queue_pkts(link, flows)
        packet_bytes = max((f.packet_bytes for f in flows), default=DEFAULT_PACKET_BYTES)
        aqm = discipline(link["aqm"], packet_bytes)
        assert aqm is not None, "supports() refuses the queue disciplines without a model"
        plans, link_epochs = _plans(resolved, flows, link, queue_pkts, aqm)
        duration_s = resolved["duration_ns"] / 1e9
        grid = Grid.of(resolved["duration_ns"], resolved["sample_interval_ns"])
        flow_frame, flow_summaries, wire_bps, signals = flow_series(plans, grid, duration_s)
        link_frame, link_summary = link_series(
            link, link_epochs, grid, wire_bps, duration_s, queue_pkts, signals
        )
        goodputs = [f["goodput_mbps"] for f in flow_summaries]
        summary = {
            "backend": {
                "name": self.name,
                "wall_seconds": time.perf_counter() - started,
                "duration_s": duration_s,
                "details": {
                    "formulas": sorted({f.stack.response_formula() for f in flows}),
                    "queue_models": _queue_models(link_epochs),
                },
            },
            "scenario": describe(scenario),
            "flows": flow_summaries,
            "bottleneck": link_summary,
            "links": [link_summary],
            "jain_index": None if None in goodputs else jain_index(goodputs),
            "sources": [],
            "exchanges": [],
            "transfers": [],
        }
        return Result(summary, flow_frame, link_frame)


BACKEND = Models()


def _model_flow(
    scenario: Scenario, index: int, flow: dict[str, Any], link: dict[str, Any]
) -> ModelFlow:
    table = scenario.tcp_tables()[flow["group"]][1]
    stack = Stack(table.cc.with_defaults(), flow["delayed_ack"])
    rtt_s, mss = flow["rtt_ns"] / 1e9, flow["mss_bytes"]
    limits = {
        "window": None if flow["window_pkts"] is None else flow["window_pkts"] * 8 * mss / rtt_s,
        "pacing": flow["pacing_rate_bps"],
        "source rate": flow["source_rate_bps"],
        "sink rate": flow["sink_rate_bps"],
    }
    if flow["pacing_gap_ns"]:
        limits["pacing"] = 8 * mss / (flow["pacing_gap_ns"] / 1e9)
    loss = link["loss"].get("p", 0.0) + (1 / flow["drop_every"] if flow["drop_every"] else 0.0)
    known = {name: float(value) for name, value in limits.items() if value is not None}
    return ModelFlow(index, stack, rtt_s, mss, loss, known, flow["ecn"] != "off")


def _plans(
    resolved: dict[str, Any],
    flows: list[ModelFlow],
    link: dict[str, Any],
    queue_pkts: float,
    aqm: Discipline,
) -> tuple[list[FlowPlan], list[tuple[float, float, LinkState, float]]]:
    """Each flow's answers epoch by epoch, the epochs cut at every start and stop, and the
    link's state in each epoch with its background load."""
    end_ns = resolved["duration_ns"]
    specs = resolved["flows"]
    sources = [s for s in resolved["sources"] if not s["reverse"]]
    spans = [(f["start_ns"], f["stop_ns"] or end_ns) for f in specs]
    spans_of_sources = [(s["start_ns"], s["stop_ns"] or end_ns) for s in sources]
    times = {t for span in spans + spans_of_sources for t in span if t < end_ns}
    cuts = sorted({0, end_ns, *times})
    plans = [FlowPlan(flow, spec) for flow, spec in zip(flows, specs, strict=True)]
    link_epochs = []
    for start_ns, stop_ns in itertools.pairwise(cuts):
        active = [f for f, (s, e) in zip(flows, spans, strict=True) if s <= start_ns < e]
        background = sum(
            s["rate_bps"]
            for s, (on, off) in zip(sources, spans_of_sources, strict=True)
            if on <= start_ns < off
        )
        answers, state = share(active, link["rate_bps"], queue_pkts, background, aqm)
        span = (start_ns / 1e9, stop_ns / 1e9)
        link_epochs.append((*span, state, float(background)))
        for plan in plans:
            if plan.flow.id in answers:
                plan.epochs.append((*span, answers[plan.flow.id]))
    return plans, link_epochs


def _dctcp_rtts(scenario: Scenario) -> list[Problem]:
    """The DCTCP model (Alizadeh et al. 2010 §3.3) is of flows of one RTT: a DCTCP group whose
    RTT differs from the first's is refused by name."""
    groups = [(i, group) for i, group in enumerate(scenario.flow) if group.cc.name == "dctcp"]
    if not groups:
        return []
    first, reference = groups[0]
    reason = (
        f"the DCTCP model (Alizadeh et al. 2010 §3.3) takes flows of one RTT; flow[{first}] "
        f"has {reference.rtt.given}"
    )
    return [
        Problem(f"flow[{i}].rtt", group.rtt.given, reason)
        for i, group in groups[1:]
        if group.rtt.ns != reference.rtt.ns
    ]


def _queue_models(
    link_epochs: list[tuple[float, float, LinkState, float]],
) -> list[dict[str, Any]]:
    """What the queue's model found in each epoch it answered (DCTCP's α and Q_min, RED's p):
    the figures behind the summary, for whoever checks them."""
    return [
        {"start_s": start_s, "stop_s": stop_s, **state.figures}
        for start_s, stop_s, state, _ in link_epochs
        if state.figures
    ]


def _queue_pkts(link: dict[str, Any], flows: list[ModelFlow]) -> float:
    if link["queue_pkts"] is not None:
        return float(link["queue_pkts"])
    packet = max((f.packet_bytes for f in flows), default=DEFAULT_PACKET_BYTES)
    return link["queue_bytes"] / packet
