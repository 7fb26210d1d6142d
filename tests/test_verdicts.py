from __future__ import annotations

import math

import pandas as pd
import pytest
from rich.console import Console

from tcpeval.report.tables import verdicts_table
from tcpeval.report.verdicts import Rule, evaluate, format_axis_value, parse_rules, point_values

AXES = ["bottleneck.rate", "flow.*.rtt"]


def sweep_frame(
    values: dict[tuple[str, str, str], list[float]], metric: str = "jain_index"
) -> pd.DataFrame:
    """A tidy frame as tcpeval.load returns: two flow rows per run, one run per repeat.

    `values` maps (cc, rate, rtt) to `metric` of each repeat; both flows carry it.
    """
    rows = []
    for (cc, rate, rtt), repeats in values.items():
        for repeat, value in enumerate(repeats):
            run_id = f"{cc}-{rate}-{rtt}-{repeat}"
            for flow in (0, 1):
                rows.append(
                    {
                        "run_id": run_id,
                        "repeat": repeat,
                        "bottleneck.rate": rate,
                        "flow.*.rtt": rtt,
                        "id": flow,
                        "cc": cc,
                        metric: value,
                    }
                )
    return pd.DataFrame(rows)


FRAME = sweep_frame(
    {
        ("reno", "10Mbps", "16ms"): [0.99, 0.97],
        ("reno", "250Mbps", "324ms"): [0.90, 0.80],
        ("scalable", "10Mbps", "16ms"): [0.95, 0.93],
        ("scalable", "250Mbps", "324ms"): [0.60, 0.70],
    }
)


def rule(**table: object) -> Rule:
    return Rule.from_dict({"metric": "jain_index", "message": "at {where}", **table})


def test_point_values_average_the_repeats() -> None:
    points = point_values(FRAME, "jain_index", axes=AXES)
    scalable = points[(points["stack"] == "scalable") & (points["bottleneck.rate"] == "250Mbps")]
    assert scalable["value"].tolist() == pytest.approx([0.65])
    assert len(points) == 4


def test_below_fails_the_stacks_with_a_point_under_the_threshold() -> None:
    message = "fairness between like flows below {threshold} at {where} ({value:.2f})"
    verdicts = evaluate(FRAME, [rule(below=0.8, message=message)], axes=AXES, baseline="reno")
    by_stack = {v.stack: v for v in verdicts}
    assert by_stack["reno"].passed is True
    assert by_stack["reno"].points == 2
    scalable = by_stack["scalable"]
    assert scalable.passed is False
    assert scalable.where == "250 Mb/s, 324 ms"
    assert scalable.value == pytest.approx(0.65)
    assert scalable.baseline == pytest.approx(0.85)
    assert scalable.failing == ("250 Mb/s, 324 ms",)
    assert scalable.message == "fairness between like flows below 0.8 at 250 Mb/s, 324 ms (0.65)"


def test_above_fails_on_large_values() -> None:
    verdicts = evaluate(FRAME, [rule(above=0.96)], axes=AXES, baseline="reno")
    assert {v.stack: v.passed for v in verdicts} == {"reno": False, "scalable": True}
    assert verdicts[0].where == "10 Mb/s, 16 ms"


def test_worse_than_baseline_compares_the_same_grid_point() -> None:
    # scalable / reno: 0.94/0.98 at 10 Mb/s (4% worse), 0.65/0.85 at 250 Mb/s (24% worse).
    loose, strict = rule(worse_than_baseline_by=0.3), rule(worse_than_baseline_by=0.1)
    verdicts = evaluate(FRAME, [loose, strict], axes=AXES, baseline="reno")
    assert [(v.stack, v.passed) for v in verdicts] == [("scalable", True), ("scalable", False)]
    assert verdicts[1].where == "250 Mb/s, 324 ms"
    assert verdicts[1].baseline == pytest.approx(0.85)


def test_worse_than_baseline_is_above_the_baseline_for_a_lower_is_better_metric() -> None:
    # Convergence time, lower is better: reno takes 10 s and 20 s; a stack taking ten times
    # as long is worse, one converging five times faster is better, whatever the margin.
    frame = sweep_frame(
        {
            ("reno", "10Mbps", "16ms"): [10.0],
            ("reno", "250Mbps", "324ms"): [20.0],
            ("slow", "10Mbps", "16ms"): [11.0],
            ("slow", "250Mbps", "324ms"): [200.0],
            ("fast", "10Mbps", "16ms"): [2.0],
            ("fast", "250Mbps", "324ms"): [4.0],
        },
        metric="convergence_s",
    )
    table = {"metric": "convergence_s", "message": "slower at {where}"}
    rule = Rule.from_dict({**table, "worse_than_baseline_by": 0.2})
    verdicts = {v.stack: v for v in evaluate(frame, [rule], axes=AXES, baseline="reno")}
    assert verdicts["fast"].passed is True
    slow = verdicts["slow"]
    assert slow.passed is False
    # 11 s is within 20% of 10 s; 200 s is not, and is the worst point.
    assert slow.failing == ("250 Mb/s, 324 ms",)
    assert (slow.where, slow.value, slow.baseline) == ("250 Mb/s, 324 ms", 200.0, 20.0)


def test_the_worst_point_of_a_passing_lower_is_better_rule_is_the_highest_ratio() -> None:
    frame = sweep_frame(
        {
            ("reno", "10Mbps", "16ms"): [0.10],
            ("reno", "250Mbps", "324ms"): [0.20],
            ("cubic", "10Mbps", "16ms"): [0.11],
            ("cubic", "250Mbps", "324ms"): [0.10],
        },
        metric="rtt_cov",
    )
    rule = Rule.from_dict({"metric": "rtt_cov", "message": "m", "worse_than_baseline_by": 0.5})
    (verdict,) = evaluate(frame, [rule], axes=AXES, baseline="reno")
    assert verdict.passed is True
    assert verdict.where == "10 Mb/s, 16 ms"


def test_baseline_rule_without_baseline_data_judges_nothing() -> None:
    verdicts = evaluate(FRAME, [rule(worse_than_baseline_by=0.1)], axes=AXES, baseline="cubic")
    assert {(v.stack, v.passed) for v in verdicts} == {("reno", None), ("scalable", None)}
    assert verdicts[0].message == "no baseline to compare with"


def test_a_rule_judges_only_its_test_and_only_that_tests_axes() -> None:
    other = FRAME.assign(test="other", jain_index=0.1, **{"flow.*.rtt": None})
    frame = pd.concat([FRAME.assign(test="symmetric"), other], ignore_index=True)
    verdicts = evaluate(frame, [rule(below=0.5, test="symmetric")], axes=AXES, baseline="reno")
    assert [v.passed for v in verdicts] == [True, True]
    verdicts = evaluate(frame, [rule(below=0.5, test="other")], axes=AXES, baseline="reno")
    assert [v.where for v in verdicts] == ["10 Mb/s", "10 Mb/s"]
    assert [v.passed for v in verdicts] == [False, False]


def test_a_missing_metric_or_test_gives_no_verdict_instead_of_an_error() -> None:
    verdicts = evaluate(FRAME, [rule(below=0.5, test="absent")], axes=AXES, baseline="reno")
    assert [v.passed for v in verdicts] == [None, None]
    missing = Rule.from_dict({"metric": "nope", "below": 1, "message": "m"})
    assert evaluate(FRAME, [missing], axes=AXES, baseline=None)[0].message == "no data"


def test_nan_repeats_are_left_out_and_all_nan_points_are_not_judged() -> None:
    frame = sweep_frame(
        {("reno", "10Mbps", "16ms"): [math.nan, 0.5], ("reno", "1Gbps", "1s"): [math.nan]}
    )
    (verdict,) = evaluate(frame, [rule(below=0.8)], axes=AXES, baseline=None)
    assert (verdict.passed, verdict.value, verdict.points) == (False, 0.5, 1)


def test_rules_parse_from_suite_tables_and_reject_bad_ones() -> None:
    (parsed,) = parse_rules([{"metric": "x", "test": "t", "above": 60, "message": "{value}"}])
    assert (parsed.condition, parsed.threshold, parsed.test) == ("above", 60.0, "t")
    assert parsed.text == "x above 60 (test t)"
    with pytest.raises(ValueError, match="exactly one"):
        Rule.from_dict({"metric": "x", "below": 1, "above": 2, "message": "m"})
    with pytest.raises(ValueError, match="unknown key"):
        Rule.from_dict({"metric": "x", "below": 1, "message": "m", "bellow": 2})
    with pytest.raises(ValueError, match="placeholder"):
        Rule.from_dict({"metric": "x", "below": 1, "message": "at {point}"})


@pytest.mark.parametrize("metric", ["x", "rtt_ratio"])
def test_a_baseline_rule_needs_a_metric_with_a_direction(metric: str) -> None:
    # An undeclared column, or one that describes a run without judging it: "worse" has no sense.
    with pytest.raises(ValueError, match="better direction"):
        Rule.from_dict({"metric": metric, "worse_than_baseline_by": 0.1, "message": "m"})


@pytest.mark.parametrize(
    ("axis", "value", "text"),
    [
        ("bottleneck.rate", "250Mbps", "250 Mb/s"),
        ("flow.0.rtt", "324ms", "324 ms"),
        ("bottleneck.queue", "20%bdp", "20% BDP"),
        ("bottleneck.loss", 0.001, "loss 0.001"),
        ("flow.*.cc", "cubic", "cubic"),
    ],
)
def test_axis_values_read_as_a_person_writes_them(axis: str, value: object, text: str) -> None:
    assert format_axis_value(axis, value) == text


def test_the_verdicts_table_gives_each_value_its_metrics_unit() -> None:
    frame = sweep_frame(
        {("reno", "10Mbps", "16ms"): [10.0], ("slow", "10Mbps", "16ms"): [142.0]},
        metric="convergence_s",
    )
    rule = Rule.from_dict({"metric": "convergence_s", "above": 60, "message": "m"})
    console = Console(width=200, record=True)
    console.print(verdicts_table(evaluate(frame, [rule], axes=AXES, baseline="reno")))
    text = console.export_text()
    assert "142 s" in text
    assert "10 s" in text
