"""The tour behind `make demo`: run every example scenario, save each result with its plots,
and set the simulator beside the analytical models wherever one of them applies."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tcpeval import fidelity
from tcpeval.backends import simulate
from tcpeval.metrics import recovery_time
from tcpeval.models import acked_per_increase, mathis_goodput_bps, reno_recovery_time_s
from tcpeval.report.plots import write_plots
from tcpeval.report.tables import summary_tables
from tcpeval.result import Result
from tcpeval.scenario import FlowGroup, Scenario, load_scenario
from tcpeval.scenario.hosts import PROFILES


@dataclass(frozen=True)
class Recovery:
    """One Reno flow back at its window limit W after a single induced loss."""

    scenario: str
    window_pkts: int
    rtt: str
    simulated_s: float | None
    model_s: float


@dataclass(frozen=True)
class LossLimited:
    """One Reno flow whose goodput random loss limits."""

    scenario: str
    loss: float
    rtt: str
    b: int
    """Packets acknowledged per ACK that grows the window (models.acked_per_increase)."""
    simulated_mbps: float
    model_mbps: float


def run_examples(examples: Path, out: Path, console: Console) -> None:
    recoveries: list[Recovery] = []
    loss_limited: list[LossLimited] = []
    for path in sorted(examples.glob("*.toml")):
        scenario = load_scenario(path)
        with console.status(f"simulating {path.name} ({scenario.duration.given} simulated)"):
            result = simulate(scenario)
        directory = result.save(out / path.stem)
        write_plots(result, directory)
        console.print(*summary_tables(result.summary, title=f"{path.name} → {directory}/"))
        if (recovered := recovery(scenario, result)) is not None:
            recoveries.append(recovered)
        if (limited := mathis(scenario, result)) is not None:
            loss_limited.append(limited)
    if recoveries:
        console.print(recovery_table(recoveries))
    if loss_limited:
        console.print(mathis_table(loss_limited))
    with console.status("simulating one Reno flow on each host profile"):
        console.print(host_table())
    with console.status("simulating the cases the lab measured the kernel in"):
        console.print(kernel_table())


def recovery(scenario: Scenario, result: Result) -> Recovery | None:
    """One Reno flow growing one packet per RTT (b = 1), window limit W, one induced loss:
    back to W in (W/2)·RTT."""
    flow = _lone_reno_flow(scenario)
    if flow is None or len(flow.drop_at) != 1 or _acked_per_increase(flow) != 1:
        return None
    window = result.summary["scenario"]["flow"][0]["window_pkts"]
    if window is None:
        return None
    return Recovery(
        scenario=scenario.name,
        window_pkts=window,
        rtt=flow.rtt.given,
        simulated_s=recovery_time(result.flows, 0, flow.drop_at[0].seconds, window),
        model_s=reno_recovery_time_s(window, flow.rtt.seconds),
    )


def mathis(scenario: Scenario, result: Result) -> LossLimited | None:
    """One Reno flow under random loss p: goodput (MSS/RTT)·C/√p (Mathis et al. 1997)."""
    flow = _lone_reno_flow(scenario)
    loss = scenario.links()[0][2].loss
    if flow is None or not isinstance(loss, float) or loss == 0:
        return None
    b = _acked_per_increase(flow)
    return LossLimited(
        scenario=scenario.name,
        loss=loss,
        rtt=flow.rtt.given,
        b=b,
        simulated_mbps=result.summary["flows"][0]["goodput_mbps"],
        model_mbps=mathis_goodput_bps(flow.mss.bytes, flow.rtt.seconds, loss, b) / 1e6,
    )


def recovery_table(rows: list[Recovery]) -> Table:
    table = _table("Reno's recovery from one loss", "scenario", "W pkts", "RTT")
    table.add_column("simulated s", justify="right")
    table.add_column("(W/2)·RTT s", justify="right")
    for row in sorted(rows, key=lambda row: row.model_s):
        simulated = "not reached" if row.simulated_s is None else f"{row.simulated_s:.2f}"
        table.add_row(row.scenario, str(row.window_pkts), row.rtt, simulated, f"{row.model_s:.2f}")
    return table


def mathis_table(rows: list[LossLimited]) -> Table:
    table = _table("Reno's goodput under random loss p", "scenario", "p", "RTT")
    table.add_column("simulated Mb/s", justify="right")
    table.add_column("(MSS/RTT)·C/√p Mb/s", justify="right")
    for row in rows:
        constant = "√(3/4)" if row.b == 2 else "√(3/2)"
        model = f"{row.model_mbps:.2f} (C = {constant})"
        table.add_row(row.scenario, f"{row.loss:g}", row.rtt, f"{row.simulated_mbps:.2f}", model)
    return table


HOSTS_CASE: dict[str, Any] = {
    "name": "reno-on-each-host",
    "duration": "1200s",
    "sample_interval": "1s",
    "bottleneck": {"rate": "250Mbps", "queue": "20%bdp"},
    "flow": [{"cc": "reno", "rtt": "162ms"}],
}
"""Slow start overshoots a small buffer on a long path and some retransmissions of the
recovery that follows are lost too: the host decides what that costs (docs/hosts.md)."""


def host_table() -> Table:
    """HOSTS_CASE on each host profile: the textbook sender halves ssthresh a second time for
    a lost retransmission (RFC 5681 §4.3) and needs minutes to climb back; Linux does not."""
    table = _table(
        "One Reno flow, 250 Mb/s, 162 ms, 20% BDP, 1200 s, on each host (flow.host)", "host"
    )
    for header in ("lowest ssthresh pkts", "utilization", "retransmits"):
        table.add_column(header, justify="right")
    for host in PROFILES:
        flows = [flow | {"host": host} for flow in HOSTS_CASE["flow"]]
        result = simulate(HOSTS_CASE | {"flow": flows})
        flow = result.summary["flows"][0]
        ssthresh = result.flows["ssthresh_pkts"].min()
        utilization = result.summary["bottleneck"]["utilization"]
        table.add_row(host, f"{ssthresh:,.0f}", f"{utilization:.3f}", f"{flow['retransmits']:,}")
    return table


def kernel_table() -> Table:
    """The fidelity table's rows with a kernel figure (docs/hosts.md): the `linux` host beside
    what the kernel did in the lab, and whether it is within the fidelity goal (docs/hosts.md)."""
    table = _table(
        "The linux host against the kernel (recorded in the lab; docs/hosts.md)", "case", "figure"
    )
    for header in ("simulated", "kernel", "within 15% (Jain: 0.05)"):
        table.add_column(header, justify="right")
    results: dict[str, Result] = {}  # a case's goodput and Jain rows share one run
    for row in fidelity.lab_rows(fidelity.KERNEL_SECONDS):
        if row.kernel is None:
            continue
        figure = fidelity.simulated(row, "linux", results)
        verdict = "-" if figure is None else "yes" if row.within_goal(figure) else "NO"
        shown = "-" if figure is None else f"{figure:.3g}"
        table.add_row(row.name, row.unit, shown, f"{row.kernel:.3g}", verdict)
    return table


def _table(title: str, *headers: str) -> Table:
    table = Table(title=title, title_justify="left")
    for header in headers:
        left = header in ("scenario", "host", "case")
        table.add_column(header, justify="left" if left else "right")
    return table


def _acked_per_increase(reno: FlowGroup) -> int:
    """The models' b for a Reno group: its ACK policy and whether it counts packets."""
    return acked_per_increase(reno.delayed_ack, reno.cc.with_defaults()["abc"])


def _lone_reno_flow(scenario: Scenario) -> FlowGroup | None:
    """The scenario's only traffic when that is one Reno connection over one link, else None
    (parallel streams are several connections, each with its own share of the loss)."""
    flows = scenario.flow
    alone = len(scenario.tcp_tables()) == 1 and len(scenario.links()) == 1
    alone = alone and not scenario.sources() and len(flows) == 1
    if alone and flows[0].count == 1 and flows[0].streams == 1 and flows[0].cc.name == "reno":
        return flows[0]
    return None
