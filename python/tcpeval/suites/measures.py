"""What each suite test measures in one run: a few named numbers computed from its result.

A test names its measure (`measure = "fairness"`); the suite runner applies it to every run
and the verdict rules judge the numbers it returns. Every figure covers the run's measurement
window (the scenario's `measure`, recorded in the summary): the Hamilton, impact and response
tests set it to the second half of the run, after start-up (docs/methodology.md §3.1). Queue
sojourns and datagram delays are the backend's own whole-run figures (§3.13).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from tcpeval import metrics
from tcpeval.result import Result
from tcpeval.scenario.conditions import parse_rate_schedule
from tcpeval.summary import duration_s, measure_span_s
from tcpeval.units import parse_duration, parse_size

Measure = Callable[[Result], dict[str, float]]


def _goodput_mbps(result: Result, flow: int) -> float:
    """A flow's goodput over the window; NaN where the backend has none (a stack no model
    covers) or the flow was not active in the window."""
    goodput = result.summary["flows"][flow]["goodput_mbps"]
    return math.nan if goodput is None else float(goodput)


def _stability(result: Result) -> dict[str, float]:
    """Stability over the window, averaged over the flows: the coefficient of variation of
    each flow's goodput in bins of at least 1 s, and of its smoothed RTT (docs/methodology.md
    §3.6)."""
    start_s, end_s = measure_span_s(result.summary)
    sample_s = parse_duration(result.summary["scenario"]["sample_interval"]).seconds
    bin_s = sample_s * math.ceil(1.0 / sample_s)  # a whole number of samples
    flows = [f["id"] for f in result.summary["flows"]]
    window = {"start_s": start_s, "end_s": end_s}
    throughput = [_defined(metrics.throughput_cov, result.flows, f, bin_s, **window) for f in flows]
    rtt = [_defined(metrics.rtt_cov, result.flows, f, **window) for f in flows]
    return {"throughput_cov": _mean_of_defined(throughput), "rtt_cov": _mean_of_defined(rtt)}


def _defined(cov: Callable[..., float], *args: Any, **kwargs: Any) -> float:
    """A coefficient of variation, NaN where it has none: a flow that delivered nothing in the
    window (stopped or starved) has a zero mean."""
    try:
        return cov(*args, **kwargs)
    except ValueError:
        return math.nan


def _mean_of_defined(values: list[float]) -> float:
    defined = [v for v in values if not math.isnan(v)]
    return float(np.mean(defined)) if defined else math.nan


def fairness(result: Result) -> dict[str, float]:
    """Two like flows: the ratio of their long-run goodputs (min/max), Jain's index, and their
    stability."""
    x = [_goodput_mbps(result, f) for f in (0, 1)]
    return {
        "throughput_ratio": metrics.throughput_ratio(*x),
        "jain_index": metrics.jain_index(x),
        **_stability(result),
    }


def rtt_unfairness(result: Result) -> dict[str, float]:
    """Two flows of different RTTs: goodput ratio x1/x0 against RTT ratio RTT1/RTT0, for the
    exponent fit x1/x0 = (RTT0/RTT1)^k (docs/methodology.md §3.8), and the min/max ratio."""
    x = [_goodput_mbps(result, f) for f in (0, 1)]
    rtts = [result.summary["flows"][f]["rtt_ms"] for f in (0, 1)]
    return {
        "throughput_ratio": metrics.throughput_ratio(*x),
        "goodput_ratio": x[1] / x[0] if x[0] > 0 else math.inf,
        "rtt_ratio": rtts[1] / rtts[0],
    }


def friendliness(result: Result) -> dict[str, float]:
    """Flow 0 runs the stack, flow 1 standard TCP: the standard flow's share of their goodput.
    Against the baseline run's share this is the Hamilton friendliness (docs/methodology.md
    §3.5)."""
    x = [_goodput_mbps(result, f) for f in (0, 1)]
    total = sum(x)
    return {"standard_share": x[1] / total if total > 0 else 0.0, "standard_mbps": x[1]}


def convergence(result: Result) -> dict[str, float]:
    """Time for the late flow (1) to reach 80% of its fair share, half of what both carry at
    the end, and hold it for 20 RTTs (at least 2 s); infinite if it never does."""
    end_s = duration_s(result.summary)
    late = result.summary["flows"][1]
    both = _goodput_mbps(result, 0) + _goodput_mbps(result, 1)
    hold_s = max(2.0, 20 * late["rtt_ms"] / 1e3)
    smoothing_s = max(1.0, 10 * late["rtt_ms"] / 1e3)
    t = metrics.convergence_time_s(
        result.flows,
        1,
        both / 2,
        late["start_s"],
        hold_s=min(hold_s, end_s - late["start_s"] - smoothing_s),
        smoothing_s=smoothing_s,
    )
    return {"convergence_s": math.inf if t is None else t}


def efficiency(result: Result) -> dict[str, float]:
    """Utilisation of the bottleneck over the window, and the flows' stability."""
    used = result.summary["bottleneck"]["utilization"]
    return {"utilization": math.nan if used is None else used, **_stability(result)}


def response(result: Result) -> dict[str, float]:
    """One flow under random loss: its long-run average window (goodput × RTT, in segments)
    and the loss rate it met, measured (drops / packets sent). Long-run, because at low loss
    the slow start overshoots far above the steady window and takes many losses to come down
    (Reno at p = 1e-7, 600 s: 13,000 packets over the whole run, 4,200 over its second half,
    3,800 in Mathis' model)."""
    flow = result.summary["flows"][0]
    mss = _mss_bytes(result)
    window = _goodput_mbps(result, 0) * 1e6 * flow["rtt_ms"] / 1e3 / (8 * mss)
    return {"window_pkts": window, "loss_rate": _loss_rate(result.summary)}


def _loss_rate(summary: dict[str, Any]) -> float:
    """Bottleneck drops per packet sent; where a backend counts no drops (a model), its
    flows' retransmissions per packet sent; NaN where it has neither."""
    if (summary["bottleneck"] or {}).get("drops") is not None:
        return metrics.loss_rate(summary)
    flows = summary["flows"]
    if any(f["retransmits"] is None or f.get("packets_sent") is None for f in flows):
        return math.nan
    return sum(f["retransmits"] for f in flows) / sum(f["packets_sent"] for f in flows)


def impact(result: Result) -> dict[str, float]:
    """The mean long-run goodput of the standard flows: the last group's stack, and group 0
    too when it runs the same one (the baseline run). Baseline over stack gives the BW impact
    (docs/methodology.md §3.9)."""
    return {"standard_mean_mbps": _mean_goodput_of_last_stack(result)}


def _mean_goodput_of_last_stack(result: Result) -> float:
    """The mean goodput of the flows that run the last flow's stack."""
    rates = [_goodput_mbps(result, f) for f in _flows_of_last_stack(result)]
    return sum(rates) / len(rates)


def l4s_queue(result: Result) -> dict[str, float]:
    """The bottleneck's L4S queue (DualPI2's L queue): the sojourn of the packets it sent,
    99th percentile and mean, over the whole run (the simulator keeps one histogram per
    queue, not per window); NaN where the link has no L queue or it sent nothing (a stack
    whose packets are not ECT(1) goes to the classic queue)."""
    sojourn = _sojourn(result.summary["bottleneck"] or {}, "l")
    return {"l4s_p99_ms": sojourn["p99_ms"], "l4s_mean_ms": sojourn["mean_ms"]}


def _sojourn(link: dict[str, Any], queue: str) -> dict[str, float]:
    """One queue's sojourn figures in ms, NaN for those a backend or an empty queue lacks."""
    found: dict[str, Any] = next((s for s in link.get("sojourns") or [] if s["queue"] == queue), {})
    keys = ("p99_ms", "mean_ms")
    return {key: math.nan if found.get(key) is None else float(found[key]) for key in keys}


def coupling(result: Result) -> dict[str, float]:
    """Flow 0 runs the stack, the last flow a classic stack, through a coupled AQM: their
    long-run rate ratio stack:classic, its min/max form (the one judged: [0.5, 2] is min/max
    at least 0.5), and the L4S queue's sojourn beside classic traffic."""
    stack, classic = _goodput_mbps(result, 0), _goodput_mbps(result, -1)
    return {
        "stack_classic_ratio": stack / classic if classic > 0 else math.inf,
        "throughput_ratio": metrics.throughput_ratio(stack, classic),
        **l4s_queue(result),
    }


def harm(result: Result) -> dict[str, float]:
    """What the classic flows got over the window — the flows of the last group's stack, and
    group 0 too when it runs the same one (the baseline run, where either flow is "a classic
    flow beside a classic flow"): their mean goodput, mean smoothed RTT and retransmitted
    packets per delivered packet, against which the baseline's are the harm in rate, delay
    and loss; and the longest time one of them got under a tenth of an equal split of the
    link (docs/methodology.md §3.13)."""
    classic = _flows_of_last_stack(result)
    start_s, end_s = measure_span_s(result.summary)
    mss = _mss_bytes(result)
    equal_share_mbps = _bottleneck_mbps(result) / len(result.summary["flows"])
    flows = result.flows
    return {
        "classic_mbps": _mean_goodput_of_last_stack(result),
        "classic_rtt_ms": _mean_of_defined(
            [metrics.mean_rtt_ms(flows, f, start_s, end_s) for f in classic]
        ),
        "classic_retransmitted": _mean_of_defined(
            [metrics.retransmitted_per_delivered(flows, f, mss, start_s, end_s) for f in classic]
        ),
        "classic_starved_s": max(
            metrics.starved_s(flows, f, equal_share_mbps, start_s, end_s) for f in classic
        ),
    }


def _flows_of_last_stack(result: Result) -> list[int]:
    flows = result.summary["flows"]
    return [f["id"] for f in flows if f["cc"] == flows[-1]["cc"]]


def _bottleneck_mbps(result: Result) -> float:
    """The bottleneck's rate averaged over the window."""
    rate = parse_rate_schedule(result.summary["scenario"]["bottleneck"]["rate"])
    return rate.mean_bps(*measure_span_s(result.summary)) / 1e6


def sparse_delay(result: Result) -> dict[str, float]:
    """A constant-bit-rate source beside bulk flows: its datagrams' mean and largest one-way
    delay less the delay an empty path gives them (each link's propagation delay and the
    datagram's serialisation): the queueing a sparse flow meets. NaN where the backend does
    not time datagrams."""
    summary = result.summary
    # The first [[cbr]] table's source: sources keep the order of the tables of each kind.
    source = next(s for s in summary["sources"] if s["kind"] == "cbr")
    base_ms = _empty_path_delay_ms(summary["scenario"], summary["scenario"]["cbr"][0])
    mean, largest = source.get("mean_delay_ms"), source.get("max_delay_ms")
    return {
        "sparse_delay_ms": math.nan if mean is None else mean - base_ms,
        "sparse_max_delay_ms": math.nan if largest is None else largest - base_ms,
    }


def _empty_path_delay_ms(scenario: dict[str, Any], table: dict[str, Any]) -> float:
    """A datagram's one-way delay through empty queues: each link of its route (the
    bottleneck by default) adds its propagation delay and the datagram's serialisation."""
    links = {link["name"]: link for link in scenario.get("link") or []}
    if scenario.get("bottleneck"):
        links["bottleneck"] = scenario["bottleneck"]
    route = table.get("route") or [next(iter(links))]
    bits = parse_size(table["packet_size"]).bytes * 8
    seconds = sum(
        parse_duration(links[name]["delay"]).seconds
        + bits / parse_rate_schedule(links[name]["rate"]).bps
        for name in route
    )
    return seconds * 1e3


def completion(result: Result) -> dict[str, float]:
    """A striped transfer: when its last stream finished, and the rate that makes."""
    transfer = result.summary["transfers"][0]
    done = transfer["completion_s"]
    if done is None:
        return {"completion_s": math.nan, "transfer_mbps": 0.0}
    return {"completion_s": done, "transfer_mbps": transfer["bytes"] * 8 / done / 1e6}


def short_flows(result: Result) -> dict[str, float]:
    """The [[web]] flows that started in the window: their slowdown against an ideal
    transfer on an empty path (docs/methodology.md §3.14), mean and 99th percentile, and the
    share of them that did not complete by the end of the run."""
    start_s, end_s = measure_span_s(result.summary)
    web_groups = _web_groups(result.summary)
    started = [
        f
        for f in result.summary["flows"]
        if f["group"] in web_groups and f["start_s"] is not None and start_s <= f["start_s"] < end_s
    ]
    slowdowns = metrics.slowdowns(started, _bottleneck_mbps(result) * 1e6)
    return {
        "short_slowdown_mean": float(np.mean(slowdowns)) if len(slowdowns) else math.nan,
        "short_slowdown_p99": float(np.percentile(slowdowns, 99)) if len(slowdowns) else math.nan,
        "short_unfinished": 1 - len(slowdowns) / len(started) if started else math.nan,
    }


def _web_groups(summary: dict[str, Any]) -> set[int]:
    """The groups of the [[web]] tables: flows' groups count the [[flow]] tables first."""
    scenario = summary["scenario"]
    first = len(scenario.get("flow") or [])
    return set(range(first, first + len(scenario.get("web") or [])))


def goodput(result: Result) -> dict[str, float]:
    """Goodput of flow 0 over the window."""
    return {"goodput_mbps": _goodput_mbps(result, 0)}


def _mss_bytes(result: Result) -> float:
    flows: list[dict[str, Any]] = result.summary["scenario"]["flow"]
    return float(parse_size(flows[0]["mss"]).bytes)


MEASURES: dict[str, Measure] = {
    "fairness": fairness,
    "rtt_unfairness": rtt_unfairness,
    "friendliness": friendliness,
    "convergence": convergence,
    "efficiency": efficiency,
    "response": response,
    "impact": impact,
    "completion": completion,
    "goodput": goodput,
    "l4s_queue": l4s_queue,
    "coupling": coupling,
    "harm": harm,
    "sparse_delay": sparse_delay,
    "short_flows": short_flows,
}
