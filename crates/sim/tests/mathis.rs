//! One Reno flow under random loss only follows the square-root law of Mathis et al. (1997):
//! goodput = MSS/RTT · C/sqrt(p), C = sqrt(3/(2b)) where the window grows by 1/b packet per
//! round trip (docs/methodology.md §4). b = 1 with an ACK per packet, or with delayed ACKs when
//! the sender counts packets acknowledged (ABC, Reno's default, as Linux); b = 2 with delayed
//! ACKs counted per ACK (RFC 5681 as written, `abc = false`). Tolerance ±20%, the
//! project's tolerance for the models against the simulator.

mod common;
use common::*;
use tcpeval_sim::scenario::LossSpec;

fn goodput_vs_mathis(p: f64, delayed_ack: bool, abc: bool, duration_s: u64) -> (f64, f64) {
    let mut f = flow("reno", 60);
    f.delayed_ack = delayed_ack;
    f.cc.insert("abc".into(), abc.into());
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
    let acks_per_increase = if delayed_ack && !abc { 2.0 } else { 1.0 };
    let c = (1.5f64 / acks_per_increase).sqrt();
    let mathis_mbps = 1448.0 * 8.0 / 0.060 * c / p.sqrt() / 1e6;
    (out.summary.flows[0].goodput_mbps, mathis_mbps)
}

fn check(p: f64, delayed_ack: bool, abc: bool, duration_s: u64) {
    let (sim, model) = goodput_vs_mathis(p, delayed_ack, abc, duration_s);
    let ratio = sim / model;
    println!(
        "p={p:e} delayed_ack={delayed_ack} abc={abc}: sim {sim:.2} Mb/s, Mathis {model:.2} Mb/s, \
         ratio {ratio:.3}"
    );
    assert!((0.8..=1.2).contains(&ratio), "ratio {ratio}");
}

#[test]
fn p_1e3_ack_every_packet() {
    check(1e-3, false, true, 1000);
}

#[test]
fn p_1e3_delayed_ack_counted_per_ack() {
    check(1e-3, true, false, 1000);
}

#[test]
fn p_1e3_delayed_ack_counted_per_packet() {
    check(1e-3, true, true, 1000);
}

#[test]
fn p_1e4_ack_every_packet() {
    check(1e-4, false, true, 2000);
}

#[test]
fn p_1e4_delayed_ack_counted_per_ack() {
    check(1e-4, true, false, 2000);
}

#[test]
fn p_1e4_delayed_ack_counted_per_packet() {
    check(1e-4, true, true, 2000);
}
