//! Ten flows of one stack start together on 1 Gb/s, 100 ms, a buffer of one BDP: their slow
//! starts overshoot together and lose thousands of packets in the same round trip, and many
//! retransmissions are lost again in the queue the others keep full. RFC 5681 §4.3 lowers the
//! window once more for every lost retransmission; without that, stacks whose reduced windows
//! still overfill the path (HighSpeed, Scalable, BIC) stay in recovery for the whole run,
//! re-sending into a full queue with the link busy and almost nothing delivered.

mod common;
use common::*;
use tcpeval_sim::cc::registry::ALGORITHMS;

#[test]
fn ten_flows_of_each_stack_deliver_what_the_link_carries() {
    let rate = 1000 * MBPS;
    let s = |cc: &str| {
        let mut s = scenario(rate, bdp_pkts(rate, 100), 30, vec![flow(cc, 100); 10]);
        s.sample_interval_ns = SEC;
        s
    };
    // Payload share of a full-size packet on the wire.
    let payload_mbps = 1000.0 * 1448.0 / 1500.0;
    for a in ALGORITHMS {
        let out = run_checked(&s(a.name));
        let goodput: f64 = out.summary.flows.iter().map(|f| f.goodput_mbps).sum();
        println!("{:<10} {goodput:>7.1} Mb/s", a.name);
        assert!(
            goodput > 0.85 * payload_mbps,
            "{}: ten flows deliver {goodput:.1} Mb/s of {payload_mbps:.0}",
            a.name
        );
    }
}
