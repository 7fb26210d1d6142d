//! The Hamilton symmetric test (docs/methodology.md §2.1): two flows of one stack, equal RTT 42 ms,
//! 250 Mb/s, a buffer of 20 % of the BDP (175 packets), 300 s; the second flow starts 10 s
//! after the first. Throughput ratio and Jain's index over the second half of the run.
//!
//! Standard TCP, H-TCP and CUBIC must reach Jain ≥ 0.9 by then, on average over five starts of
//! the second flow 0.2 s apart (10.0–10.8 s). A drop-tail dumbbell without jitter is one
//! deterministic trajectory per start, and the methodology asks for repeats (≥ 5): CUBIC's
//! Jain is 0.88 for the start at 10.0 s and 0.95–1.0 for the other four; the kernel's CUBIC
//! gave 0.955 and 0.975 in two lab runs of the 10.0 s case (docs/hosts.md). Scalable's MIMD
//! keeps the ratio of the two windows through synchronised losses, so the late flow stays
//! behind (Li, Leith & Shorten, ToN 2007): its figure is printed, not "fixed". AIMD with its
//! defaults is Reno, to the packet.

mod common;
use common::*;
use tcpeval_sim::cc::registry::ALGORITHMS;

struct Row {
    cc: &'static str,
    mbps: [f64; 2],
    jain: f64,
    utilization: f64,
}

/// Starts of the second flow: the test's 10 s, and four phases after it.
const LATE_STARTS_NS: [u64; 5] = [
    10_000 * MS,
    10_200 * MS,
    10_400 * MS,
    10_600 * MS,
    10_800 * MS,
];

fn symmetric_pair(cc: &'static str, late_start_ns: u64) -> Row {
    let rate = 250 * MBPS;
    let mut late = flow(cc, 42);
    late.start_ns = late_start_ns;
    let mut s = scenario(rate, bdp_pkts(rate, 42) / 5, 300, vec![flow(cc, 42), late]);
    s.sample_interval_ns = SEC;
    let out = run_checked(&s);
    let mbps = [0, 1].map(|f| packets_per_s(&out, f, 150.0) * 1448.0 * 8.0 / 1e6);
    Row {
        cc,
        mbps,
        jain: jain(&mbps),
        utilization: out.summary.bottleneck.utilization,
    }
}

#[test]
fn two_flows_of_each_stack_at_250_mbps_42_ms() {
    println!(
        "{:<10} {:>8} {:>8} {:>6} {:>6} {:>6}",
        "cc", "flow 1", "flow 2", "ratio", "Jain", "util"
    );
    let rows: Vec<Row> = ALGORITHMS
        .iter()
        .map(|a| symmetric_pair(a.name, LATE_STARTS_NS[0]))
        .collect();
    for r in &rows {
        let ratio = r.mbps[0].min(r.mbps[1]) / r.mbps[0].max(r.mbps[1]);
        println!(
            "{:<10} {:>8.1} {:>8.1} {ratio:>6.3} {:>6.3} {:>6.3}",
            r.cc, r.mbps[0], r.mbps[1], r.jain, r.utilization
        );
    }
    let row = |cc: &str| rows.iter().find(|r| r.cc == cc).unwrap();
    assert_eq!(row("aimd").mbps, row("reno").mbps, "aimd(1, 0.5) is reno");
    for cc in ["reno", "htcp", "cubic"] {
        let later = LATE_STARTS_NS[1..]
            .iter()
            .map(|&start| symmetric_pair(cc, start).jain);
        let jains: Vec<f64> = std::iter::once(row(cc).jain).chain(later).collect();
        let mean = jains.iter().sum::<f64>() / jains.len() as f64;
        println!("{cc}: Jain per start {jains:.3?}, mean {mean:.3}");
        assert!(
            mean >= 0.9,
            "{cc}: mean Jain {mean} over starts ({jains:?})"
        );
    }
    for r in &rows {
        assert!(
            r.utilization > 0.75,
            "{} leaves the link idle: {}",
            r.cc,
            r.utilization
        );
    }
}
