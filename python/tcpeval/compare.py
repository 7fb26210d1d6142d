"""The same scenario through several backends, side by side: the view the methodology asks for
(control for the implementation: model, simulator, kernel, real path).

Each row is one figure (a flow's goodput, the link's utilization, Jain's index, the
retransmission rate, the mean queue, a flow's recovery time) with every backend's value and,
for every backend after the first, its ratio to the first, flagged when it is further from 1
than the tolerance. A backend without a figure (the model has no drop count) shows none and is
never flagged.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from tcpeval import backends
from tcpeval.layout import COMPARE_FILE, COMPARE_PAGE, publish_file
from tcpeval.metrics import recovery_time
from tcpeval.result import Result
from tcpeval.scenario import Scenario, ScenarioError
from tcpeval.units import parse_duration


@dataclass(frozen=True)
class Row:
    figure: str
    unit: str
    values: dict[str, float | None]
    ratios: dict[str, float | None]
    """Each backend after the first: its value over the first's."""
    flagged: list[str]
    """The backends whose ratio is beyond 1 ± tolerance."""


@dataclass(frozen=True)
class Comparison:
    scenario: str
    backends: list[str]
    tolerance: float
    rows: list[Row]
    results: dict[str, Result]

    def as_dict(self) -> dict[str, Any]:
        body = asdict(self)
        body.pop("results")
        return body


def compare_backends(
    scenario: Scenario,
    names: list[str],
    *,
    tolerance: float = 0.2,
    measured: dict[str, Result] | None = None,
) -> Comparison:
    """Run `scenario` on each named backend (every one checked before any runs) and compare
    their answers, and those `measured` before (saved results by label, e.g. a real path's
    probe), in that order."""
    measured = measured or {}
    labels = [*names, *measured]
    if len(labels) < 2 or len(set(labels)) < len(labels):
        raise ScenarioError("--backends", ",".join(labels), "must name two or more backends once")
    chosen = [backends.get(name) for name in names]
    for backend in chosen:
        backends.check(backend, scenario)
    results = {backend.name: backends.run_on(backend, scenario) for backend in chosen} | measured
    rows = [_row(figure, unit, results, tolerance) for figure, unit in _figures(results)]
    return Comparison(scenario.name, labels, tolerance, rows, results)


def write_comparison(comparison: Comparison, out: Path, formats: Sequence[str] = ()) -> Path:
    """Each backend's result in `out/<backend>/`, `compare.json`, `compare.html`
    (self-contained) and the overlay figures in each of `formats`; returns the page's path."""
    from tcpeval.report.compare_page import render_comparison, write_overlays  # matplotlib

    for name, result in comparison.results.items():
        result.save(out / name)
    publish_file(out / COMPARE_FILE, json.dumps(comparison.as_dict(), indent=2) + "\n")
    page = out / COMPARE_PAGE
    publish_file(page, render_comparison(comparison))
    write_overlays(comparison, out, formats)
    return page


Figure = Callable[[Result], float | None]


def _figures(results: dict[str, Result]) -> list[tuple[str, str]]:
    """The figures every result can be asked for: per flow of the first, then the link's."""
    first = next(iter(results.values()))
    figures = [(f"goodput flow {flow['id']}", "Mb/s") for flow in first.summary["flows"]]
    figures += [(f"recovery flow {flow}", "s") for flow, _, _ in _induced_losses(first.summary)]
    figures += [
        ("goodput total", "Mb/s"),
        ("utilization", ""),
        ("Jain index", ""),
        ("retransmits per packet", ""),
        ("mean queue", "pkts"),
    ]
    return figures


def flow_of(figure: str) -> int | None:
    """The flow a per-flow figure is about; None for the path's figures."""
    if figure.startswith(("goodput flow ", "recovery flow ")):
        return int(figure.rpartition(" ")[2])
    return None


def value(result: Result, figure: str) -> float | None:
    """One figure of one result; None where the backend has none."""
    summary = result.summary
    flows = summary["flows"]
    bottleneck = summary["bottleneck"] or {}
    flow = flow_of(figure)
    if flow is not None and figure.startswith("recovery"):
        return _recovery_s(result, flow)
    if flow is not None:
        return flows[flow]["goodput_mbps"] if flow < len(flows) else None
    if figure == "goodput total":
        goodputs = [f["goodput_mbps"] for f in flows]
        return None if None in goodputs else sum(goodputs)
    if figure == "retransmits per packet":
        return _retransmit_rate(flows)
    return {
        "utilization": bottleneck.get("utilization"),
        "Jain index": summary["jain_index"],
        "mean queue": bottleneck.get("mean_queue_pkts"),
    }[figure]


def _row(figure: str, unit: str, results: dict[str, Result], tolerance: float) -> Row:
    values = {name: value(result, figure) for name, result in results.items()}
    names = list(values)
    reference = values[names[0]]
    ratios = {name: _ratio(values[name], reference) for name in names[1:]}
    flagged = [
        name
        for name, ratio in ratios.items()
        if ratio is not None and not (1 - tolerance <= ratio <= 1 + tolerance)
    ]
    return Row(figure, unit, values, ratios, flagged)


def _ratio(value: float | None, reference: float | None) -> float | None:
    if value is None or reference is None:
        return None
    if reference == 0:
        return 1.0 if value == 0 else math.inf
    return value / reference


def _retransmit_rate(flows: list[dict[str, Any]]) -> float | None:
    """Retransmissions per packet sent over all flows; None when a backend lacks a count."""
    if any(flow["retransmits"] is None or flow.get("packets_sent") is None for flow in flows):
        return None
    packets = sum(flow["packets_sent"] for flow in flows)
    return sum(flow["retransmits"] for flow in flows) / packets if packets else None


def _induced_losses(summary: dict[str, Any]) -> list[tuple[int, float, int]]:
    """(flow, time of its one induced loss, window limit W) of every flow of a [[flow]]
    group with one `drop_at` and a window limit: how long it takes to be back at W."""
    groups = summary["scenario"]["flow"]
    losses = []
    for flow in summary["flows"]:
        group = groups[flow["group"]] if flow["group"] < len(groups) else None
        if group and len(group["drop_at"]) == 1 and group["window_pkts"] is not None:
            drop_s = parse_duration(group["drop_at"][0]).seconds
            losses.append((flow["id"], drop_s, group["window_pkts"]))
    return losses


def _recovery_s(result: Result, flow: int) -> float | None:
    for lost_flow, drop_s, window in _induced_losses(result.summary):
        if lost_flow == flow:
            return recovery_time(result.flows, flow, drop_s, window)
    return None
