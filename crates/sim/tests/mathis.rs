//! One Reno flow under random loss only follows the square-root law of Mathis et al. (1997):
//! goodput = MSS/RTT · C/sqrt(p), C = sqrt(3/2) with an ACK per packet and sqrt(3/4) with
//! delayed ACKs (algorithms.md §10.1). Tolerance ±20%, as the issue states.

mod common;
use common::*;
use tcpeval_sim::scenario::LossSpec;

fn goodput_vs_mathis(p: f64, delayed_ack: bool, duration_s: u64) -> (f64, f64) {
    let mut f = flow("reno", 60);
    f.delayed_ack = delayed_ack;
    // 100 Mb/s is several times what the loss allows, and the buffer never fills.
    let mut s = scenario(100 * MBPS, 100_000, duration_s, vec![f]);
    s.links[0].loss = LossSpec::Bernoulli { p };
    let out = run_checked(&s);
    let b = &out.summary.bottleneck;
    assert_eq!(b.queue_drops, 0, "only random loss");
    assert!(
        b.random_drops > 100,
        "enough loss events to average over: {}",
        b.random_drops
    );
    let c = if delayed_ack {
        0.75f64.sqrt()
    } else {
        1.5f64.sqrt()
    };
    let mathis_mbps = 1448.0 * 8.0 / 0.060 * c / p.sqrt() / 1e6;
    (out.summary.flows[0].goodput_mbps, mathis_mbps)
}

fn check(p: f64, delayed_ack: bool, duration_s: u64) {
    let (sim, model) = goodput_vs_mathis(p, delayed_ack, duration_s);
    let ratio = sim / model;
    println!("p={p:e} delayed_ack={delayed_ack}: sim {sim:.2} Mb/s, Mathis {model:.2} Mb/s, ratio {ratio:.3}");
    assert!((0.8..=1.2).contains(&ratio), "ratio {ratio}");
}

#[test]
fn p_1e3_ack_every_packet() {
    check(1e-3, false, 1000);
}

#[test]
fn p_1e3_delayed_ack() {
    check(1e-3, true, 1000);
}

#[test]
fn p_1e4_ack_every_packet() {
    check(1e-4, false, 2000);
}

#[test]
fn p_1e4_delayed_ack() {
    check(1e-4, true, 2000);
}
