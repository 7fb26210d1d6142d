"""The summary every backend returns: one schema, checked on every result made or loaded.

The summary stays a plain dict in `Result` (it is saved as JSON and read by notebooks);
`Summary` is the schema it must satisfy. Fields that a backend cannot know are None (a model
has no retransmission count, a real path has no queue), never a guess. What is particular to a
backend (the simulator's event counters, the emulator's checks) lives in `backend.details`.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from tcpeval.scenario.conditions import parse_rate_schedule
from tcpeval.scenario.queue import QueueCounts


class _Open(BaseModel):
    """A record whose listed fields are checked; a backend may add fields of its own."""

    model_config = ConfigDict(extra="allow", frozen=True)


class BackendRun(BaseModel):
    """Which backend produced the result, and what the run cost."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="The backend: model, sim, lab, probe, …")
    wall_seconds: float = Field(ge=0, description="Wall-clock time the run took.")
    duration_s: float = Field(gt=0, description="The time the run covers: simulated or real.")
    valid: bool = Field(default=True, description="False when the backend voids its own run.")
    invalid_reason: str | None = Field(default=None, description="Why, when not valid.")
    details: dict[str, Any] = Field(
        default_factory=dict, description="What only this backend has (counters, checks)."
    )


class FlowSummary(_Open):
    id: int
    group: int
    cc: str | None = Field(description="None: a real path's peer did not say.")
    rtt_ms: float | None = Field(description="Base RTT; a real path's minimum, None if unseen.")
    goodput_mbps: float | None = Field(
        description="Over the measurement window ∩ the flow's life. None: the backend has no "
        "answer (no model), or the flow was not active in the window."
    )
    whole_run_goodput_mbps: float | None = Field(
        default=None, description="Over the flow's whole life, whatever the window."
    )
    bytes_delivered: int | None = None
    retransmits: int | None = None
    timeouts: int | None = None
    completion_s: float | None = None
    start_s: float | None = None
    end_s: float | None = None


class QueueAccounting(BaseModel):
    """How a link's queue counted (scenario/queue.py): its unit, its limit in it, and the
    limit in the other unit at `packet_bytes`, the largest packet crossing the link."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    counts: QueueCounts
    limit_pkts: int = Field(ge=0, description="Packets of packet_bytes it holds.")
    limit_bytes: int = Field(ge=0, description="Bytes it holds (a packet limit: of the largest).")
    packet_bytes: int = Field(gt=0, description="The largest packet crossing the link.")


class LinkSummary(_Open):
    name: str
    utilization: float | None = Field(description="Over the measurement window.")
    drops: int | None = Field(default=None, description="Over the whole run (a counter).")
    mean_queue_pkts: float | None = Field(default=None, description="Over the window.")
    whole_run_utilization: float | None = None
    whole_run_mean_queue_pkts: float | None = None
    queue: QueueAccounting | None = Field(
        default=None, description="How its queue counted; None in results made before it."
    )


class MeasureWindow(BaseModel):
    """The span the windowed figures cover (docs/methodology.md §3.1)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    window: str = Field(description="As the scenario's `measure` says: 'whole run', '60s..' …")
    start_s: float = Field(ge=0)
    end_s: float = Field(gt=0)


class Summary(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    backend: BackendRun
    scenario: dict[str, Any] = Field(description="The scenario as run, in the user's units.")
    flows: list[FlowSummary]
    bottleneck: LinkSummary | None = Field(description="Link 0 forward; None on a real path.")
    links: list[LinkSummary] = Field(default_factory=list)
    jain_index: float | None = Field(description="Over the flows with a goodput (window).")
    whole_run_jain_index: float | None = None
    measure: MeasureWindow | None = Field(
        default=None, description="The measurement window; None in results made before it."
    )
    tcpeval_version: str | None = Field(default=None, description="The tool that ran it.")
    scenario_sha256: str | None = Field(
        default=None, description="SHA-256 of `scenario` as canonical JSON (provenance.py)."
    )
    sources: list[dict[str, Any]] = Field(default_factory=list)
    exchanges: list[dict[str, Any]] = Field(default_factory=list)
    transfers: list[dict[str, Any]] = Field(default_factory=list)


def duration_s(summary: dict[str, Any]) -> float:
    """The time the run covers, whichever backend ran it."""
    return float(summary["backend"]["duration_s"])


def measure_span_s(summary: dict[str, Any]) -> tuple[float, float]:
    """The measurement window in seconds; the whole run for a result made before windows."""
    window = summary.get("measure")
    if window is None:
        return 0.0, duration_s(summary)
    return float(window["start_s"]), float(window["end_s"])


def path_rates_bps(summary: dict[str, Any]) -> dict[int, float]:
    """Each flow's path rate (its route's slowest link, bit/s) from the scenario as run; none
    where the scenario declares no links (a real path's probe)."""
    scenario = summary["scenario"]
    rates = _link_rates_bps(scenario, measure_span_s(summary))
    tables = [*scenario.get("flow", []), *scenario.get("web", []), *scenario.get("reqresp", [])]
    routes = {flow["id"]: _route(tables, flow["group"]) for flow in summary["flows"]}
    return {
        flow: min(rates[name] for name in route)
        for flow, route in routes.items()
        if route and all(name in rates for name in route)
    }


def _link_rates_bps(scenario: dict[str, Any], span_s: tuple[float, float]) -> dict[str, float]:
    """Each declared link's rate by name, averaged over the measurement window where it
    changes; `[bottleneck]` is the link named "bottleneck"."""
    links = {link["name"]: link for link in scenario.get("link", [])}
    if scenario.get("bottleneck"):
        links["bottleneck"] = scenario["bottleneck"]
    return {
        name: parse_rate_schedule(link["rate"]).mean_bps(*span_s) for name, link in links.items()
    }


def _route(tables: list[dict[str, Any]], group: int) -> list[str]:
    return list(tables[group].get("route") or []) if group < len(tables) else []


def last_completion_s(summary: dict[str, Any]) -> float | None:
    """When the last flow finished its transfer; None when a flow runs to the end (or the
    backend does not say): the time a plot of the run needs."""
    done = [flow["completion_s"] for flow in summary["flows"]]
    return None if not done or None in done else float(max(done))
