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
    (scalable,) = evaluate(FRAME, [rule(below=0.8, message=message)], axes=AXES, baseline="reno")
    assert scalable.stack == "scalable"
    assert scalable.points == 2
    assert scalable.passed is False
    assert scalable.where == "250 Mb/s, 324 ms"
    assert scalable.value == pytest.approx(0.65)
    assert scalable.baseline == pytest.approx(0.85)
    assert scalable.failing == ("250 Mb/s, 324 ms",)
    assert scalable.message == "fairness between like flows below 0.8 at 250 Mb/s, 324 ms (0.65)"


def test_above_fails_on_large_values_and_judges_the_baseline_only_when_alone() -> None:
    (scalable,) = evaluate(FRAME, [rule(above=0.93)], axes=AXES, baseline="reno")
    assert (scalable.stack, scalable.passed, scalable.where) == (
        "scalable",
        False,
        "10 Mb/s, 16 ms",
    )
    alone = FRAME[FRAME["cc"] == "reno"]
    (reno,) = evaluate(alone, [rule(above=0.96)], axes=AXES, baseline="reno")
    assert (reno.stack, reno.passed) == ("reno", False)


def test_worse_than_baseline_compares_the_same_grid_point() -> None:
    # scalable / reno: 0.94/0.98 at 10 Mb/s (4% worse), 0.65/0.85 at 250 Mb/s (24% worse).
    for margin, passed in ((0.3, True), (0.1, False)):
        (verdict,) = evaluate(
            FRAME, [rule(worse_than_baseline_by=margin)], axes=AXES, baseline="reno"
        )
        assert (verdict.stack, verdict.passed) == ("scalable", passed)
        assert verdict.where == "250 Mb/s, 324 ms"
        assert verdict.baseline == pytest.approx(0.85)


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


def test_the_factor_is_how_many_times_worse_than_the_baseline_as_the_bw_impact() -> None:
    # standard_mean_mbps, higher is better: 40 Mb/s beside the stack, 424 beside standard TCP
    # is a BW impact of 10.6, shown by the message that the rule's words agree with.
    frame = sweep_frame(
        {("reno", "1Gbps", "50ms"): [424.0], ("bbr", "1Gbps", "50ms"): [40.0]},
        metric="standard_mean_mbps",
    )
    table = {"metric": "standard_mean_mbps", "worse_than_baseline_by": 0.5}
    impact = Rule.from_dict(table | {"message": "BW impact {factor:.1f} (above 2) at {where}"})
    (verdict,) = evaluate(frame, [impact], axes=AXES, baseline="reno")
    assert verdict.passed is False
    assert verdict.message == "BW impact 10.6 (above 2) at 1 Gb/s, 50 ms"
    assert impact.text == "standard flows' mean goodput at least 50% of the baseline's"


def test_two_rules_on_one_metric_of_one_test_are_refused() -> None:
    # Two thresholds on one metric would give a point a PASS row and a FAIL row.
    table = {"metric": "throughput_ratio", "message": "m"}
    with pytest.raises(ValueError, match="two rules judge 'throughput_ratio' of test 'sym'"):
        parse_rules([table | {"test": "sym", "below": 0.8}, table | {"test": "sym", "below": 0.5}])
    with pytest.raises(ValueError, match="two rules judge"):
        parse_rules([table | {"below": 0.8}, table | {"test": "sym", "below": 0.5}])
    assert (
        len(parse_rules([table | {"test": "a", "below": 0.8}, table | {"test": "b", "below": 0.5}]))
        == 2
    )


def test_a_rule_without_a_test_gives_one_verdict_per_test_with_a_table_row_each() -> None:
    # The verdict table of a suite: one row per (test, metric, stack), with a baseline column.
    frame = pd.concat(
        [FRAME.assign(test="impact"), FRAME.assign(test="impact_background")], ignore_index=True
    )
    verdicts = evaluate(frame, [rule(worse_than_baseline_by=0.1)], axes=AXES, baseline="reno")
    assert [(v.test, v.rule.metric, v.stack) for v in verdicts] == [
        ("impact", "jain_index", "scalable"),
        ("impact_background", "jain_index", "scalable"),
    ]
    console = Console(width=200, record=True)
    console.print(verdicts_table(verdicts))
    lines = console.export_text().splitlines()
    heading = next(line for line in lines if "verdict" in line and "rule" in line)
    headers = [cell.strip() for cell in heading.strip("┃").split("┃")]
    assert headers[:7] == ["verdict", "test", "stack", "rule", "worst point", "value", "baseline"]
    rows = [line for line in lines if "FAIL" in line]
    assert len(rows) == 2
    assert all("0.65" in row and "0.85" in row and "250 Mb/s, 324 ms" in row for row in rows)


def test_baseline_rule_without_baseline_data_judges_nothing() -> None:
    verdicts = evaluate(FRAME, [rule(worse_than_baseline_by=0.1)], axes=AXES, baseline="cubic")
    assert {(v.stack, v.passed) for v in verdicts} == {("reno", None), ("scalable", None)}
    assert verdicts[0].message == "no baseline to compare with"


def test_a_rule_judges_only_its_test_and_only_that_tests_axes() -> None:
    other = FRAME.assign(test="other", jain_index=0.1, **{"flow.*.rtt": None})
    frame = pd.concat([FRAME.assign(test="symmetric"), other], ignore_index=True)
    verdicts = evaluate(frame, [rule(below=0.5, test="symmetric")], axes=AXES, baseline="reno")
    assert [v.passed for v in verdicts] == [True]
    verdicts = evaluate(frame, [rule(below=0.5, test="other")], axes=AXES, baseline="reno")
    assert [(v.test, v.where, v.passed) for v in verdicts] == [("other", "10 Mb/s", False)]


def test_a_missing_metric_or_test_gives_no_verdict_instead_of_an_error() -> None:
    verdicts = evaluate(FRAME, [rule(below=0.5, test="absent")], axes=AXES, baseline="reno")
    assert [v.passed for v in verdicts] == [None]
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
    assert parsed.text == "x at most 60"
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
