"""Min/max decimation: a long time series cut to a few points per pixel, keeping its extremes.

A chart about 1,200 pixels wide cannot show 100,000 samples, and drawing every one makes a
page slow; taking every n-th sample would lose a one-sample spike or dip. Instead the time span
is cut into equal buckets, about one per pixel, and each bucket keeps the samples holding its
minimum and its maximum, in time order: a line through them reaches every peak and trough the
full series reaches at that width (the M4 idea, Jugel et al., VLDB 2014, less the first and
last samples, which a line at one pixel per bucket does not need).
"""

from __future__ import annotations

import numpy as np

OVERVIEW_BUCKETS = 1200  # about a chart's width in pixels, and more than a PNG figure's


def min_max_indexes(t_s: np.ndarray, values: np.ndarray, buckets: int) -> np.ndarray:
    """The indexes, in increasing order, of the samples holding each bucket's minimum and
    maximum, the buckets being `buckets` equal spans of `t_s` (sorted, increasing). NaN
    samples are left out; a series of no more than two samples per bucket is kept whole."""
    finite = np.flatnonzero(np.isfinite(values))
    if len(finite) <= 2 * buckets:
        return finite
    t, y = t_s[finite], values[finite]
    span = t[-1] - t[0]
    scaled = (t - t[0]) / span * buckets if span > 0 else np.zeros_like(t)
    bucket = np.minimum(scaled.astype(np.int64), buckets - 1)
    order = np.lexsort((y, bucket))  # by bucket, then by value within it
    sorted_buckets = bucket[order]
    first = np.flatnonzero(np.r_[True, sorted_buckets[1:] != sorted_buckets[:-1]])
    last = np.r_[first[1:], len(order)] - 1
    return finite[np.unique(np.concatenate([order[first], order[last]]))]


def line_indexes(t_s: np.ndarray, values: np.ndarray, buckets: int) -> np.ndarray:
    """The samples a line `buckets` pixels wide needs, in increasing order: each bucket's
    minimum and maximum (`min_max_indexes`) and every NaN sample, which breaks the line."""
    gaps = np.flatnonzero(np.isnan(values))
    return np.union1d(min_max_indexes(t_s, values, buckets), gaps)
