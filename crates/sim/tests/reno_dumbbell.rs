//! Reno on the dumbbell: efficiency, fairness, conservation and determinism.

mod common;
use common::*;

#[test]
fn one_reno_flow_fills_a_100_mbps_100_ms_path_with_a_bdp_of_buffer() {
    let rate = 100 * MBPS;
    let s = scenario(rate, bdp_pkts(rate, 100), 120, vec![flow("reno", 100)]);
    let out = run_checked(&s);
    let b = &out.summary.bottleneck;
    println!("{:?}\n{:?}\n{:?}", out.summary.flows[0], b, out.summary.sim);
    // A buffer of one BDP keeps the link busy through each halving (algorithms.md §10.4).
    assert!(b.utilization >= 0.95, "utilization {}", b.utilization);
    assert!(b.drops > 0, "the flow must probe into losses");
}
