"""The fidelity table's rows (docs/hosts.md): each one scenario and the figure read
from its result, with the kernel's figure where the lab measured one and the published figure
where the repository keeps one.

`bench/fidelity.py` runs every row through the model, the simulator on each host profile and,
when asked, the lab; `tcpeval demo` runs the rows with a kernel figure on the `linux` host
and sets them beside it. The goal: the `linux` host within 15% of the kernel, and within 0.05
of its Jain index.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from tcpeval.backends import simulate
from tcpeval.compare import value
from tcpeval.result import Result
from tcpeval.suites.measures import convergence
from tcpeval.units import parse_size

Figure = Callable[[Result], "float | None"]

KERNEL_STACKS = ("reno", "cubic", "bbr")
"""Built into the lab's kernel."""
BPF_STACKS = ("aimd", "highspeed", "scalable", "htcp", "bic", "vegas", "fast")
"""The loss-based stacks the lab runs as tcpeval's BPF congestion controls (crates/bpf)."""
AGGRESSIVE_STACKS = ("highspeed", "scalable", "htcp", "bic")
"""The high-speed stacks of the Hamilton study's RTT-unfairness and convergence cases."""

KERNEL_SECONDS = 60
"""How long the lab's runs behind `KERNEL_FIGURES` lasted, except where a row says 300 s."""

KERNEL_FIGURES: dict[tuple[str, str], float] = {
    ("1 reno 100M 60ms", "Mb/s"): 95.9,
    ("2 reno 100M 40ms", "Mb/s"): 96.3,
    ("2 reno 100M 40ms", "Jain"): 0.968,
    ("1 cubic 100M 60ms", "Mb/s"): 96.0,
    ("2 cubic 100M 40ms", "Mb/s"): 96.3,
    ("2 cubic 100M 40ms", "Jain"): 0.993,
    ("1 bbr 100M 60ms", "Mb/s"): 94.1,
    ("2 bbr 100M 40ms", "Mb/s"): 94.4,
    ("2 bbr 100M 40ms", "Jain"): 0.998,
    ("reno+cubic 100M 40ms", "reno share"): 0.462,
    ("1 reno loss 1e-3", "Mb/s"): 8.78,
    ("1 cubic loss 1e-3", "Mb/s"): 8.60,
    ("1 bbr loss 1e-3", "Mb/s"): 92.2,
    ("1 bbr 100M 40ms 10%BDP", "Mb/s"): 92.5,
    ("reno 82/162ms 250M 300s", "ratio"): 2.69,
    ("1 reno loss 1e-3 300s", "Mb/s"): 7.85,
    ("1 cubic loss 1e-3 300s", "Mb/s"): 7.72,
    ("2 reno ECN red 100M 40ms", "Mb/s"): 94.0,
    ("2 reno ECN red 100M 40ms", "marks/pkt"): 0.00166,
    ("2 reno ECN red 100M 40ms", "AQM drops"): 77.5,
    ("2 cubic ECN red 100M 40ms", "Mb/s"): 95.9,
    ("2 cubic ECN red 100M 40ms", "marks/pkt"): 0.000131,
    ("2 cubic ECN red 100M 40ms", "AQM drops"): 0.0,
    ("2 reno ECN codel 100M 40ms", "Mb/s"): 90.3,
    ("2 reno ECN codel 100M 40ms", "marks/pkt"): 6.7e-05,
    ("2 reno ECN codel 100M 40ms", "AQM drops"): 0.5,
    ("2 cubic ECN codel 100M 40ms", "Mb/s"): 95.6,
    ("2 cubic ECN codel 100M 40ms", "marks/pkt"): 6.95e-05,
    ("2 cubic ECN codel 100M 40ms", "AQM drops"): 0.0,
    ("1 aimd 100M 60ms", "Mb/s"): 95.9,
    ("2 aimd 100M 40ms", "Mb/s"): 96.3,
    ("2 aimd 100M 40ms", "Jain"): 0.955,
    ("1 highspeed 100M 60ms", "Mb/s"): 96.0,
    ("2 highspeed 100M 40ms", "Mb/s"): 96.3,
    ("2 highspeed 100M 40ms", "Jain"): 0.986,
    ("1 scalable 100M 60ms", "Mb/s"): 95.9,
    ("2 scalable 100M 40ms", "Mb/s"): 96.3,
    ("2 scalable 100M 40ms", "Jain"): 0.993,
    ("1 htcp 100M 60ms", "Mb/s"): 96.0,
    ("2 htcp 100M 40ms", "Mb/s"): 96.3,
    ("2 htcp 100M 40ms", "Jain"): 1.0,
    ("1 bic 100M 60ms", "Mb/s"): 96.0,
    ("2 bic 100M 40ms", "Mb/s"): 96.3,
    ("2 bic 100M 40ms", "Jain"): 0.992,
    ("1 vegas 100M 60ms", "Mb/s"): 95.7,
    ("2 vegas 100M 40ms", "Mb/s"): 96.1,
    ("2 vegas 100M 40ms", "Jain"): 0.974,
    ("1 fast 100M 60ms", "Mb/s"): 95.5,
    ("2 fast 100M 40ms", "Mb/s"): 96.1,
    ("2 fast 100M 40ms", "Jain"): 1.0,
    ("1 aimd loss 1e-3", "Mb/s"): 9.11,
    ("1 highspeed loss 1e-3", "Mb/s"): 7.3,
    ("1 scalable loss 1e-3", "Mb/s"): 20.0,
    ("1 htcp loss 1e-3", "Mb/s"): 11.1,
    ("1 bic loss 1e-3", "Mb/s"): 12.4,
    ("1 vegas loss 1e-3", "Mb/s"): 8.96,
    ("1 fast loss 1e-3", "Mb/s"): 55.4,
    ("2 dctcp ECN red 100M 40ms", "Mb/s"): 96.3,
    ("2 dctcp ECN red 100M 40ms", "marks/pkt"): 0.00403,
    ("2 dctcp ECN red 100M 40ms", "AQM drops"): 1.0,
    ("2 prague ECN red 100M 40ms", "Mb/s"): 95.2,
    ("2 prague ECN red 100M 40ms", "marks/pkt"): 0.00104,
    ("2 prague ECN red 100M 40ms", "AQM drops"): 0.0,
    ("2 dctcp ECN codel 100M 40ms", "Mb/s"): 96.3,
    ("2 dctcp ECN codel 100M 40ms", "marks/pkt"): 0.00465,
    ("2 dctcp ECN codel 100M 40ms", "AQM drops"): 0.0,
    ("2 prague ECN codel 100M 40ms", "Mb/s"): 91.2,
    ("2 prague ECN codel 100M 40ms", "marks/pkt"): 8.4e-05,
    ("2 prague ECN codel 100M 40ms", "AQM drops"): 0.0,
}
"""The kernel's figures (Linux 6.18, HZ 250: real reno, cubic and bbr in network namespaces
behind the lab's emulator), each the mean of the valid runs of seeds 1 and 2, measured on the
project's 2-vCPU VM on 2026-11-28 with `bench/fidelity.py --lab --repeats 2` and, for the
300 s rows, `tcpeval run --backend lab`; the classic-ECN rows on 2026-12-06 with
`bench/fidelity.py --lab --rows ECN --repeats 2`; the BPF stacks' rows (crates/bpf: the
project's own implementations in the real kernel) on 2026-12-07 with `bench/fidelity.py --lab
--repeats 1`, one valid run each: the loss-based stacks' (`--rows "aimd 100M,aimd loss,..."`)
again once they owned their window through cong_control (crates/bpf/bpf/loss_stack.h).
docs/hosts.md gives each row's history."""


KERNEL_MISSES: dict[tuple[str, str], str] = {
    ("2 reno ECN red 100M 40ms", "AQM drops"): "both worlds drop Reno's retransmissions "
    "after its slow-start overshoot (Linux sends them Not-ECT and RED must drop them): 63.5 "
    "simulated, 77.5 in the kernel; 'no AQM drops' holds for CUBIC, whose HyStart ends slow "
    "start before the queue fills",
    ("2 reno ECN codel 100M 40ms", "AQM drops"): "the same slow-start retransmissions, fewer "
    "of them under CoDel: 2 simulated, 0.5 in the kernel",
    ("2 cubic ECN red 100M 40ms", "marks/pkt"): "the kernel's CUBIC drew 5.6 times fewer "
    "marks per packet (0.00013 against 0.00074; about 130 marks in its two runs) at the same "
    "goodput: not yet explained",
    ("2 reno ECN codel 100M 40ms", "marks/pkt"): "31% more marks per packet simulated than in "
    "the kernel (8.7e-5 against 6.7e-5; a few dozen marks a run)",
    ("1 bic loss 1e-3", "Mb/s"): "the simulator's BIC keeps two rules of Linux's tcp_bic.c "
    "the BPF BIC, written from the paper, lacks (increases scaled by the packets per ACK, "
    "doubled by delayed ACKs; 5% a round before the first loss): 18.0 simulated, 12.4 in the "
    "kernel; which BIC both should run is open (docs/lab.md)",
    ("2 dctcp ECN red 100M 40ms", "marks/pkt"): "41% more marks per packet simulated than "
    "with the BPF DCTCP in the kernel (0.00568 against 0.00403), at the same goodput: not "
    "explained yet (the simulator's marked fraction was already 21% off DCTCP's model)",
    ("2 dctcp ECN codel 100M 40ms", "marks/pkt"): "the same through CoDel: 0.00655 simulated "
    "against 0.00465",
    ("2 prague ECN red 100M 40ms", "marks/pkt"): "38% more marks per packet simulated (AccECN "
    "feedback) than with the BPF Prague on DCTCP's echo in the kernel (0.00144 against "
    "0.00104); through CoDel they agree",
    ("2 dctcp ECN red 100M 40ms", "AQM drops"): "the kernel's run had one AQM drop (a Not-ECT "
    "packet RED drops: Linux sends retransmissions Not-ECT), the simulator's none",
}
"""Rows whose simulated figure misses the goal against the kernel, with what is known of why;
their test expects the miss, and fails once it is mended so that the entry goes."""


@dataclass(frozen=True)
class Row:
    name: str
    scenario: dict[str, Any]
    figure: Figure
    unit: str
    published: float | None = None
    kernel: float | None = None
    lab: bool = True
    """Within what the lab delivers on this machine (docs/lab.md)."""
    starts: int = 1
    """Simulated runs the figure is the mean of, the last flow starting 0, 1/n, 2/n … of a
    second after the others: for a figure decided by who wins the start, which one run of a
    deterministic simulator settles one way (the lab's runs start as they happen to)."""

    def variants(self, scenario: dict[str, Any]) -> list[dict[str, Any]]:
        """`scenario` (this row's, perhaps on another host) once per start."""
        if self.starts == 1:
            return [scenario]
        *first, last = scenario["flow"]
        return [
            scenario | {"flow": [*first, last | {"start": f"{1000 * k // self.starts}ms"}]}
            for k in range(self.starts)
        ]

    def within_goal(self, figure: float) -> bool | None:
        """The fidelity goal against the kernel: 0.05 of its Jain index, 15% of its other
        figures. None where the kernel has no figure."""
        if self.kernel is None:
            return None
        if self.unit == "Jain":
            return abs(figure - self.kernel) <= 0.05
        if self.unit == "AQM drops":
            return figure == self.kernel == 0
        if self.unit in ("marks/pkt", "convergence s"):
            return abs(figure / self.kernel - 1) <= 0.25
        return abs(figure / self.kernel - 1) <= 0.15


def simulated(row: Row, host: str, runs: dict[str, Result] | None = None) -> float | None:
    """The row's figure on the simulator with `host`, the mean over its starts. `runs` keeps
    the results by scenario, for rows that read two figures of one case."""
    runs = {} if runs is None else runs
    figures = []
    for scenario in row.variants(on_host(row.scenario, host)):
        key = json.dumps(scenario, sort_keys=True)
        if key not in runs:
            runs[key] = simulate(scenario)
        figures.append(row.figure(runs[key]))
    return None if None in figures else statistics.fmean(f for f in figures if f is not None)


def goodput(result: Result) -> float | None:
    return value(result, "goodput total")


def jain(result: Result) -> float | None:
    return value(result, "Jain index")


def first_share(result: Result) -> float | None:
    flows = [f["goodput_mbps"] for f in result.summary["flows"]]
    return None if None in flows or not sum(flows) else flows[0] / sum(flows)


def first_over_second(result: Result) -> float | None:
    flows = [f["goodput_mbps"] for f in result.summary["flows"]]
    return None if None in flows or not flows[1] else flows[0] / flows[1]


def marks_per_packet(result: Result) -> float | None:
    """The bottleneck's CE marks per data packet delivered."""
    marks = result.summary["bottleneck"].get("aqm_marks")
    delivered = [f.get("bytes_delivered") for f in result.summary["flows"]]
    if marks is None or None in delivered or not sum(delivered):
        return None
    mss = result.summary["scenario"]["flow"][0]["mss"]
    return marks / (sum(delivered) / parse_size(mss).bytes)


def aqm_drops(result: Result) -> float | None:
    return result.summary["bottleneck"].get("aqm_drops")


def convergence_s(result: Result) -> float | None:
    """The late flow at 80% of its fair share, held (the suites' measure)."""
    return convergence(result)["convergence_s"]


def recovery(result: Result) -> float | None:
    return value(result, "recovery flow 0")


def dumbbell(name: str, seconds: float, link: dict[str, Any], flows: list[dict]) -> dict:
    return {"name": name, "duration": f"{seconds}s", "bottleneck": link, "flow": flows}


def on_host(scenario: dict[str, Any], host: str) -> dict[str, Any]:
    return scenario | {"flow": [flow | {"host": host} for flow in scenario["flow"]]}


def rows(seconds: float, long_seconds: float) -> list[Row]:
    """Every row: the lab's fidelity cases, Reno's recovery, Mathis, the seeds'
    MTU and RTT cases, ten flows at 1 Gb/s."""
    made = lab_rows(seconds) + recovery_rows() + mathis_rows()
    return made + seed_rows(long_seconds) + many_rows(seconds)


def lab_rows(seconds: float) -> list[Row]:
    """The cases the lab runs, with the kernel's figure where it measured this duration."""
    short = short_lab_rows(seconds)
    if seconds == KERNEL_SECONDS:
        short = with_kernel(short)
    return short + with_kernel(long_lab_rows())


def with_kernel(made: list[Row]) -> list[Row]:
    """The rows with the kernel's recorded figure, where it has one."""
    return [replace(row, kernel=KERNEL_FIGURES.get((row.name, row.unit))) for row in made]


def short_lab_rows(seconds: float) -> list[Row]:
    """The lab's five fidelity cases for each stack, and Reno against CUBIC."""
    link = {"rate": "100Mbps", "queue": "100%bdp"}
    table = []
    for stack in KERNEL_STACKS + BPF_STACKS:
        one = dumbbell(f"1 {stack}", seconds, link, [{"cc": stack, "rtt": "60ms"}])
        two = dumbbell(f"2 {stack}", seconds, link, [{"cc": stack, "rtt": "40ms", "count": 2}])
        table += [
            Row(f"1 {stack} 100M 60ms", one, goodput, "Mb/s"),
            Row(f"2 {stack} 100M 40ms", two, goodput, "Mb/s"),
            Row(f"2 {stack} 100M 40ms", two, jain, "Jain"),
        ]
    mixed = [{"cc": "reno", "rtt": "40ms"}, {"cc": "cubic", "rtt": "40ms"}]
    reno_cubic = dumbbell("mixed", seconds, link, mixed)
    table.append(Row("reno+cubic 100M 40ms", reno_cubic, first_share, "reno share"))
    lossy = link | {"loss": 1e-3}
    for stack in KERNEL_STACKS + BPF_STACKS:
        flows = [{"cc": stack, "rtt": "60ms"}]
        table.append(
            Row(f"1 {stack} loss 1e-3", dumbbell("lossy", seconds, lossy, flows), goodput, "Mb/s")
        )
    shallow = link | {"queue": "10%bdp"}
    bbr = dumbbell("bbr", seconds, shallow, [{"cc": "bbr", "rtt": "40ms"}])
    table.append(Row("1 bbr 100M 40ms 10%BDP", bbr, goodput, "Mb/s"))
    return table + ecn_rows(seconds)


def ecn_rows(seconds: float) -> list[Row]:
    """Classic ECN (RFC 3168): two flows marked by RED or CoDel, a buffer of 3 BDP so that
    slow start does not overflow it (Linux retransmits Not-ECT, which a marking AQM drops).
    DCTCP with its per-packet echo (RFC 8257), and Prague: AccECN in the simulator, DCTCP's
    echo in the kernel (which lacks AccECN; docs/lab.md)."""
    table = []
    ecn = {"reno": "classic", "cubic": "classic", "dctcp": "classic", "prague": "l4s"}
    for aqm in ("red", "codel"):
        link = {"rate": "100Mbps", "queue": "300%bdp", "aqm": {"name": aqm, "ecn": True}}
        for stack, mode in ecn.items():
            flows = [{"cc": stack, "rtt": "40ms", "count": 2, "ecn": mode}]
            case = dumbbell(f"ecn {aqm} {stack}", seconds, link, flows)
            name = f"2 {stack} ECN {aqm} 100M 40ms"
            table += [
                Row(name, case, goodput, "Mb/s"),
                Row(name, case, marks_per_packet, "marks/pkt"),
                Row(name, case, aqm_drops, "AQM drops"),
            ]
    return table


def long_lab_rows() -> list[Row]:
    """Cases that need minutes to settle. Two flows at 82 and 162 ms sharing 250 Mb/s, a
    queue of 20% of the long flow's BDP (the Hamilton RTT-unfairness case): the short flow's
    share over the long one's; over 60 s it says mostly who won the start. One Reno and one
    CUBIC flow under 1e-3 random loss: over 60 s CUBIC's window has not settled. The
    Hamilton convergence case at its largest BDP (250 Mb/s, 324 ms, 20% BDP), scaled from
    600 s to 180 s with the second flow at 30 s rather than 60 s, for the lab's runs."""
    link = {"rate": "250Mbps", "queue": "20%bdp"}
    table = []
    for stack in ("reno", *AGGRESSIVE_STACKS):
        flows = [{"cc": stack, "rtt": "82ms"}, {"cc": stack, "rtt": "162ms"}]
        rtt = dumbbell("rtt-unfair", 300, link, flows)
        table.append(Row(f"{stack} 82/162ms 250M 300s", rtt, first_over_second, "ratio", starts=8))
    lossy = {"rate": "100Mbps", "queue": "100%bdp", "loss": 1e-3}
    for stack in ("reno", "cubic"):
        flows = [{"cc": stack, "rtt": "60ms"}]
        table.append(
            Row(f"1 {stack} loss 1e-3 300s", dumbbell("lossy", 300, lossy, flows), goodput, "Mb/s")
        )
    for stack in ("reno", "htcp"):
        flows = [{"cc": stack, "rtt": "324ms"}, {"cc": stack, "rtt": "324ms", "start": "30s"}]
        case = dumbbell("convergence", 180, link, flows) | {"sample_interval": "100ms"}
        table.append(
            Row(f"{stack} convergence 250M 324ms 180s", case, convergence_s, "convergence s")
        )
    return table


def recovery_rows() -> list[Row]:
    """Reno back at W after one loss at 1 Gb/s: the demo's examples, (W/2)·RTT beside."""
    made = []
    for rtt_ms, seconds in ((6, 10), (25, 40), (200, 2400)):
        window = {
            "cc": "reno",
            "rtt": f"{rtt_ms}ms",
            "window": "100%bdp",
            "delayed_ack": False,
            "drop_at": ["2s" if rtt_ms < 200 else "20s"],
        }
        link = {"rate": "1Gbps", "queue": "200%bdp"}
        scenario = dumbbell(f"recovery {rtt_ms}", seconds, link, [window])
        scenario["sample_interval"] = "100ms"
        made.append(Row(f"reno recovery 1G {rtt_ms}ms", scenario, recovery, "s", lab=False))
    return made


def mathis_rows() -> list[Row]:
    """One Reno flow under random loss at 1 Gb/s, 60 ms: Mathis beside it."""
    link = {"rate": "1Gbps", "queue": "100%bdp"}
    reno = [{"cc": "reno", "rtt": "60ms"}]
    return [
        Row(
            f"reno mathis p={p:g}",
            dumbbell("mathis", 300, link | {"loss": p}, reno),
            goodput,
            "Mb/s",
            lab=False,
        )
        for p in (1e-3, 1e-4)
    ]


def seed_rows(seconds: float) -> list[Row]:
    """The seeds' DataTAG cases (2003): two Reno-era flows sharing 1 Gb/s for 7000 s. MTU:
    9000 vs 3000 bytes at 117 ms gave 464 and 243 Mb/s; RTT: 117 vs 181 ms, MTU 9000, gave
    514 and 202 Mb/s. The router's buffer is not stated; 20% of the BDP is assumed here."""
    link = {"rate": "1Gbps", "queue": "20%bdp"}
    mtu = [
        {"cc": "reno", "rtt": "117ms", "mss": "8948B"},
        {"cc": "reno", "rtt": "117ms", "mss": "2948B"},
    ]
    rtt = [
        {"cc": "reno", "rtt": "117ms", "mss": "8948B"},
        {"cc": "reno", "rtt": "181ms", "mss": "8948B"},
    ]
    return [
        Row(
            "mtu 9000/3000 1G 117ms",
            dumbbell("mtu", seconds, link, mtu),
            first_over_second,
            "ratio",
            published=464 / 243,
            lab=False,
        ),
        Row(
            "rtt 117/181ms 1G",
            dumbbell("rtt", seconds, link, rtt),
            first_over_second,
            "ratio",
            published=514 / 202,
            lab=False,
        ),
    ]


def many_rows(seconds: float) -> list[Row]:
    link = {"rate": "1Gbps", "queue": "100%bdp"}
    made = []
    for stack in ("reno", "cubic"):
        scenario = dumbbell("ten", seconds, link, [{"cc": stack, "rtt": "100ms", "count": 10}])
        made += [
            Row(f"10 {stack} 1G 100ms", scenario, goodput, "Mb/s", lab=False),
            Row(f"10 {stack} 1G 100ms", scenario, jain, "Jain", lab=False),
        ]
    return made
