//! Conditions that change during a run: a link's rate, a flow's route, reordering and a
//! total outage, each shown by its effect on a flow.

mod common;
use common::*;
use tcpeval_sim::scenario::{RateChange, ReorderSpec, RouteChange};
use tcpeval_sim::tcp::host::Recovery;
use tcpeval_sim::Output;

/// Payload bytes per second of `flow` between `from_s` and `to_s`, from its samples.
fn goodput_bps(out: &Output, flow: u32, from_s: f64, to_s: f64) -> f64 {
    let c = &out.flows;
    let at = |t_s: f64| {
        let row = (0..c.t_s.len())
            .find(|&i| c.flow[i] == flow && (c.t_s[i] - t_s).abs() < 1e-9)
            .expect("a sample at that time");
        c.delivered_bytes[row] as f64
    };
    (at(to_s) - at(from_s)) * 8.0 / (to_s - from_s)
}

#[test]
fn the_delivered_rate_follows_a_capacity_step_within_one_rtt() {
    // 100 Mb/s, 20 Mb/s from 5 s, 100 Mb/s again from 10 s; 20 ms RTT. A window of 300
    // packets is above both BDPs (167 and 33 packets) and below BDP + queue, so the queue never
    // empties and never overflows: the flow delivers exactly what the link carries.
    let rtt_ms = 20;
    let mut f = flow("reno", rtt_ms);
    f.window_pkts = Some(300);
    let mut s = scenario(100 * MBPS, 1000, 15, vec![f]);
    s.sample_interval_ns = 10 * MS;
    s.links[0].rate_changes = vec![
        RateChange {
            at_ns: 5 * SEC,
            rate_bps: 20 * MBPS,
        },
        RateChange {
            at_ns: 10 * SEC,
            rate_bps: 100 * MBPS,
        },
    ];
    let out = run_checked(&s);
    let payload = |rate_bps: u64| rate_bps as f64 * 1448.0 / 1500.0;
    let rtt_s = rtt_ms as f64 / 1e3;
    for (step_s, before_bps, after_bps) in
        [(5.0, 100 * MBPS, 20 * MBPS), (10.0, 20 * MBPS, 100 * MBPS)]
    {
        // 2%: over 100 ms a window edge shifts the count by a packet or two (0.6% of 100 ms
        // at 20 Mb/s); a rate that had not changed would be off by a factor of 5.
        let before = goodput_bps(&out, 0, step_s - 0.1, step_s);
        let after = goodput_bps(&out, 0, step_s + rtt_s, step_s + rtt_s + 0.1);
        for (measured, expected) in [(before, payload(before_bps)), (after, payload(after_bps))] {
            assert!(
                (measured / expected - 1.0).abs() < 0.02,
                "step at {step_s} s: {measured} b/s, expected {expected}"
            );
        }
    }
}

/// The flow's smoothed RTT in its sample at `t_s`, in ms.
fn srtt_ms(out: &Output, flow: u32, t_s: f64) -> f64 {
    let c = &out.flows;
    let row = (0..c.t_s.len())
        .find(|&i| c.flow[i] == flow && (c.t_s[i] - t_s).abs() < 1e-9)
        .expect("a sample at that time");
    c.srtt_ms[row]
}

#[test]
fn after_a_route_change_the_measured_rtt_moves_to_the_new_paths() {
    // Link a has 5 ms of delay, link b 25 ms; the flow's 20 ms RTT on a leaves it a private
    // 10 ms, kept on b: 10 + 2 × 25 = 60 ms. A 20-packet window (below both BDPs) keeps the
    // queues empty, so the RTT measured is the path's plus 0.12 ms of transmission.
    let mut a = link("a", 100 * MBPS, 1000);
    a.delay_ns = 5 * MS;
    let mut b = link("b", 100 * MBPS, 1000);
    b.delay_ns = 25 * MS;
    let mut f = flow("reno", 20);
    f.route = vec!["a".into()];
    f.window_pkts = Some(20);
    f.route_changes = vec![RouteChange {
        at_ns: 5 * SEC,
        route: vec!["b".into()],
    }];
    let mut s = scenario(100 * MBPS, 1000, 8, vec![f]);
    s.links = vec![a, b];
    s.sample_interval_ns = 10 * MS;
    let out = run_checked(&s);
    // 1 ms: the estimator's 1/8 gain leaves (7/8)^n of a change after n samples, under 1 ms
    // of the 40 ms step after the 30 ACKs of three new RTTs; srtt never saw 40 ms unmoved.
    assert!((srtt_ms(&out, 0, 4.9) - 20.1).abs() < 1.0);
    assert!((srtt_ms(&out, 0, 5.2) - 60.1).abs() < 1.0);
    // Data already on link a when the route changed arrived over it: nothing was lost.
    assert_eq!(out.summary.sim.packets_dropped, 0);
    assert!(out.summary.links.iter().all(|l| l.tx_bytes > 0));
}

/// One flow of `recovery`'s host through a 50 Mb/s link that holds back 0.5% of its packets
/// 2 ms (8 packets' time: more than DupThresh overtake each), RTT 40 ms, 10 s. A window of
/// 100 packets, below the BDP (167), keeps the queue empty: nothing is ever lost.
fn reordered(recovery: Recovery) -> Output {
    let mut f = on_host(flow("reno", 40), recovery);
    f.window_pkts = Some(100);
    let mut s = scenario(50 * MBPS, 1000, 10, vec![f]);
    s.links[0].reorder = Some(ReorderSpec {
        share: 0.005,
        delay_ns: 2 * MS,
    });
    run_checked(&s)
}

#[test]
fn reordering_without_loss_costs_rack_nothing_and_dupthresh_its_window() {
    let linux = reordered(Recovery::LINUX);
    let rfc = reordered(Recovery::RFC);
    for out in [&linux, &rfc] {
        assert_eq!(out.summary.sim.packets_dropped, 0);
    }
    let [linux, rfc] = [&linux.summary.flows[0], &rfc.summary.flows[0]];
    // The linux host's first hold-back, before it has seen the path reorder, costs one
    // spurious recovery, undone (D-SACK / timestamps); after it RACK waits a quarter of the
    // minimum RTT (10 ms) before taking a hole for lost, and a packet 2 ms late is never taken.
    assert!(linux.congestion_events <= 1, "{linux:?}");
    assert_eq!(linux.undos, linux.congestion_events);
    // 100 packets a 40 ms round: 29 Mb/s.
    assert!(linux.goodput_mbps > 25.0, "{linux:?}");
    // DupThresh takes each hold-back for a loss and halves the window, never undone: of the
    // 0.5% of its packets held back, at least half (the rest may fall in a recovery already
    // under way) each cost a reduction.
    let held_back = 0.005 * rfc.packets_sent as f64;
    assert!(rfc.congestion_events as f64 >= 0.5 * held_back, "{rfc:?}");
    assert_eq!(rfc.undos, 0);
    assert!(rfc.goodput_mbps < 0.5 * linux.goodput_mbps);
}

#[test]
fn losing_all_feedback_ends_in_timeouts_backed_off_and_a_loss_window() {
    // The rfc host (no tail loss probe ahead of the timer: RFC 6298 alone) on 10 Mb/s, RTT
    // 20 ms, its ACK path down from 2 s to 4 s. RFC 6298 §5.4–5.6: each timeout resends the
    // first segment and doubles the RTO; RFC 5681 §3.1 (eq. 4): ssthresh = max(FlightSize/2,
    // 2) and cwnd = the loss window, 1 segment.
    let mut s = scenario(
        10 * MBPS,
        bdp_pkts(10 * MBPS, 20),
        6,
        vec![on_host(flow("reno", 20), Recovery::RFC)],
    );
    s.sample_interval_ns = MS;
    s.links[0].reverse_outages_ns = vec![[2 * SEC, 4 * SEC]];
    let out = run_checked(&s);
    let c = &out.flows;
    let at = |t_s: f64| {
        (0..c.t_s.len())
            .find(|&i| (c.t_s[i] - t_s).abs() < 1e-9)
            .unwrap()
    };
    let before = at(2.0);
    // The resends during the outage, each when the retransmission counter steps.
    let resends: Vec<f64> = (before + 1..at(4.0))
        .filter(|&i| c.retransmits[i] > c.retransmits[i - 1])
        .map(|i| c.t_s[i])
        .collect();
    assert!(resends.len() >= 3, "{resends:?}");
    // Each gap twice the one before, to the 1 ms of the samples.
    for gaps in resends.windows(3) {
        let (first, second) = (gaps[1] - gaps[0], gaps[2] - gaps[1]);
        assert!((second - 2.0 * first).abs() <= 0.002 * 2.0, "{resends:?}");
    }
    let first_timeout = at(resends[0]);
    assert_eq!(c.cwnd_pkts[first_timeout], 1.0);
    // The flight when the timer fired: the ACKs already past the link when it went down
    // still opened the window.
    let flight = c.inflight_pkts[first_timeout - 1];
    assert!(
        (c.ssthresh_pkts[first_timeout] - (flight / 2.0).max(2.0)).abs() <= 1.0,
        "flight {flight}, ssthresh {}",
        c.ssthresh_pkts[first_timeout]
    );
    assert!(out.summary.flows[0].timeouts >= 3);
    // Feedback back, the flow recovers: it delivers again in the last second.
    assert!(goodput_bps(&out, 0, 5.0, 6.0) > 1e6);
}
