"""`diagnosis.html`: the verdict, the evidence and the histories it was read from, as one
self-contained page (figures embedded); the figures also as files, in the formats asked for."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
from matplotlib.figure import Figure

from tcpeval.diagnose.evidence import Evidence
from tcpeval.diagnose.measure import Runs
from tcpeval.report.figure_files import save_figure
from tcpeval.report.html import png_data_uri, templates

if TYPE_CHECKING:
    from tcpeval.diagnose.diagnosis import Diagnosis

TEMPLATE = "diagnosis.html.j2"
# Goodput is drawn over bins this long: 10 ms samples of a real path are too noisy to read.
BIN_S = 0.25


Figures = dict[str, tuple[str, Figure]]
"""The page's figures: file stem → (caption, figure)."""


def diagnosis_figures(runs: Runs, evidence: Evidence) -> Figures:
    return {
        "throughput": (
            "throughput against time, with Mathis at the measured loss and RTT",
            throughput(runs, evidence),
        ),
        "windows": (
            "one stream's cwnd and the window its receiver advertised, as the sender saw it "
            "and as the receiver's own TCP_INFO says",
            windows(runs),
        ),
        "limited": (
            "share of each sample interval the sender was held by the receiver's window and "
            "by its send buffer (one stream)",
            limited_shares(runs),
        ),
        "cpu": (
            "CPU: each end's busiest thread and its cgroup throttling (the faster test)",
            cpu(runs),
        ),
    }


def write_figures(figures: Figures, directory: Path, formats: Sequence[str]) -> list[Path]:
    """Each figure as `directory/<stem>.<format>`, for each of `formats`."""
    return [
        path
        for stem, (_, figure) in figures.items()
        for path in save_figure(figure, directory, stem, formats)
    ]


def render(host: str, diagnosis: Diagnosis, runs: Runs, figures: Figures) -> str:
    return (
        templates()
        .get_template(TEMPLATE)
        .render(
            host=host,
            verdict=diagnosis.verdict,
            evidence=diagnosis.evidence,
            missing=diagnosis.missing,
            verification=diagnosis.verification,
            steps=runs.step_seconds,
            figures={caption: png_data_uri(figure) for caption, figure in figures.values()},
            generated=datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
        )
    )


def throughput(runs: Runs, evidence: Evidence) -> Figure:
    figure, axes = _axes("time (s)", "goodput (Mb/s)")
    for label, result in (
        ("1 stream", runs.single),
        (f"{evidence.multi.streams} streams", runs.multi),
    ):
        binned = _binned_goodput_mbps(result.flows)
        axes.step(binned.index, binned.values, where="post", label=label)
    axes.axhline(
        evidence.path.capacity_bps / 1e6, color="black", linestyle=":", label="UDP capacity"
    )
    if evidence.single.mathis_bps:
        axes.axhline(
            evidence.single.mathis_bps / 1e6,
            color="tab:red",
            linestyle="--",
            label="Mathis, 1 stream",
        )
    axes.legend(loc="upper right", fontsize="small")
    return figure


def _binned_goodput_mbps(flows: pd.DataFrame) -> pd.Series:
    """All streams together, over bins of BIN_S."""
    delivered = flows.pivot_table(index="t_s", columns="flow", values="delivered_bytes")
    total = delivered.ffill().fillna(0).sum(axis=1)
    bins = (total.index // BIN_S) * BIN_S
    at_bin_end = total.groupby(bins).last()
    return at_bin_end.diff().fillna(at_bin_end) * 8 / BIN_S / 1e6


def windows(runs: Runs) -> Figure:
    figure, axes = _axes("time (s)", "bytes (MiB)")
    flows = runs.single.flows
    axes.plot(flows["t_s"], flows["cwnd_pkts"] * flows["snd_mss_bytes"] / 2**20, label="cwnd")
    axes.plot(flows["t_s"], flows["snd_wnd_bytes"] / 2**20, label="advertised window (sender)")
    receiver = runs.single_receiver
    if len(receiver):
        # The receiver's own view: the window it offers and the buffer autotuning grew.
        axes.plot(
            receiver["t_s"], receiver["rcv_wnd_bytes"] / 2**20, ":", label="window (receiver)"
        )
    axes.legend(loc="upper right", fontsize="small")
    return figure


def limited_shares(runs: Runs) -> Figure:
    figure, axes = _axes("time (s)", "share of the interval")
    flows = runs.single.flows.sort_values("t_s")
    elapsed = flows["t_s"].diff()
    for column, label in (
        ("rwnd_limited_s", "receiver window"),
        ("sndbuf_limited_s", "send buffer"),
    ):
        axes.plot(flows["t_s"], (flows[column].diff() / elapsed).clip(0, 1), label=label)
    axes.set_ylim(0, 1.05)
    axes.legend(loc="upper right", fontsize="small")
    return figure


def cpu(runs: Runs) -> Figure:
    figure, axes = _axes("time (s)", "share of one core / of the time")
    faster = max((runs.single, runs.multi), key=_total_goodput)
    reports: dict[str, Any] = faster.summary["backend"]["details"].get("cpu") or {}
    for end, report in reports.items():
        if not report or not report["intervals"]:
            continue
        intervals = pd.DataFrame(report["intervals"])
        t_s = intervals["t_ns"] / 1e9
        axes.plot(t_s, intervals["busiest_thread"], label=f"{end}: busiest thread")
        if intervals["throttled"].notna().any():
            axes.plot(t_s, intervals["throttled"], linestyle="--", label=f"{end}: throttled")
    axes.set_ylim(0, 1.05)
    axes.legend(loc="upper right", fontsize="small")
    return figure


def _total_goodput(result: Any) -> float:
    return sum(f["goodput_mbps"] for f in result.summary["flows"])


def _axes(xlabel: str, ylabel: str) -> tuple[Figure, Any]:
    figure = Figure(figsize=(9, 3.6), layout="constrained")
    axes = figure.add_subplot()
    axes.set(xlabel=xlabel, ylabel=ylabel)
    axes.set_xlim(left=0)
    axes.grid(alpha=0.3)
    return figure, axes
