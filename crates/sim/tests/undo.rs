//! Spurious reductions on a path that loses nothing: a burst of datagrams at a hundred times
//! the link's rate queues 300 ms of traffic at once ahead of a flow whose window fits its path,
//! and its ACKs stop for longer than two SRTTs. The tail loss probe resends the last segment;
//! the original and the probe both arrive, and the receiver reports the probe as a duplicate
//! (D-SACK, RFC 2883). The Linux host settles the probe by it (RFC 8985 §7.4, Linux
//! `tcp_process_tlp_ack`): nothing was lost, so nothing is reduced, and nothing undone (before
//! that rule the probe's retransmission started a recovery that the D-SACK undid, RFC 3708).
//! Without D-SACK the probe looks like a repair, and the window is halved. (The ACKs never stop for an RTO here, even
//! behind 600 ms of burst: F-RTO and Eifel are tested on the sender alone,
//! `tcp/sender/tests.rs`.)

mod common;
use common::*;
use tcpeval_sim::scenario::SourceSpec;
use tcpeval_sim::tcp::host::{Recovery, RtoInRecovery};
use tcpeval_sim::Output;

const RATE_BPS: u64 = 10 * MBPS;
const RTT_MS: u64 = 40;
const BURST_AT_NS: u64 = 5 * SEC;

fn run_on(recovery: Recovery) -> Output {
    let mut f = on_host(flow("reno", RTT_MS), recovery);
    f.window_pkts = Some(bdp_pkts(RATE_BPS, RTT_MS));
    let mut s = scenario(RATE_BPS, 1000, 10, vec![f]);
    s.sources.push(SourceSpec::Cbr {
        route: vec!["bottleneck".into()],
        reverse: false,
        rate_bps: 100 * RATE_BPS,
        packet_bytes: 1500,
        start_ns: BURST_AT_NS,
        stop_ns: Some(BURST_AT_NS + 3 * MS),
    });
    let out = run_checked(&s);
    assert_eq!(out.summary.bottleneck.queue_drops, 0, "nothing is lost");
    out
}

/// Goodput, and cwnd and ssthresh half a second after the burst.
fn figures(name: &str, out: &Output) -> (f64, f64, f64) {
    let f = &out.summary.flows[0];
    let after_s = (BURST_AT_NS / SEC) as f64 + 0.5;
    let i = out.flows.t_s.iter().position(|&t| t >= after_s).unwrap();
    let (cwnd, ssthresh) = (out.flows.cwnd_pkts[i], out.flows.ssthresh_pkts[i]);
    println!(
        "{name}: goodput {:.3} Mb/s, timeouts {}, retransmits {}, cwnd {cwnd:.1} ssthresh \
         {ssthresh:.1} at {after_s} s",
        f.goodput_mbps, f.timeouts, f.retransmits,
    );
    (f.goodput_mbps, cwnd, ssthresh)
}

#[test]
fn a_needless_tail_loss_probe_reduces_nothing_once_its_d_sack_says_so() {
    let (linux, _, ssthresh) = figures("linux", &run_on(Recovery::LINUX));
    assert_eq!(ssthresh, f64::INFINITY, "no reduction");
    // Without D-SACK (no undo) the sender cannot tell: the duplicate's ACK also acknowledges
    // the original, whose ACK the receiver was delaying, so it is no mere duplicate ACK, and
    // the next ACK beyond the probe reduces the window as for a repaired loss, as Linux does
    // with `tcp_dsack` off.
    let without_undo = Recovery {
        undo: false,
        rto_in_recovery: RtoInRecovery::Reduce,
        ..Recovery::LINUX
    };
    let out = run_on(without_undo);
    let (reduced, _, ssthresh) = figures("no undo", &out);
    assert!(ssthresh < 20.0, "the window was halved: {ssthresh}");
    assert_eq!(out.summary.flows[0].congestion_events, 1);
    assert!(linux > reduced);
}
