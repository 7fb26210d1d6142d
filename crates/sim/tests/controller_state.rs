//! The controllers' own state as time-series columns (`CongestionControl::state_names`):
//! written for the flows whose controller gives it, NaN in the rows of the others.

mod common;
use common::*;

#[test]
fn bbr3_state_columns_cover_its_rows_and_are_nan_for_a_reno_flow() {
    let s = scenario(
        100 * MBPS,
        bdp_pkts(100 * MBPS, 40),
        3,
        vec![flow("reno", 40), flow("bbr3", 40)],
    );
    let out = run_checked(&s);
    let names: Vec<&str> = out.flows.controller.iter().map(|(n, _)| *n).collect();
    assert_eq!(
        names,
        [
            "cc_state",
            "cc_bw_bps",
            "cc_min_rtt_ms",
            "cc_pacing_gain",
            "cc_inflight_hi_pkts",
            "cc_inflight_lo_pkts"
        ]
    );
    let rows = out.flows.t_s.len();
    for (name, column) in &out.flows.controller {
        assert_eq!(column.0.len(), rows, "{name}");
    }
    let (_, state) = &out.flows.controller[0];
    let (_, min_rtt) = &out.flows.controller[2];
    for (i, &flow) in out.flows.flow.iter().enumerate() {
        if flow == 0 {
            assert!(state.0[i].is_nan() && min_rtt.0[i].is_nan(), "reno row {i}");
        } else {
            assert!(
                (0.0..=6.0).contains(&state.0[i]),
                "bbr3 row {i}: {}",
                state.0[i]
            );
            // The base RTT is 40 ms; serialisation and ACK timing add a little.
            assert!(
                (40.0..45.0).contains(&min_rtt.0[i]),
                "row {i}: {}",
                min_rtt.0[i]
            );
        }
    }
}
