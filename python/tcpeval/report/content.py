"""What the report shows for each sweep: the summary table per stack, and which figures are drawn
from which numbers, or a note saying why one is left out.

Figures stay matplotlib Figures here; html.py turns them into embedded PNGs. Time series are
also interactive charts (charts.py), drawn in the browser. Runs that mix algorithms are drawn
with a colour per algorithm, never per mix (`by_algorithm`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from tcpeval import metrics, models
from tcpeval.metrics import goodput_mbps, label
from tcpeval.report import figures
from tcpeval.report.charts import Chart, Line, line_styles
from tcpeval.report.dataset import ReportData, Section, mixes_algorithms
from tcpeval.report.plots import LEGEND_MAX_LINES
from tcpeval.report.verdicts import Verdict, format_where, point_values, run_values
from tcpeval.scenario.traffic import DEFAULT_MSS
from tcpeval.store import numeric_companion
from tcpeval.summary import last_completion_s, path_rates_bps
from tcpeval.units import parse_duration

TABLE_METRICS = (
    "goodput_mbps",
    "jain_index",
    "algorithms_jain",
    "bottleneck_utilization",
    "retransmission_rate",
    "bottleneck_mean_queue_pkts",
    "throughput_cov",
    "rtt_cov",
)
FIGURE_METRICS = ("algorithms_jain", "jain_index", "bottleneck_utilization")
"""Drawn when no rule names a metric of the sweep (those it has)."""
FIGURE_METRICS_MAX = 3
LOSS_AXIS = "bottleneck.loss"
RATE_AXIS = "bottleneck.rate"
RESPONSE_POINTS_MIN = 3
RESPONSE_SPAN_MIN = 10.0  # the loss rates must cover at least a decade
DEFAULT_MIN_RTO_S = 0.2


@dataclass(frozen=True)
class Panel:
    """A figure with its caption, or the note that says why it is not there."""

    title: str
    caption: str = ""
    figure: Figure | None = None
    note: str = ""
    charts: tuple[Chart, ...] = ()
    """The same numbers as interactive charts, for figures of time series."""


@dataclass(frozen=True)
class Cell:
    """A table cell: the mean over grid points, and their range."""

    mean: float
    low: float
    high: float


@dataclass(frozen=True)
class StackRow:
    stack: str
    runs: int
    cells: dict[str, Cell | None]
    failed: int
    judged: int


@dataclass(frozen=True)
class AlgorithmRow:
    """One algorithm of a stack whose runs mix several: its flows per run, its goodput per flow
    and its share of the run's goodput, over the grid points."""

    stack: str
    algorithm: str
    flows: int
    goodput: Cell | None
    share: Cell | None


@dataclass(frozen=True)
class SectionView:
    section: Section
    metrics: list[str]
    rows: list[StackRow]
    panels: list[Panel] = field(default_factory=list)
    algorithms: list[AlgorithmRow] = field(default_factory=list)
    """Empty unless some run mixes algorithms."""


def section_view(section: Section, data: ReportData, verdicts: Sequence[Verdict]) -> SectionView:
    """The table and figures of one sweep."""
    rule_metrics = [
        r.metric for r in data.rules if r.test in (None, section.test) and r.metric in section.frame
    ]
    drawn = list(dict.fromkeys(rule_metrics or FIGURE_METRICS))
    drawn = _distinct([m for m in drawn if _has_values(section.frame, m)], section.frame)
    drawn = drawn[:FIGURE_METRICS_MAX]
    tabled = [m for m in dict.fromkeys([*rule_metrics, *TABLE_METRICS]) if m in section.frame]
    tabled = _one_per_label(tabled)
    mine = [v for v in verdicts if v.rule.test in (None, section.test)]
    mixed = mixes_algorithms(section.frame)
    panels = [
        *(heatmap_panel(section, m) for m in drawn),
        *([share_panel(section)] if mixed else []),
        *(box_panel(section, m) for m in drawn),
        time_series_panel(section),
        response_panel(section),
        *rtt_unfairness_panels(section),
    ]
    rows = stack_rows(section, tabled, mine)
    algorithms = algorithm_rows(section) if mixed else []
    return SectionView(section, tabled, rows, panels, algorithms)


def stack_rows(
    section: Section, metrics: Sequence[str], verdicts: Sequence[Verdict]
) -> list[StackRow]:
    """One row per stack: runs, each metric over the grid points, and its verdicts."""
    rows = []
    for stack in section.stacks:
        frame = section.frame[section.frame["stack"] == stack]
        cells = _cells(frame, metrics, section.axes)
        judged = [v for v in verdicts if v.stack == stack and v.passed is not None]
        failed = sum(1 for v in judged if not v.passed)
        rows.append(StackRow(stack, frame["run_id"].nunique(), cells, failed, len(judged)))
    return rows


def algorithm_rows(section: Section) -> list[AlgorithmRow]:
    """Per stack and algorithm of its mixed runs: flows per run, goodput per flow and share."""
    rows = []
    mixed = section.frame[section.frame["algorithm_share"].notna()]
    for (stack, cc), frame in mixed.groupby(["stack", "cc"], sort=False):
        flows = int(frame.groupby("run_id").size().max())
        cells = _cells(frame, ["goodput_mbps", "algorithm_share"], section.axes)
        goodput, share = cells["goodput_mbps"], cells["algorithm_share"]
        rows.append(AlgorithmRow(str(stack), str(cc), flows, goodput, share))
    return rows


def share_panel(section: Section) -> Panel:
    """Each algorithm's share of its runs' goodput over the grid, one panel per algorithm (and
    stack, when several stacks mix algorithms)."""
    mixed = section.frame[section.frame["algorithm_share"].notna()]
    return heatmap_panel(replace(section, frame=by_algorithm(mixed)), "algorithm_share")


def by_algorithm(frame: pd.DataFrame) -> pd.DataFrame:
    """The flows with `stack` naming their own algorithm, `cubic`, or `cubic in STACK` when
    several stacks are there: what a figure's colours stand for when runs mix algorithms."""
    several = frame["stack"].nunique() > 1
    algorithms = frame["cc"].astype(str)
    return frame.assign(stack=algorithms + (" in " + frame["stack"] if several else ""))


def heatmap_panel(section: Section, metric: str) -> Panel:
    """The metric over the two axes with the most values, one panel per stack."""
    title = f"{label(metric)} over the grid"
    wide = [a for a in section.axes if section.frame[a].nunique() > 1]
    if len(wide) < 2:
        return Panel(
            title, note=f"No heatmap: it needs two axes with several values ({_listed(wide)})."
        )
    x, y = sorted(wide, key=lambda a: -section.frame[a].nunique())[:2]
    points = point_values(section.frame, metric, axes=[x, y], stack_column="stack")
    others = [a for a in section.axes if a not in (x, y)]
    caption = f"Mean over repeats of {label(metric)} per grid point"
    caption += f", averaged over {_listed(others)}." if others else "."
    order = {a: axis_order(section.frame, a) for a in (x, y)}
    return Panel(title, caption, figures.heatmap(points, metric, x, y, order))


def box_panel(section: Section, metric: str) -> Panel:
    """The metric's spread over repeats at each grid point, per stack."""
    axes = section.axes or ["point"]
    frame = section.frame if section.axes else section.frame.assign(point="every run")
    runs = run_values(frame, metric, axes=axes, stack_column="stack")
    runs = _sorted_points(runs, section.frame, section.axes)
    repeats = int(runs.groupby(["stack", *axes]).size().max())
    caption = f"{label(metric)} of each run (dots); boxes span the repeats"
    caption += f" ({repeats} per point)." if repeats > 1 else " (one repeat per point: no spread)."
    if runs.drop_duplicates(axes).shape[0] > figures.BOX_POINTS_MAX:
        caption += f" The first {figures.BOX_POINTS_MAX} grid points are shown."
    return Panel(f"{label(metric)} over repeats", caption, figures.box_plot(runs, metric, axes))


def time_series_panel(section: Section) -> Panel:
    """cwnd and goodput of each stack's first repeat at the grid point with the largest BDP,
    as a figure and as interactive charts."""
    title = "time series of chosen runs"
    chosen = chosen_runs(section)
    series = []
    for stack, run in chosen:
        path = section.run_dir(run["run_id"]) / "flows.parquet"
        if not path.is_file():
            return Panel(title, note=f"No time series: {path} is missing.")
        where = format_where(run, section.axes)
        heading = f"{stack} at {where}, repeat {run['repeat']}"
        summary = json.loads((path.parent / "summary.json").read_text())
        labels = _flow_labels(section, run["run_id"])
        flows = pd.read_parquet(path)
        rates, until_s = path_rates_bps(summary), last_completion_s(summary)
        series.append(figures.RunSeries(heading, flows, labels, rates, until_s))
    caption = (
        "Each stack's first repeat at the grid point with the largest bandwidth-delay product."
    )
    charts = tuple(chart for run in series for chart in run_charts(run))
    return Panel(title, caption, figures.time_series(series), charts=charts)


def run_charts(run: figures.RunSeries) -> list[Chart]:
    """A run's cwnd and goodput (at most the path's rate) as interactive charts: a colour per
    flow, or per algorithm with a dash pattern per flow when the run mixes algorithms; of many
    flows, the first `LEGEND_MAX_LINES` (a line each is a legend entry and a column of data)."""
    goodput = goodput_mbps(run.flows, run.path_rates_bps)["goodput_mbps"]
    flows = run.flows.assign(goodput_mbps=goodput)  # aligned on the flows' index
    shown = sorted(pd.unique(flows["flow"]))[:LEGEND_MAX_LINES]
    title = run.title
    if len(shown) < flows["flow"].nunique():
        title += f" (the first {len(shown)} of {flows['flow'].nunique()} flows)"
    flows = flows[flows["flow"].isin(shown)]
    styles = line_styles(flows)
    charts = []
    for column, unit in (("cwnd_pkts", "cwnd (packets)"), ("goodput_mbps", "goodput (Mb/s)")):
        lines = [
            Line(
                label=run.labels.get(flow, f"flow {flow}"),
                colour=styles[flow][0],
                t_s=rows["t_s"].to_numpy(float),
                values=rows[column].to_numpy(float, na_value=np.nan),
                dash=styles[flow][1],
            )
            for flow, rows in flows.groupby("flow", sort=True)
        ]
        charts.append(Chart(f"{title}: {unit}", "time (s)", unit, lines))
    return charts


def chosen_runs(section: Section) -> list[tuple[str, pd.Series]]:
    """Per stack, the run whose rate × longest RTT is largest, the lowest repeat among equals."""
    frame = section.frame
    rate = numeric_companion(frame, RATE_AXIS)
    runs = frame.assign(bdp=frame["rtt_ms"] * (1.0 if rate is None else rate))
    runs = runs.groupby("run_id", sort=False).agg(
        {"bdp": "max", "repeat": "first", "stack": "first", **dict.fromkeys(section.axes, "first")}
    )
    runs = runs.reset_index().sort_values(["bdp", "repeat"], ascending=[False, True])
    return [(str(stack), rows.iloc[0]) for stack, rows in runs.groupby("stack", sort=False)]


def response_panel(section: Section) -> Panel:
    """Average window against the imposed loss rate (or the congestion-event rate), log-log,
    with the models, when the rates span at least a decade."""
    title = "response function"
    if LOSS_AXIS in section.axes and axis_numbers(section.frame, LOSS_AXIS).notna().all():
        p, x_label = axis_numbers(section.frame, LOSS_AXIS), "imposed loss rate p (bottleneck.loss)"
    elif "congestion_event_rate" in section.frame:
        p, x_label = section.frame["congestion_event_rate"], label("congestion_event_rate")
    else:
        return Panel(
            title, note="No response function: no loss axis and no congestion-event counts."
        )
    frame = section.frame.assign(p=p)
    if mixes_algorithms(frame):  # a point per algorithm, not per mix of them
        frame = by_algorithm(frame)
    frame = frame[(frame["p"] > 0) & (frame["goodput_mbps"] > 0)]
    span = frame["p"].max() / frame["p"].min() if len(frame) else 0.0
    if frame["p"].nunique() < RESPONSE_POINTS_MIN or span < RESPONSE_SPAN_MIN:
        return Panel(
            title,
            note=f"No response function: the loss rates ({x_label}) span less than a decade "
            f"or have fewer than {RESPONSE_POINTS_MIN} values.",
        )
    path = path_model(section, frame)
    if "window_pkts" in frame:  # the response measure, over the runs' measurement window
        points = frame[["stack", "p", "window_pkts"]]
        measured = f"average window over the measurement window ({section.windows_text})"
    else:
        windows = frame["goodput_mbps"] * 1e6 * frame["rtt_ms"] / 1e3 / (8 * path.mss_bytes)
        points = frame.assign(window_pkts=windows)[["stack", "p", "window_pkts"]]
        measured = "average window"
    caption = (
        f"Each flow's {measured} (goodput × base RTT / MSS) against {x_label}; models for "
        f"RTT {path.rtt_s * 1e3:.0f} ms, MSS {path.mss_bytes:.0f} B."
    )
    return Panel(title, caption, figures.response_function(points, x_label, path))


def rtt_unfairness_panels(section: Section) -> list[Panel]:
    """For the RTT-unfairness measure: each run's throughput ratio against its RTT ratio, and
    each stack's exponent k (metrics.rtt_unfairness_exponent); none for other sweeps."""
    if not {"goodput_ratio", "rtt_ratio"} <= set(section.frame.columns):
        return []
    title = "RTT unfairness"
    runs = section.frame.drop_duplicates("run_id")
    usable = runs[np.isfinite(runs["goodput_ratio"]) & (runs["goodput_ratio"] > 0)]
    exponents = {}
    for stack, rows in usable.groupby("stack", sort=False):
        if (rows["rtt_ratio"] != 1).any():
            exponents[str(stack)] = metrics.rtt_unfairness_exponent(
                1 / rows["rtt_ratio"], rows["goodput_ratio"]
            )
    if not exponents:
        return [Panel(title, note="No RTT-unfairness exponent: no run had two different RTTs.")]
    points = usable[usable["stack"].isin(list(exponents))]
    starved = len(runs) - len(usable)
    caption = (
        "Each run's throughput ratio of its two flows against their RTT ratio, and each "
        "stack's exponent k fitted by least squares; standard TCP's reference is k ≈ 2 with "
        "synchronised losses, 1 without (docs/methodology.md §3.8). A starved flow has no ratio "
        f"and is left out ({starved} run{'' if starved == 1 else 's'})."
    )
    return [Panel(title, caption, figures.rtt_unfairness(points, exponents))]


def path_model(section: Section, frame: pd.DataFrame) -> figures.PathModel:
    """The models' parameters: the flows' median RTT, and MSS, minimum RTO and ACK policy of
    the first flow of a run's scenario (b = 2 only for delayed ACKs counted per ACK, which
    takes an algorithm with `abc = false`). The RTO is taken as RTT + minimum RTO."""
    rtt_s = float(np.median(frame["rtt_ms"])) / 1e3
    summary = section.run_dir(frame["run_id"].iloc[0]) / "summary.json"
    flow = json.loads(summary.read_text())["scenario"]["flow"][0] if summary.is_file() else {}
    min_rto = flow.get("min_rto")
    min_rto_s = DEFAULT_MIN_RTO_S if min_rto is None else parse_duration(min_rto).seconds
    return figures.PathModel(
        rtt_s=rtt_s,
        mss_bytes=float(flow.get("mss", DEFAULT_MSS.bytes)),
        rto_s=rtt_s + min_rto_s,
        b=models.acked_per_increase(
            bool(flow.get("delayed_ack", True)), bool(flow.get("cc", {}).get("abc", True))
        ),
    )


def _distinct(metrics: Sequence[str], frame: pd.DataFrame) -> list[str]:
    """The metrics less those whose every value equals an earlier one's: with one flow per
    algorithm, Jain's index between algorithms is Jain's index, and one figure says it."""
    kept: list[str] = []
    for metric in metrics:
        values = frame[metric].to_numpy(float)
        if not any(np.array_equal(values, frame[k].to_numpy(float), equal_nan=True) for k in kept):
            kept.append(metric)
    return kept


def _one_per_label(metrics: Sequence[str]) -> list[str]:
    """The metrics less those shown under a label already taken (a measure that repeats a
    summary column, e.g. `utilization` and `bottleneck_utilization`)."""
    labels: dict[str, str] = {}
    for metric in metrics:
        labels.setdefault(label(metric), metric)
    return list(labels.values())


def _flow_labels(section: Section, run_id: str) -> dict[object, str]:
    """`flow 0 (cubic, 42 ms)` for each flow of a run."""
    rows = section.frame[section.frame["run_id"] == run_id]
    return {
        flow: f"flow {flow} ({cc}, {rtt_ms:g} ms)"
        for flow, cc, rtt_ms in zip(rows["id"], rows["cc"], rows["rtt_ms"], strict=True)
    }


def axis_numbers(frame: pd.DataFrame, axis: str) -> pd.Series:
    """An axis as numbers: its numeric companion, else its values if numeric, else NaN."""
    companion = numeric_companion(frame, axis)
    return pd.to_numeric(frame[axis], errors="coerce") if companion is None else companion


def axis_order(frame: pd.DataFrame, axis: str) -> list[object]:
    """An axis's values in increasing numeric order, else in the order they come."""
    pairs = frame.assign(number=axis_numbers(frame, axis))[[axis, "number"]]
    pairs = pairs.dropna(subset=[axis]).drop_duplicates(axis)
    if pairs["number"].isna().any():
        return list(pairs[axis])
    return list(pairs.sort_values("number")[axis])


def _sorted_points(runs: pd.DataFrame, frame: pd.DataFrame, axes: Sequence[str]) -> pd.DataFrame:
    """Runs ordered by grid point, each axis in increasing order (the first axis slowest)."""
    keys = {a: {v: i for i, v in enumerate(axis_order(frame, a))} for a in axes}
    return (
        runs.sort_values(list(axes), key=lambda col: col.map(keys[str(col.name)]), kind="stable")
        if axes
        else runs
    )


def _cells(
    frame: pd.DataFrame, metrics: Sequence[str], axes: Sequence[str]
) -> dict[str, Cell | None]:
    """Each metric over the grid points of `frame` (one stack): the mean of the points' means
    over repeats, and their range (verdicts.point_values, for every metric in one pass: a
    pass per metric took a third of a report's tables and figures)."""
    keys = ["stack", *axes, "run_id"]
    runs = frame.groupby(keys, sort=False, dropna=False)[list(metrics)].mean()
    points = runs.groupby(level=keys[:-1], sort=False, dropna=False).mean()
    return {metric: _cell(points[metric].dropna()) for metric in metrics}


def _cell(points: pd.Series) -> Cell | None:
    if points.empty:
        return None
    return Cell(float(points.mean()), float(points.min()), float(points.max()))


def _has_values(frame: pd.DataFrame, metric: str) -> bool:
    return metric in frame and bool(np.isfinite(frame[metric].astype(float)).any())


def _listed(names: Sequence[str]) -> str:
    return ", ".join(names) if names else "none"
