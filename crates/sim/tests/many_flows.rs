//! Ten flows of one stack start together on 1 Gb/s, 100 ms, a buffer of one BDP: their slow
//! starts overshoot together and lose thousands of packets in the same round trip, and many
//! retransmissions are lost again in the queue the others keep full. Stacks whose reduced
//! windows still overfill the path (HighSpeed, Scalable, BIC) then stay in recovery, re-sending
//! into a full queue with the link busy and almost nothing delivered, unless the host brings
//! the flight down: the textbook sender (`rfc`) by lowering the window again for every lost
//! retransmission (RFC 5681 §4.3), Linux by PRR (RFC 9937), which holds the flight to the new
//! window while it resends, and Linux 2.6 by rate halving, which does the same more slowly.

mod common;
use common::*;
use tcpeval_sim::cc::registry::ALGORITHMS;
use tcpeval_sim::scenario::{LossSpec, SourceSpec};
use tcpeval_sim::sim::Simulation;
use tcpeval_sim::tcp::host::{
    LossDetection, LostRetransmission, Recovery, RtoInRecovery, WindowReduction,
};
use tcpeval_sim::Progress;

const LINUX_2_6: Recovery = Recovery {
    window_reduction: WindowReduction::RateHalving,
    loss_detection: LossDetection::Dupthresh,
    lost_retransmission: LostRetransmission::Resend,
    tail_loss_probe: false,
    undo: true,
    timestamps: true,
    rto_in_recovery: RtoInRecovery::KeepSsthresh,
};

#[test]
fn ten_flows_of_each_stack_deliver_what_the_link_carries_on_every_host() {
    let rate = 1000 * MBPS;
    let s = |cc: &str, host: Recovery| {
        let flows = vec![on_host(flow(cc, 100), host); 10];
        let mut s = scenario(rate, bdp_pkts(rate, 100), 30, flows);
        s.sample_interval_ns = SEC;
        s
    };
    // Payload share of a full-size packet on the wire.
    let payload_mbps = 1000.0 * 1448.0 / 1500.0;
    for (name, host) in [
        ("rfc", Recovery::RFC),
        ("linux-2.6", LINUX_2_6),
        ("linux", Recovery::LINUX),
    ] {
        for a in ALGORITHMS {
            let out = run_checked(&s(a.name, host));
            let goodput: f64 = out.summary.flows.iter().map(|f| f.goodput_mbps).sum();
            println!("{name:<10} {:<10} {goodput:>7.1} Mb/s", a.name);
            assert!(
                goodput > 0.85 * payload_mbps,
                "{name}: ten {} flows deliver {goodput:.1} Mb/s of {payload_mbps:.0}",
                a.name
            );
        }
    }
}

/// From about 700 flows the simulator fetches flow state ahead (a hint to the CPU) and queues
/// delayed-ACK deadlines in a FIFO of their own: the run is the same either way, here with
/// losses, recoveries, timeouts, background UDP on the same link, and ACKs that share the
/// data's link in the other direction.
#[test]
fn the_many_flows_mode_changes_no_output() {
    let rate = 100 * MBPS;
    let stacks = ["reno", "cubic", "bbr"];
    let flows = (0..60)
        .map(|i| flow(stacks[i % 3], 20 + i as u64))
        .collect();
    let mut s = scenario(rate, bdp_pkts(rate, 40) / 4, 5, flows);
    s.links[0].loss = LossSpec::Bernoulli { p: 1e-3 };
    s.links[0].reverse_loss = LossSpec::Bernoulli { p: 1e-3 };
    s.sources.push(SourceSpec::Cbr {
        route: vec!["bottleneck".into()],
        reverse: false,
        rate_bps: 10 * MBPS,
        packet_bytes: 1500,
        start_ns: 0,
        stop_ns: None,
    });
    let run = |many: bool| {
        let mut out = Simulation::new(s.clone())
            .expect("valid scenario")
            .as_many_flows(many)
            .run(&Progress::default())
            .expect("runs");
        out.summary.sim.wall_seconds = 0.0;
        out
    };
    let (with, without) = (run(true), run(false));
    assert!(
        with.summary.sim.packets_dropped > 1000,
        "losses and recoveries"
    );
    assert_eq!(with, without);
}
