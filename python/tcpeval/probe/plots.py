"""Plots of the probe's own results: UDP trains, request-response exchanges and disk rates,
each written in every format asked for (figure_files.py)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from matplotlib.figure import Figure

from tcpeval.report.figure_files import save_figure


def write_udp_plot(
    report: dict[str, Any], directory: Path, formats: Sequence[str] = ("png",)
) -> list[Path]:
    """Received rate and loss against packet spacing (UDPmon's capacity plot)."""
    trains = report["trains"]
    spacing_us = [t["spacing_ns"] / 1e3 for t in trains]
    figure = Figure(figsize=(9, 4.5), layout="constrained")
    rate_axes = figure.add_subplot()
    rate_axes.plot(
        spacing_us, [t["received_rate_bps"] / 1e6 for t in trains], "o-", label="received"
    )
    rate_axes.plot(spacing_us, [t["sent_rate_bps"] / 1e6 for t in trains], "x--", label="sent")
    rate_axes.set(xlabel="spacing (µs)", ylabel="rate (Mb/s)", title="UDP trains")
    rate_axes.grid(alpha=0.3)
    loss_axes = rate_axes.twinx()
    loss_axes.plot(
        spacing_us,
        [100 * t["lost"] / max(t["sent"], 1) for t in trains],
        "s:",
        color="tab:red",
        label="loss",
    )
    loss_axes.set_ylabel("loss (%)")
    rate_axes.legend(loc="upper right", fontsize="small")
    return save_figure(figure, directory, "udp", formats)


def write_rr_plot(
    report: dict[str, Any], directory: Path, formats: Sequence[str] = ("png",)
) -> list[Path]:
    """Latency histogram, and the cwnd each response started with."""
    exchanges = report["exchanges"]
    figure = Figure(figsize=(10, 4.5), layout="constrained")
    hist_axes, cwnd_axes = figure.subplots(1, 2)
    hist_axes.hist([e["latency_ns"] / 1e6 for e in exchanges], bins=30)
    hist_axes.set(xlabel="latency (ms)", ylabel="exchanges", title="request-response latency")
    cwnd_axes.plot(
        [e["index"] for e in exchanges],
        [e["cwnd_at_start_pkts"] for e in exchanges],
        "o-",
    )
    cwnd_axes.set(xlabel="exchange", ylabel="cwnd at start (packets)", title="cwnd per response")
    cwnd_axes.set_ylim(bottom=0)
    for axes in (hist_axes, cwnd_axes):
        axes.grid(alpha=0.3)
    return save_figure(figure, directory, "rr", formats)


def write_disk_plot(
    report: dict[str, Any], directory: Path, formats: Sequence[str] = ("png",)
) -> list[Path]:
    """Write and read rates against block size, buffered and direct (the RAID tests' plot)."""
    figure = Figure(figsize=(8, 4.5), layout="constrained")
    axes = figure.add_subplot()
    for direct in (False, True):
        passes = sorted(
            (p for p in report["passes"] if p["direct"] == direct), key=lambda p: p["block_bytes"]
        )
        if not passes:
            continue
        mode = "direct" if direct else "buffered"
        blocks_kib = [p["block_bytes"] / 1024 for p in passes]
        for key, marker in (("write_bps", "o-"), ("read_bps", "s--")):
            rates = [p[key] / 1e6 for p in passes]
            axes.plot(blocks_kib, rates, marker, label=f"{key.split('_')[0]}, {mode}")
    axes.set_xscale("log", base=2)
    axes.set(xlabel="block (KiB)", ylabel="rate (Mb/s)", title=f"disk: {report['path']}")
    axes.set_ylim(bottom=0)
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    return save_figure(figure, directory, "disk", formats)
