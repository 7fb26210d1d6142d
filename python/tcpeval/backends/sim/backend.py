"""The simulator backend: a scenario in, a Result out, through the Rust core.

Python resolves the scenario and hands it over as JSON; the core returns a summary and columns
(docs/contract.md). Nothing here touches packets.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from typing import Any

import numpy as np
import pandas as pd

from tcpeval import _core
from tcpeval.backends.estimate import Estimate
from tcpeval.backends.protocol import BackendError, Problem, refusals
from tcpeval.backends.sim.memory import check_budget, default_budget_bytes
from tcpeval.backends.sim.progress import simulate_watched
from tcpeval.backends.sim.wall_estimate import estimate_wall
from tcpeval.metrics import jain_index
from tcpeval.result import LINK_COLUMNS, SIM_LINK_COLUMNS, Result
from tcpeval.scenario import Resolution, Scenario, ScenarioError, cc_algorithms, describe
from tcpeval.scenario import resolution as resolve


class Simulator:
    """The simulator; `max_memory_bytes` (default: memory.default_budget_bytes) is the
    budget a scenario's estimated memory must fit, `show_progress` draws a bar on a terminal
    for long runs (the CLI's; never in a sweep's workers)."""

    name = "sim"
    description = "the packet-level simulator (crates/sim): every key, every algorithm"
    runs_per_host: int | None = None
    real_time: bool = False

    def __init__(self, max_memory_bytes: int | None = None, show_progress: bool = False) -> None:
        self.max_memory_bytes = max_memory_bytes
        self.show_progress = show_progress

    def available(self) -> str | None:
        return None

    def algorithms(self) -> list[str]:
        return [algorithm["name"] for algorithm in cc_algorithms()]

    def refused_keys(self) -> Mapping[str, str]:
        return {}

    def interactive(self, max_memory_bytes: int | None) -> Simulator:
        return Simulator(max_memory_bytes, show_progress=True)

    def supports(self, scenario: Scenario) -> list[Problem]:
        probing = [
            Problem(f"flow[{index}].mtu_probing", True, MTU_PROBING_REASON)
            for index, group in enumerate(scenario.flow)
            if group.mtu_probing
        ]
        return refusals(self, scenario) + probing + self._over_budget(scenario)

    def estimate_wall(self, scenario: Scenario) -> Estimate:
        return estimate_wall(scenario, resolve(scenario))

    def run(self, scenario: Scenario) -> Result:
        resolved = resolve(scenario)
        as_json = json.dumps(resolved.resolved, allow_nan=False)
        try:
            summary_json, flow_columns, link_columns, pcap = simulate_watched(
                as_json, scenario.duration.ns, self.show_progress
            )
        except _core.ScenarioRejected as error:
            raise _in_user_terms(error, resolved) from None
        except MemoryError as error:
            raise BackendError(f"{error}; a lower --max-memory refuses such runs first") from None
        summary = _backend_section(json.loads(summary_json))
        summary["scenario"] = describe(scenario)
        summary["jain_index"] = jain_index([flow["goodput_mbps"] for flow in summary["flows"]])
        summary["transfers"] = _transfers(summary, resolved)
        _add_latency_in_rtts(summary, resolved)
        return Result(summary, _flows_frame(flow_columns), _links_frame(link_columns), pcap)

    def _over_budget(self, scenario: Scenario) -> list[Problem]:
        budget = self.max_memory_bytes or default_budget_bytes()
        try:
            check_budget(scenario, resolve(scenario), budget)
        except ScenarioError as error:
            return [Problem(error.field, error.value, error.reason)]
        return []


MTU_PROBING_REASON = (
    "is not supported: the simulator's senders keep their MSS (no RFC 4821 probing)"
)

BACKEND = Simulator()


def _backend_section(summary: dict[str, Any]) -> dict[str, Any]:
    """The core's `sim` counters become the backend section every result has."""
    counters = summary.pop("sim")
    summary["backend"] = {
        "name": BACKEND.name,
        "wall_seconds": counters.pop("wall_seconds"),
        "duration_s": counters.pop("sim_seconds"),
        "details": counters,
    }
    return summary


def _flows_frame(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    """The contract's columns first, then the simulator's own (its ECN counters), then the
    controllers' state (`cc_*`, docs/bbr3.md), as the core orders them."""
    return pd.DataFrame(columns)


def _links_frame(columns: dict[str, Any]) -> pd.DataFrame:
    """Link columns with the `link` index replaced by the link's name."""
    frame = pd.DataFrame({name: columns[name] for name in (*LINK_COLUMNS, *SIM_LINK_COLUMNS)})
    frame["link"] = np.asarray(columns["link_names"], dtype=object)[frame["link"].to_numpy()]
    return frame


def _transfers(summary: dict[str, Any], resolved: Resolution) -> list[dict[str, Any]]:
    """Each striped transfer, done when the last of its streams is (None until then)."""
    flows = summary["flows"]
    transfers = []
    for transfer in resolved.transfers:
        completions = [flows[flow]["completion_s"] for flow in transfer.flows]
        done = None if None in completions else max(completions)
        transfers.append(asdict(transfer) | {"completion_s": done})
    return transfers


def _add_latency_in_rtts(summary: dict[str, Any], resolved: Resolution) -> None:
    """Each exchange's latencies also in base RTTs of its flows."""
    exchanges = zip(summary["exchanges"], resolved.resolved["exchanges"], strict=True)
    for reported, exchange in exchanges:
        rtt_s = resolved.resolved["flows"][exchange["request_flow"]]["rtt_ns"] / 1e9
        reported["latency_rtts"] = [latency / rtt_s for latency in reported["latencies_s"]]


def _in_user_terms(error: _core.ScenarioRejected, resolved: Resolution) -> ScenarioError:
    """The core names an entry of the resolved scenario (`flows`, 3); point at the table of the
    user's scenario that flow 3 came from (`flow[1]`) instead."""
    entry, index, key, value, reason = error.args
    table = None if entry is None or index is None else resolved.origins[entry][index]
    return ScenarioError(key if table is None else f"{table}.{key}", value or None, reason)
