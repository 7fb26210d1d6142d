"""Min/max decimation keeps every bucket's extremes, in time order."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tcpeval.report.decimate import line_indexes, min_max_indexes


@settings(max_examples=200, deadline=None)
@given(
    values=st.lists(
        st.floats(min_value=-1e12, max_value=1e12, allow_nan=False), min_size=1, max_size=400
    ),
    steps=st.lists(st.floats(min_value=0, max_value=10), min_size=400, max_size=400),
    buckets=st.integers(min_value=1, max_value=50),
)
def test_no_bucket_loses_its_minimum_or_maximum(
    values: list[float], steps: list[float], buckets: int
) -> None:
    y = np.array(values)
    t = np.cumsum(steps[: len(values)])  # increasing, with repeated times (steps of 0)
    kept = min_max_indexes(t, y, buckets)
    assert np.all(np.diff(kept) > 0)  # time order, each sample once
    assert len(kept) <= max(2 * buckets, len(y))
    if len(y) <= 2 * buckets:
        assert list(kept) == list(range(len(y)))
        return
    # The buckets as documented: equal spans of time, the last one closed.
    span = t[-1] - t[0]
    scaled = (t - t[0]) / span * buckets if span > 0 else np.zeros_like(t)
    bucket_of = np.minimum(np.floor(scaled), buckets - 1)
    for b in range(buckets):
        inside = bucket_of == b
        if not inside.any():
            continue
        mine = np.intersect1d(kept, np.flatnonzero(inside))
        assert y[mine].max() == y[inside].max()
        assert y[mine].min() == y[inside].min()


def test_a_one_sample_spike_and_dip_survive_a_hundredfold_cut() -> None:
    t = np.arange(100_000) * 0.01
    y = np.full(t.size, 500.0)
    y[31_415], y[77_777] = 2_000.0, 0.0
    kept = min_max_indexes(t, y, 1_000)
    assert len(kept) <= 2_000
    assert {31_415, 77_777} <= set(kept)


def test_nan_samples_are_left_out() -> None:
    t = np.arange(10.0)
    y = np.array([1, np.nan, 3, 4, np.nan, 6, 7, 8, 9, 10.0])
    assert list(min_max_indexes(t, y, 100)) == [0, 2, 3, 5, 6, 7, 8, 9]
    assert list(min_max_indexes(t, y, 1)) == [0, 9]


def test_a_drawn_line_keeps_its_gaps() -> None:
    t = np.arange(10_000) * 0.01
    y = np.sin(t)
    y[5_000:5_010] = np.nan  # a flow that was not sampled for 0.1 s
    kept = line_indexes(t, y, 100)
    assert len(kept) <= 2 * 100 + 10
    assert set(range(5_000, 5_010)) <= set(kept)
    assert {int(np.nanargmax(y)), int(np.nanargmin(y))} <= set(kept)
