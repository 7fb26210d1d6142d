//! A fixed-size log-linear histogram of nanosecond values: percentiles with no per-packet
//! storage and no allocation after construction. The lab's emulator keeps its lateness and
//! added delays in it, DualPI2 the sojourn of each queue.
//!
//! Below 2^20 ns (1.05 ms) buckets are 1024 ns wide (~1 µs resolution, where lateness lives);
//! above, each power of two is split into 128 buckets, a relative width under 0.8%. Values up
//! to 2^44 ns (4.9 hours) are resolved; larger ones share the last bucket. Min and max are
//! exact; a percentile is reported as its bucket's midpoint, clamped to [min, max].

use serde::Serialize;

const LINEAR_SHIFT: u32 = 10;
const LINEAR_LIMIT_LOG2: u32 = 20;
const LINEAR_BUCKETS: usize = 1 << (LINEAR_LIMIT_LOG2 - LINEAR_SHIFT);
const SUB_BITS: u32 = 7;
const MAX_LOG2: u32 = 44;
const BUCKETS: usize = LINEAR_BUCKETS + ((MAX_LOG2 - LINEAR_LIMIT_LOG2) << SUB_BITS) as usize;

#[derive(Debug, Clone)]
pub struct Histogram {
    counts: Vec<u64>,
    count: u64,
    sum: u128,
    min: u64,
    max: u64,
}

/// What STATS.json shows of a histogram; `null`s when it is empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Summary {
    pub min: Option<u64>,
    pub p50: Option<u64>,
    pub p99: Option<u64>,
    pub p999: Option<u64>,
    pub max: Option<u64>,
    pub count: u64,
}

impl Default for Histogram {
    fn default() -> Self {
        Self::new()
    }
}

impl Histogram {
    pub fn new() -> Self {
        Self {
            counts: vec![0; BUCKETS],
            count: 0,
            sum: 0,
            min: u64::MAX,
            max: 0,
        }
    }

    pub fn record(&mut self, value_ns: u64) {
        self.counts[bucket(value_ns)] += 1;
        self.count += 1;
        self.sum += u128::from(value_ns);
        self.min = self.min.min(value_ns);
        self.max = self.max.max(value_ns);
    }

    /// Values recorded.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The exact mean, `None` when empty.
    pub fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum as f64 / self.count as f64)
    }

    /// The value at quantile `q` in [0, 1] (nearest rank), `None` when empty.
    pub fn quantile(&self, q: f64) -> Option<u64> {
        if self.count == 0 {
            return None;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += n;
            if seen >= rank {
                let (lo, width) = bounds(i);
                return Some((lo + width / 2).clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    pub fn summary(&self) -> Summary {
        let empty = self.count == 0;
        Summary {
            min: (!empty).then_some(self.min),
            p50: self.quantile(0.5),
            p99: self.quantile(0.99),
            p999: self.quantile(0.999),
            max: (!empty).then_some(self.max),
            count: self.count,
        }
    }
}

fn bucket(v: u64) -> usize {
    if v < 1 << LINEAR_LIMIT_LOG2 {
        return (v >> LINEAR_SHIFT) as usize;
    }
    let log2 = (63 - v.leading_zeros()).min(MAX_LOG2 - 1);
    let sub = ((v >> (log2 - SUB_BITS)) & ((1 << SUB_BITS) - 1)) as usize;
    let i = LINEAR_BUCKETS + (((log2 - LINEAR_LIMIT_LOG2) as usize) << SUB_BITS) + sub;
    i.min(BUCKETS - 1)
}

/// Lower bound and width of bucket `i`.
fn bounds(i: usize) -> (u64, u64) {
    if i < LINEAR_BUCKETS {
        return ((i as u64) << LINEAR_SHIFT, 1 << LINEAR_SHIFT);
    }
    let j = i - LINEAR_BUCKETS;
    let log2 = (j >> SUB_BITS) as u32 + LINEAR_LIMIT_LOG2;
    let sub = (j & ((1 << SUB_BITS) - 1)) as u64;
    let width = 1u64 << (log2 - SUB_BITS);
    ((1u64 << log2) + sub * width, width)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_tile_the_range() {
        for i in 0..BUCKETS - 1 {
            let (lo, w) = bounds(i);
            assert_eq!(bucket(lo), i);
            assert_eq!(bucket(lo + w - 1), i);
            assert_eq!(bounds(i + 1).0, lo + w, "bucket {i}");
        }
    }

    #[test]
    fn resolution_is_a_microsecond_below_a_millisecond_and_one_percent_above() {
        for v in [
            0u64,
            999,
            5_000,
            123_456,
            1_000_000,
            3_000_000,
            40_000_000,
            1 << 40,
        ] {
            let (_, w) = bounds(bucket(v));
            assert!(w <= 1024 || (w as f64) / (v as f64) <= 0.01, "{v}: {w}");
        }
    }

    #[test]
    fn percentiles_of_a_uniform_sample() {
        // 1..=100_000 µs: p50 = 50 ms, p99 = 99 ms, within the bucket's relative width.
        let mut h = Histogram::new();
        for i in 1..=100_000u64 {
            h.record(i * 1_000);
        }
        let s = h.summary();
        assert_eq!(
            (s.min, s.max, s.count),
            (Some(1_000), Some(100_000_000), 100_000)
        );
        let p50 = s.p50.unwrap() as f64;
        let p99 = s.p99.unwrap() as f64;
        assert!((p50 / 50e6 - 1.0).abs() < 0.01, "{p50}");
        assert!((p99 / 99e6 - 1.0).abs() < 0.01, "{p99}");
    }

    #[test]
    fn percentiles_below_a_millisecond_are_within_a_microsecond() {
        let mut h = Histogram::new();
        for v in [10_000u64, 20_000, 30_000, 40_000] {
            for _ in 0..25 {
                h.record(v);
            }
        }
        assert!(h.quantile(0.5).unwrap().abs_diff(20_000) <= 1_024);
        assert_eq!(h.quantile(1.0), Some(40_000));
        assert_eq!(h.quantile(0.0), Some(10_000));
    }

    #[test]
    fn an_empty_histogram_reports_nulls_and_a_single_value_exactly() {
        let mut h = Histogram::new();
        assert_eq!(h.summary().p50, None);
        h.record(30_000_123);
        assert_eq!(h.mean(), Some(30_000_123.0));
        let s = h.summary();
        assert_eq!(
            (s.min, s.p50, s.p99, s.max),
            (
                Some(30_000_123),
                Some(30_000_123),
                Some(30_000_123),
                Some(30_000_123)
            )
        );
    }
}
