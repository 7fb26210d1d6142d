"""The fidelity table's rows against the kernel's figures the lab recorded (the goal: the
`linux` host within 15% of the kernel, and within 0.05 of its Jain index; for the classic-ECN
rows, marks per packet within 25% and no AQM drop in either world). A known miss is expected
to miss, with its reason, until it is mended."""

from __future__ import annotations

import pytest

from tcpeval import fidelity

KERNEL_ROWS = [row for row in fidelity.lab_rows(fidelity.KERNEL_SECONDS) if row.kernel is not None]


def _expected(row: fidelity.Row) -> object:
    miss = fidelity.KERNEL_MISSES.get((row.name, row.unit))
    marks = [] if miss is None else [pytest.mark.xfail(reason=miss, strict=True)]
    return pytest.param(row, marks=marks, id=f"{row.name} {row.unit}")


@pytest.mark.parametrize("row", [_expected(row) for row in KERNEL_ROWS])
def test_the_linux_host_is_within_the_goal_of_the_kernel(row: fidelity.Row) -> None:
    figure = fidelity.simulated(row, "linux")
    assert figure is not None
    assert row.within_goal(figure), f"{figure:.3g} against the kernel's {row.kernel:.3g}"


def test_every_recorded_kernel_figure_belongs_to_a_row() -> None:
    """A renamed row would silently lose its kernel figure."""
    named = {(row.name, row.unit) for row in KERNEL_ROWS}
    assert named == set(fidelity.KERNEL_FIGURES)
    assert set(fidelity.KERNEL_MISSES) <= named


def test_the_goal_is_a_difference_for_jain_and_a_ratio_for_the_rest() -> None:
    jain = fidelity.Row("two", {}, fidelity.jain, "Jain", kernel=0.90)
    assert jain.within_goal(0.95)
    assert not jain.within_goal(0.96)
    goodput = fidelity.Row("one", {}, fidelity.goodput, "Mb/s", kernel=10.0)
    assert goodput.within_goal(11.4)
    assert goodput.within_goal(8.6)
    assert not goodput.within_goal(11.6)
    assert fidelity.Row("none", {}, fidelity.goodput, "Mb/s").within_goal(1.0) is None


def test_only_the_recorded_duration_carries_the_kernel_figures() -> None:
    longer = fidelity.lab_rows(2 * fidelity.KERNEL_SECONDS)
    assert {row.name for row in longer if row.kernel} == {
        "reno 82/162ms 250M 300s",
        "1 reno loss 1e-3 300s",
        "1 cubic loss 1e-3 300s",
    }


def test_a_row_of_several_starts_staggers_its_last_flow_over_a_second() -> None:
    scenario = fidelity.dumbbell("two", 10, {"rate": "10Mbps"}, [{"rtt": "10ms"}, {"rtt": "20ms"}])
    row = fidelity.Row("two", scenario, fidelity.first_over_second, "ratio", starts=4)
    variants = row.variants(scenario)
    assert [v["flow"][1]["start"] for v in variants] == ["0ms", "250ms", "500ms", "750ms"]
    assert all(v["flow"][0] == {"rtt": "10ms"} for v in variants)
    assert fidelity.Row("one", scenario, fidelity.goodput, "Mb/s").variants(scenario) == [scenario]
