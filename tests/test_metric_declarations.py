from __future__ import annotations

import pytest

from tcpeval.metrics import METRICS, label
from tcpeval.report.verdicts import parse_rules
from tcpeval.suites import available, load_suite
from tcpeval.suites.measures import MEASURES


def test_every_declared_measure_exists_and_every_measure_is_declared() -> None:
    named = {measure for metric in METRICS.values() for measure in metric.measures}
    assert named == set(MEASURES)


@pytest.mark.parametrize("name", available())
def test_every_metric_a_suite_judges_is_declared(name: str) -> None:
    for rule in parse_rules(load_suite(name).rule):
        assert rule.metric in METRICS, f"{name}: rule on undeclared {rule.metric!r}"


@pytest.mark.parametrize(
    ("metric", "text"),
    [
        ("convergence_s", "convergence time (s)"),
        ("goodput_mbps", "goodput per flow (Mb/s)"),
        ("rtt_cov", "RTT CoV"),
        ("bottleneck.rate", "bottleneck.rate"),
        ("packets_sent", "packets sent"),
    ],
)
def test_a_label_carries_the_unit_and_an_undeclared_column_its_name(metric: str, text: str) -> None:
    assert label(metric) == text


def test_times_costs_and_variation_are_lower_is_better() -> None:
    lower = {name for name, metric in METRICS.items() if metric.better == "lower"}
    assert {"convergence_s", "rtt_cov", "throughput_cov", "completion_s"} <= lower
    assert METRICS["jain_index"].better == "higher"
