//! HighSpeed TCP's a(w) and b(w) (RFC 3649 §5) as rows for the BPF program, which has no
//! log or pow to compute them: the simulator's closed forms sampled at `ROWS` windows spaced
//! evenly in log w from Low_Window to High_Window, where a(w) and b(w) are smooth enough that
//! the program's straight line between two rows stays within 0.1 % of them.
//!
//! Each row is three words: the window (whole packets), a and b in fixed point.

use serde_json::{Map, Value};
use tcpeval_sim::cc::highspeed::HighSpeedParams;

use crate::error::Result;
use crate::params::fraction;

/// `HSTCP_ROWS` in `bpf/highspeed.bpf.c`.
pub const ROWS: usize = 64;

/// The rows' words for a complete, checked `cc` table (`params::resolve`).
pub fn rows(table: &Map<String, Value>) -> Result<Vec<u64>> {
    let params: HighSpeedParams = serde_json::from_value(Value::Object(table.clone()))
        .expect("the simulator's builder has checked the table");
    let mut words = Vec::with_capacity(3 * ROWS);
    for w in windows(&params) {
        words.push(w as u64);
        words.push(fraction("high_window", params.increase(w))?);
        words.push(fraction("high_decrease", params.decrease(w))?);
    }
    Ok(words)
}

/// Whole windows from the first above Low_Window's fraction to High_Window, spaced evenly
/// in log w; rounding may repeat one where the range is narrow, which the search passes over.
fn windows(params: &HighSpeedParams) -> Vec<f64> {
    let first = params.low_window.ceil();
    let last = params.high_window.floor().max(first);
    let step = (last / first).ln() / (ROWS - 1) as f64;
    (0..ROWS)
        .map(|i| (first * (step * i as f64).exp()).round())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::FRACTION_SHIFT;

    const ONE: f64 = (1u64 << FRACTION_SHIFT) as f64;

    fn rfc_rows() -> Vec<[f64; 3]> {
        let table = serde_json::to_value(HighSpeedParams::default()).unwrap();
        let words = rows(table.as_object().unwrap()).unwrap();
        words
            .chunks_exact(3)
            .map(|r| [r[0] as f64, r[1] as f64 / ONE, r[2] as f64 / ONE])
            .collect()
    }

    /// The program's interpolation (`hstcp_aimd_at`) in floating point.
    fn between(rows: &[[f64; 3]], w: f64) -> (f64, f64) {
        let i = rows.iter().rposition(|r| r[0] <= w).unwrap();
        let (lo, hi) = (rows[i], rows[i + 1]);
        let t = (w - lo[0]) / (hi[0] - lo[0]);
        (lo[1] + (hi[1] - lo[1]) * t, lo[2] + (hi[2] - lo[2]) * t)
    }

    #[test]
    fn rows_run_from_low_window_to_high_window_with_the_closed_forms() {
        let rows = rfc_rows();
        assert_eq!(rows.len(), ROWS);
        assert_eq!(rows[0], [38.0, 1.0, 0.5]); // RFC 3649 §5: standard TCP at Low_Window
        assert_eq!(rows[ROWS - 1][0], 83_000.0);
        // RFC 3649 §5: a = 72 and b = 0.1 at High_Window; the closed form gives a = 72.5.
        assert!(
            (rows[ROWS - 1][1] - 72.5).abs() < 0.05,
            "{:?}",
            rows[ROWS - 1]
        );
        assert!(
            (rows[ROWS - 1][2] - 0.1).abs() < 1e-6,
            "{:?}",
            rows[ROWS - 1]
        );
        assert!(rows.windows(2).all(|p| p[0][0] < p[1][0]), "windows rise");
    }

    /// 0.1 % of a(w) is far below what a kernel's window, counted in whole packets, shows;
    /// b(w) within 0.0002 moves ssthresh by less than one packet below 5000 packets.
    #[test]
    fn between_two_rows_the_line_stays_within_a_tenth_of_a_percent() {
        let rows = rfc_rows();
        let params = HighSpeedParams::default();
        for w in 38..83_000 {
            let (a, b) = between(&rows, f64::from(w));
            let (a_exact, b_exact) = (params.increase(f64::from(w)), params.decrease(f64::from(w)));
            // Just above Low_Window the closed form starts at 0.96, not standard TCP's 1.
            let a_tolerance = if w < 43 { 0.05 } else { 0.001 };
            assert!(
                (a / a_exact - 1.0).abs() < a_tolerance,
                "a({w}) = {a}, not {a_exact}"
            );
            assert!((b - b_exact).abs() < 0.0002, "b({w}) = {b}, not {b_exact}");
        }
    }

    #[test]
    fn a_narrow_range_repeats_windows_without_leaving_it() {
        let params = HighSpeedParams {
            low_window: 38.5,
            high_window: 50.0,
            ..HighSpeedParams::default()
        };
        let windows = windows(&params);
        assert_eq!((windows[0], windows[ROWS - 1]), (39.0, 50.0));
        assert!(windows.windows(2).all(|p| p[0] <= p[1]));
    }
}
