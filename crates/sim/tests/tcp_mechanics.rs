//! The TCP machinery on its own: window limits, finite transfers, start and stop, recovery
//! with and without SACK, and the retransmission timeout.

mod common;
use common::*;
use tcpeval_sim::summary::FlowSummary;
use tcpeval_sim::tcp::host::Recovery;

fn one_flow(rate_bps: u64, f: tcpeval_sim::scenario::Flow, duration_s: u64) -> FlowSummary {
    let s = scenario(rate_bps, 10_000, duration_s, vec![f]);
    run_checked(&s).summary.flows[0].clone()
}

#[test]
fn a_socket_buffer_window_caps_goodput_at_window_per_rtt() {
    let mut f = flow("reno", 100);
    f.window_pkts = Some(20);
    let got = one_flow(1000 * MBPS, f, 30);
    let expected_mbps = 20.0 * 1448.0 * 8.0 / 0.1 / 1e6;
    // Slow start reaches 20 packets in the first round trips: within 2% over 30 s.
    assert!(
        (got.goodput_mbps / expected_mbps - 1.0).abs() < 0.02,
        "{got:?}"
    );
    assert_eq!(got.retransmits, 0);
}

#[test]
fn a_short_transfer_completes_after_log2_slow_start_rounds() {
    // 1 MB = 691 segments; from 10, slow start sends 10, 20, 40, 80, 160, 320, then the last
    // 61: the sender has the last ACK after 7 round trips.
    let mut f = flow("reno", 100);
    f.size_bytes = Some(1_000_000);
    f.delayed_ack = false;
    let got = one_flow(1000 * MBPS, f, 5);
    let rtts = got.completion_s.expect("completes") / 0.1;
    assert!((7.0..7.2).contains(&rtts), "{rtts} round trips");
    assert_eq!(got.bytes_delivered, 1_000_000);
    assert!((got.end_s - got.completion_s.unwrap()).abs() < 1e-9);
}

#[test]
fn a_flow_is_active_only_between_start_and_stop() {
    let rate = 100 * MBPS;
    let mut late = flow("reno", 50);
    late.start_ns = 10 * SEC;
    late.stop_ns = Some(20 * SEC);
    let s = scenario(rate, bdp_pkts(rate, 50), 30, vec![flow("reno", 50), late]);
    let out = run_checked(&s);
    let f = &out.summary.flows[1];
    assert_eq!((f.start_s, f.end_s), (10.0, 20.0));
    let c = &out.flows;
    let rows: Vec<usize> = (0..c.t_s.len()).filter(|&i| c.flow[i] == 1).collect();
    let (first, last) = (rows[0], *rows.last().unwrap());
    // Sampled from its start until what was in flight at the stop has arrived, no longer.
    assert!((c.t_s[first] - 10.0).abs() < 1e-6, "{}", c.t_s[first]);
    assert!((20.0..21.0).contains(&c.t_s[last]), "{}", c.t_s[last]);
    assert!(c.delivered_bytes[first] < 20 * 1448);
    // After the stop only what was in flight arrives: less than one window.
    assert!(c.delivered_bytes[last] - f.bytes_delivered < 2 * bdp_pkts(rate, 50) * 1448);
    // The first flow takes the link back.
    assert!(
        out.summary.flows[0].goodput_mbps > 0.6 * 100.0,
        "{:?}",
        out.summary.flows[0]
    );
}

/// A window-limited transfer (100 packets outstanding at most, 100 per 50 ms round trip)
/// that loses six consecutive packets of one window.
fn burst_loss_transfer(sack: bool) -> FlowSummary {
    let mut f = flow("reno", 50);
    f.sack = sack;
    f.delayed_ack = false;
    f.window_pkts = Some(100);
    f.size_bytes = Some(1000 * 1448);
    f.drop_at_ns = vec![300 * MS; 6];
    one_flow(100 * MBPS, f, 20)
}

#[test]
fn sack_repairs_a_burst_of_losses_in_one_round_trip_newreno_in_one_per_round_trip() {
    let sack = burst_loss_transfer(true);
    let newreno = burst_loss_transfer(false);
    for f in [&sack, &newreno] {
        assert_eq!(
            (f.retransmits, f.timeouts, f.congestion_events),
            (6, 0, 1),
            "{f:?}"
        );
    }
    // With the window full, the first hole stalls the sender until it is repaired. NewReno
    // repairs one hole per partial ACK (RFC 6582): six round trips. SACK sends the first
    // retransmission at once and the other five once pipe falls below the halved cwnd,
    // half a round trip later (RFC 6675 §5): about 1.5. So about 4.5 round trips apart.
    let extra_rtts = (newreno.completion_s.unwrap() - sack.completion_s.unwrap()) / 0.05;
    println!("NewReno took {extra_rtts:.2} more round trips than SACK");
    assert!(
        (3.5..=5.5).contains(&extra_rtts),
        "NewReno took {extra_rtts} more round trips"
    );
}

/// 20 segments at 100 Mb/s, 100 ms: in the second round each ACK (120 µs apart from
/// 100.12 ms) releases two segments, so 18 and 19 leave with the fifth, at 100.6 ms, and both
/// are lost. No segment follows them, so there are no duplicate ACKs.
fn lose_the_tail(host: Recovery) -> FlowSummary {
    let mut f = on_host(flow("reno", 100), host);
    f.delayed_ack = false;
    f.size_bytes = Some(20 * 1448);
    f.drop_at_ns = vec![100_550_000, 100_550_000];
    one_flow(100 * MBPS, f, 5)
}

#[test]
fn losing_the_tail_of_a_transfer_needs_the_retransmission_timer_without_probes() {
    // Only the RTO (srtt + max(4·rttvar, 200 ms)) can repair the tail.
    let got = lose_the_tail(Recovery::RFC);
    assert_eq!((got.timeouts, got.retransmits), (1, 2), "{got:?}");
    // Last ACK at ~0.2 s, RTO 0.3–0.4 s later, then two single-packet rounds.
    let done = got.completion_s.unwrap();
    assert!((0.7..0.85).contains(&done), "{done}");
}

#[test]
fn a_tail_loss_probe_repairs_a_lost_tail_before_the_retransmission_timer() {
    // RFC 8985 §7: 2·SRTT after the last ACK (~0.4 s) segment 19 goes out again; its SACK
    // (~0.5 s) shows 18 lost to RACK, and fast recovery resends it: done a round trip later,
    // with no timeout and no slow start from one segment.
    let got = lose_the_tail(Recovery::LINUX);
    let done = got.completion_s.unwrap();
    println!("tail repaired by a probe at {done:.3} s");
    assert_eq!((got.timeouts, got.retransmits), (0, 2), "{got:?}");
    assert!((0.55..0.65).contains(&done), "{done}");
}

/// One BBR flow at 100 Mb/s, 100 ms, with 1% of packets lost at random: BBR v1 keeps its rate
/// through such loss, so with a packet lost every round trip a hole is nearly always open and
/// the receiver's ACK policy while one is open decides the ACK count.
fn lossy_bbr(sack_compression: bool) -> FlowSummary {
    let mut f = flow("bbr", 100);
    f.sack_compression = sack_compression;
    let mut s = scenario(100 * MBPS, bdp_pkts(100 * MBPS, 100), 30, vec![f]);
    s.links[0].loss = tcpeval_sim::scenario::LossSpec::Bernoulli { p: 0.01 };
    run_checked(&s).summary.flows[0].clone()
}

#[test]
fn sack_compression_cuts_the_acks_of_a_lossy_transfer_but_not_its_goodput() {
    let every_segment = lossy_bbr(false);
    let compressed = lossy_bbr(true);
    let acks_per_segment = |f: &FlowSummary| f.acks_sent as f64 / f.packets_sent as f64;
    println!(
        "ACKs per segment: {:.3} without compression, {:.3} with; goodput {:.1} vs {:.1} Mb/s",
        acks_per_segment(&every_segment),
        acks_per_segment(&compressed),
        every_segment.goodput_mbps,
        compressed.goodput_mbps
    );
    // Without compression an open hole makes every segment draw an ACK; with it, one ACK per
    // millisecond covers about 8 segments at 100 Mb/s, plus three at once per repaired hole.
    assert!(acks_per_segment(&every_segment) > 0.9, "{every_segment:?}");
    assert!(acks_per_segment(&compressed) < 0.3, "{compressed:?}");
    // The first three duplicate ACKs still go at once: loss detection and goodput unchanged.
    let ratio = compressed.goodput_mbps / every_segment.goodput_mbps;
    assert!((0.95..1.05).contains(&ratio), "goodput ratio {ratio}");
    assert_eq!(compressed.timeouts, 0, "{compressed:?}");
}

/// Two Reno flows at 250 Mb/s, 42 ms, 20% BDP: a second of losses whose repairs land within one
/// compressed ACK. Three SACK blocks cannot describe them all; unless the receiver sends the
/// held ACK before a block drops out, the sender takes repaired holes for lost retransmissions
/// and sends them again (before the fix: 898 retransmissions for 534 drops).
#[test]
fn compressed_sacks_never_hide_a_repair_so_every_retransmission_answers_a_drop() {
    let rate_bps = 250 * MBPS;
    let flows = vec![flow("reno", 42), flow("reno", 42)];
    let s = scenario(rate_bps, bdp_pkts(rate_bps, 42) / 5, 60, flows);
    let out = run_checked(&s);
    let retransmits: u64 = out.summary.flows.iter().map(|f| f.retransmits).sum();
    let timeouts: u64 = out.summary.flows.iter().map(|f| f.timeouts).sum();
    let drops = out.summary.sim.packets_dropped;
    println!("{retransmits} retransmissions, {drops} drops, {timeouts} timeouts");
    assert!(drops > 100, "the case needs losses: {drops}");
    assert_eq!(timeouts, 0);
    assert!(
        retransmits <= drops,
        "{retransmits} retransmissions for {drops} drops"
    );
}
