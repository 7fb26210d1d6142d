//! Reno on the dumbbell: efficiency, fairness, conservation and determinism.

mod common;
use common::*;
use tcpeval_sim::scenario::LossSpec;

#[test]
fn one_reno_flow_fills_a_100_mbps_100_ms_path_with_a_bdp_of_buffer() {
    let rate = 100 * MBPS;
    let s = scenario(rate, bdp_pkts(rate, 100), 120, vec![flow("reno", 100)]);
    let out = run_checked(&s);
    let b = &out.summary.bottleneck;
    println!("{:?}\n{:?}\n{:?}", out.summary.flows[0], b, out.summary.sim);
    // A buffer of one BDP keeps the link busy through each halving (docs/methodology.md §4).
    assert!(b.utilization >= 0.95, "utilization {}", b.utilization);
    assert!(b.drops > 0, "the flow must probe into losses");
}

#[test]
fn two_reno_flows_with_equal_rtt_share_100_mbps_fairly() {
    let rate = 100 * MBPS;
    let s = scenario(
        rate,
        bdp_pkts(rate, 42),
        300,
        vec![flow("reno", 42), flow("reno", 42)],
    );
    let out = run_checked(&s);
    let goodputs: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    let j = jain(&goodputs);
    println!("goodputs {goodputs:?}, Jain {j:.4}");
    assert!(j >= 0.95, "Jain index {j}");
}

#[test]
fn the_same_scenario_and_seed_give_the_same_run() {
    let rate = 50 * MBPS;
    let mut s = scenario(rate, 50, 20, vec![flow("reno", 30), flow("reno", 80)]);
    s.links[0].loss = LossSpec::Bernoulli { p: 1e-4 };
    let (a, b) = (run_checked(&s), run_checked(&s));
    let strip = |mut o: tcpeval_sim::Output| {
        o.summary.sim.wall_seconds = 0.0;
        o
    };
    assert_eq!(strip(a.clone()), strip(b));
    s.seed = 2;
    let c = strip(run_checked(&s));
    assert_ne!(
        strip(a).flows,
        c.flows,
        "another seed, another random loss pattern"
    );
}
