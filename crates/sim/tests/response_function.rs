//! Response functions (window against loss rate, docs/methodology.md §4) of the high-speed stacks,
//! end to end: one flow, random loss p on a path fast enough that the queue stays empty, an
//! ACK per packet (the RFCs' model). The average window is goodput × RTT over the second half
//! of the run. Tolerance ±25 % of the published function, and every stack must lie right of
//! Reno's (a larger window at the same p).

mod common;
use common::*;
use tcpeval_sim::scenario::Flow;
use tcpeval_sim::scenario::LossSpec;

const RTT_MS: u64 = 100;

fn cc_flow(cc: &str, params: &[(&str, serde_json::Value)], rtt_ms: u64) -> Flow {
    let mut f = flow(cc, rtt_ms);
    for (key, value) in params {
        f.cc.insert((*key).into(), value.clone());
    }
    f
}

/// The average window of one flow under random loss `p`, in packets, over the last three
/// quarters of a run of 400 loss events (fewer below p = 1e-4, to stay under 20 million
/// packets, about 3 s); `expected` sets the run length.
fn window_under_loss(cc: &str, params: &[(&str, serde_json::Value)], p: f64, expected: f64) -> f64 {
    let mut f = cc_flow(cc, params, RTT_MS);
    f.delayed_ack = false;
    let rtt_s = RTT_MS as f64 / 1e3;
    let packets = (400.0 / p).min(2e7);
    let duration_s = (packets / expected * rtt_s) as u64;
    let mut s = scenario(10_000 * MBPS, 1_000_000, duration_s, vec![f]);
    s.links[0].loss = LossSpec::Bernoulli { p };
    s.sample_interval_ns = SEC;
    let out = run_checked(&s);
    assert_eq!(out.summary.bottleneck.queue_drops, 0, "only random loss");
    packets_per_s(&out, 0, duration_s as f64 / 4.0) * rtt_s
}

fn check(cc: &str, params: &[(&str, serde_json::Value)], p: f64, published: f64) {
    let w = window_under_loss(cc, params, p, published);
    let reno = 1.2 / p.sqrt();
    println!(
        "{cc} p={p:e}: window {w:.0}, published {published:.0} ({:.2}), Reno {reno:.0}",
        w / published
    );
    assert!(
        (w / published - 1.0).abs() <= 0.25,
        "{cc} at {p}: {w} vs {published}"
    );
    assert!(w > reno, "{cc} at {p}: {w} not right of Reno's {reno}");
}

/// RFC 3649 §5 / Table 3: W = 0.12/p^0.835 — 263 at 1e-4, 1795 at 1e-5.
#[test]
fn highspeed_follows_rfc_3649() {
    for p in [1e-4, 1e-5] {
        check("highspeed", &[], p, 0.12 / p.powf(0.835));
    }
}

/// MIMD(0.01, 0.125): about a/(b·p) = 0.08/p (docs/methodology.md §4) — 800 at 1e-4.
#[test]
fn scalable_window_is_inverse_in_the_loss_rate() {
    for p in [1e-4, 1e-5] {
        check("scalable", &[], p, 0.08 / p);
    }
}

/// RFC 9438 §5 / Table 1 (RTT 100 ms): 1.054·(RTT/p)^0.75 — 187 at 1e-4, 1054 at 1e-5. The
/// table assumes periodic loss (the unit tests in cc/cubic.rs match it to 1 %); random loss
/// lifts CUBIC's average by 10–20 % (20–30 % without fast convergence), the AIMD stacks' by
/// under 5 %.
#[test]
fn cubic_follows_rfc_9438() {
    for p in [1e-4, 1e-5] {
        check(
            "cubic",
            &[],
            p,
            1.054 * (RTT_MS as f64 / 1e3 / p).powf(0.75),
        );
    }
}

/// AIMD(a, b) averages sqrt(a(2 − b)/(2bp)) (RFC 9438 §4.3 eq. 3): GridDT's AIMD(4, 0.25) at
/// 1e-4 holds 374 packets, Reno's 122.
#[test]
fn aimd_follows_its_response_function() {
    let params = [("a", 4.0.into()), ("b", 0.25.into())];
    let p = 1e-4;
    check("aimd", &params, p, (4.0f64 * 1.75 / (0.5 * p)).sqrt());
}
