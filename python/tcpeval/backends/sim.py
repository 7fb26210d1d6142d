"""The simulator backend: a scenario in, a Result out, through the Rust core.

Python resolves the scenario and hands it over as JSON; the core returns a summary and columns
(docs/contract.md). Nothing here touches packets.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from tcpeval import _core
from tcpeval.metrics import jain_index
from tcpeval.result import FLOW_COLUMNS, LINK_COLUMNS, Result
from tcpeval.scenario import (
    Resolution,
    Scenario,
    ScenarioError,
    describe,
    load_scenario,
    parse_scenario,
    resolution,
)

def simulate(scenario: Scenario | dict[str, Any] | str | Path) -> Result:
    """Run a scenario (a Scenario, a dict in the TOML layout, or the path of a TOML file)."""
    scenario = _as_scenario(scenario)
    resolved = resolution(scenario)
    try:
        summary_json, flow_columns, link_columns, pcap = _core.simulate(
            json.dumps(resolved.resolved)
        )
    except ValueError as error:
        raise _in_user_terms(str(error), resolved) from None
    summary = json.loads(summary_json)
    summary["scenario"] = describe(scenario)
    summary["jain_index"] = jain_index([flow["goodput_mbps"] for flow in summary["flows"]])
    summary["transfers"] = _transfers(summary, resolved)
    _add_latency_in_rtts(summary, resolved)
    return Result(summary, _flows_frame(flow_columns), _links_frame(link_columns), pcap)


def _as_scenario(scenario: Scenario | dict[str, Any] | str | Path) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return parse_scenario(scenario)
    return load_scenario(scenario)


def _flows_frame(columns: dict[str, np.ndarray]) -> pd.DataFrame:
    return pd.DataFrame({name: columns[name] for name in FLOW_COLUMNS})


def _links_frame(columns: dict[str, Any]) -> pd.DataFrame:
    """Link columns with the `link` index replaced by the link's name."""
    frame = pd.DataFrame({name: columns[name] for name in LINK_COLUMNS})
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


def _in_user_terms(message: str, resolved: Resolution) -> ScenarioError:
    """A core error names a field of the resolved scenario (`flows[3].cc: 'reno' unknown
    parameter …`); point at the table of the user's scenario that flow 3 came from instead."""
    path, _, reason = message.partition(": ")
    if not reason:
        return ScenarioError("scenario", None, message)
    entry = re.fullmatch(r"(flows|links|sources|exchanges)\[(\d+)\](\S*)", path)
    if entry is not None:
        path = resolved.origins[entry[1]][int(entry[2])] + entry[3]
    return ScenarioError(path, None, reason)
