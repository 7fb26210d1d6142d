//! The network and host conditions of the studies, each shown by its effect on a run.

mod common;
use common::*;
use tcpeval_sim::net::queue::{CodelParams, RedParams};
use tcpeval_sim::net::topology;
use tcpeval_sim::packet::Kind;
use tcpeval_sim::scenario::{AqmSpec, Exchange, LossSpec, PolicerSpec, Scenario, SourceSpec};

const GBPS: u64 = 1000 * MBPS;

fn cbr(rate_bps: u64, route: &str) -> SourceSpec {
    SourceSpec::Cbr {
        route: vec![route.into()],
        reverse: false,
        rate_bps,
        packet_bytes: 1500,
        start_ns: 0,
        stop_ns: None,
    }
}

/// Payload megabits per second carried by `wire_mbps` of full-sized packets.
fn payload_mbps(wire_mbps: f64) -> f64 {
    wire_mbps * 1448.0 / 1500.0
}

#[test]
fn a_200_mbps_cbr_background_leaves_reno_about_800() {
    let mut s = scenario(GBPS, bdp_pkts(GBPS, 50), 30, vec![flow("reno", 50)]);
    s.sources = vec![cbr(200 * MBPS, "bottleneck")];
    let out = run_checked(&s);
    let (reno, udp) = (&out.summary.flows[0], &out.summary.sources[0]);
    println!(
        "reno {:.1} Mb/s, cbr {:.1} Mb/s",
        reno.goodput_mbps, udp.goodput_mbps
    );
    let room = payload_mbps(800.0);
    assert!(
        reno.goodput_mbps > 0.9 * room && reno.goodput_mbps < 1.01 * room,
        "{reno:?}"
    );
    assert!((udp.goodput_mbps / 200.0 - 1.0).abs() < 0.03, "{udp:?}");
}

#[test]
fn gilbert_elliott_loss_averages_p_over_p_plus_r_of_the_bad_state_loss() {
    let mut s = scenario(GBPS, 10_000, 20, vec![flow("reno", 10)]);
    s.flows[0].window_pkts = Some(10); // a trickle: the source's loss is the only loss that matters
    s.sources = vec![cbr(100 * MBPS, "bottleneck")];
    s.links[0].loss = LossSpec::GilbertElliott {
        p: 0.01,
        r: 0.2,
        loss_good: 0.0,
        loss_bad: 0.5,
    };
    let out = run_checked(&s);
    let src = &out.summary.sources[0];
    let measured = src.packets_dropped as f64 / src.packets_sent as f64;
    let expected = 0.01 / (0.01 + 0.2) * 0.5;
    println!("Gilbert-Elliott loss {measured:.4}, expected {expected:.4}");
    assert!((measured / expected - 1.0).abs() < 0.1);
}

/// A 100 Mb/s link policed at 20 Mb/s with a 64 KB bucket, 40 ms RTT, 30 s.
fn policed(flows: Vec<tcpeval_sim::scenario::Flow>) -> Scenario {
    let mut s = scenario(100 * MBPS, bdp_pkts(100 * MBPS, 40), 30, flows);
    s.links[0].policer = Some(PolicerSpec {
        rate_bps: 20 * MBPS,
        burst_bytes: 64_000,
    });
    s
}

#[test]
fn a_cbr_source_above_the_policer_rate_gets_the_policer_rate() {
    // 50 Mb/s offered: the policer passes its rate plus one bucket, the queue drops nothing.
    let mut s = policed(vec![]);
    s.sources = vec![cbr(50 * MBPS, "bottleneck")];
    let out = run_checked(&s);
    let (src, link) = (&out.summary.sources[0], &out.summary.bottleneck);
    println!("cbr {:.3} Mb/s, {link:?}", src.goodput_mbps);
    let expected_mbps = 20.0 + 64_000.0 * 8.0 / 30.0 / 1e6;
    assert!(
        (src.goodput_mbps / expected_mbps - 1.0).abs() < 0.001,
        "{src:?}"
    );
    assert_eq!(link.policer_drops, src.packets_dropped);
    assert_eq!((link.queue_drops, link.drops), (0, link.policer_drops));
}

#[test]
fn a_reno_flow_stays_below_the_policer_rate_and_runs_alike_twice() {
    let s = policed(vec![flow("reno", 40)]);
    let out = run_checked(&s);
    let (reno, link) = (&out.summary.flows[0], &out.summary.bottleneck);
    println!(
        "reno {:.2} Mb/s, {} retransmits, {link:?}",
        reno.goodput_mbps, reno.retransmits
    );
    // Each loss halves the window, so the flow spends time below the rate: it never reaches
    // the payload share of 20 Mb/s, and the queue, 5x faster, never fills.
    assert!(reno.goodput_mbps < payload_mbps(20.0), "{reno:?}");
    assert!(reno.goodput_mbps > 0.5 * payload_mbps(20.0), "{reno:?}");
    assert!(link.policer_drops > 0 && link.queue_drops == 0, "{link:?}");
    let again = run_checked(&s);
    assert_eq!(again.summary.flows, out.summary.flows);
    assert_eq!(again.summary.links, out.summary.links);
}

/// RED keeps an aggregate's average queue between its thresholds, where drop-tail would fill
/// the buffer (Floyd & Jacobson, ToN 1993). RED settles where its drop probability is the one
/// the flows need (about 0.003 for 32 Reno flows here), so max_p must put that inside the band:
/// with 0.1 the average sits at min_th and RED's slow average makes the queue swing below it,
/// costing utilisation, as the RED tuning literature reports.
#[test]
fn red_keeps_the_mean_queue_between_its_thresholds() {
    let mut s = scenario(100 * MBPS, 500, 120, vec![flow("reno", 40); 32]);
    s.links[0].aqm = AqmSpec::Red(RedParams {
        min_th_pkts: 30.0,
        max_th_pkts: 90.0,
        max_p: 0.01,
        weight: 0.002,
        gentle: true,
        ecn: false,
        harddrop: false,
    });
    let out = run_checked(&s);
    let b = &out.summary.bottleneck;
    println!("{b:?}");
    assert!(
        (30.0..90.0).contains(&b.mean_queue_pkts),
        "mean queue {}",
        b.mean_queue_pkts
    );
    assert_eq!(b.queue_drops, 0, "RED, not the 500-packet limit, drops");
    assert!(b.utilization > 0.95);
}

#[test]
fn codel_holds_the_standing_delay_near_its_target() {
    let mut s = scenario(100 * MBPS, 2000, 60, vec![flow("cubic", 40); 2]);
    s.links[0].aqm = AqmSpec::Codel(CodelParams::dropping(5 * MS, 100 * MS));
    let out = run_checked(&s);
    let b = &out.summary.bottleneck;
    let delay_ms = b.mean_queue_pkts * 1500.0 * 8.0 / 100e6 * 1e3;
    println!("{b:?}: mean queueing delay {delay_ms:.1} ms");
    assert!(delay_ms < 15.0, "a 2000-packet buffer would allow 240 ms");
    assert!(b.utilization > 0.85);
}

#[test]
fn in_a_parking_lot_the_flow_crossing_every_link_gets_least() {
    let mut s = scenario(100 * MBPS, 100, 120, vec![]);
    s.links = vec![
        link("l1", 100 * MBPS, 100),
        link("l2", 100 * MBPS, 100),
        link("l3", 100 * MBPS, 100),
    ];
    let mut long = flow("reno", 40);
    long.route = vec!["l1".into(), "l2".into(), "l3".into()];
    s.flows = vec![long];
    for l in ["l1", "l2", "l3"] {
        let mut short = flow("reno", 40);
        short.route = vec![l.into()];
        s.flows.push(short);
    }
    let out = run_checked(&s);
    let g: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    println!("goodputs {g:?}");
    assert!(g[1..].iter().all(|&short| short > 1.3 * g[0]), "{g:?}");
    assert!(out
        .summary
        .links
        .iter()
        .take(3)
        .all(|l| l.utilization > 0.9));
}

#[test]
fn the_larger_mtu_takes_more_bandwidth() {
    let mut big = flow("reno", 60);
    big.mss_bytes = 9000 - 52;
    let mut small = flow("reno", 60);
    small.mss_bytes = 3000 - 52;
    let s = scenario(GBPS, 2000, 120, vec![big, small]);
    let out = run_checked(&s);
    let (b, sm) = (&out.summary.flows[0], &out.summary.flows[1]);
    println!(
        "9000 B: {:.0} Mb/s, 3000 B: {:.0} Mb/s",
        b.goodput_mbps, sm.goodput_mbps
    );
    assert!(b.goodput_mbps > 1.5 * sm.goodput_mbps);
}

#[test]
fn a_kernel_delay_between_packets_caps_the_rate() {
    // 20 µs between 1448-byte segments: at most 579 Mb/s on a 1 Gb/s path.
    let mut f = flow("reno", 20);
    f.pacing_gap_ns = Some(20_000);
    f.window_pkts = Some(4000);
    let paced = run_checked(&scenario(GBPS, 10_000, 20, vec![f]))
        .summary
        .flows[0]
        .goodput_mbps;
    let cap = 1448.0 * 8.0 / 20e-6 / 1e6;
    println!("paced {paced:.0} Mb/s, cap {cap:.0}");
    assert!(paced <= cap && paced > 0.9 * cap);
}

#[test]
fn a_rate_cap_and_a_disk_limit_each_bound_goodput() {
    let mut capped = flow("cubic", 50);
    capped.pacing_rate_bps = Some(300 * MBPS);
    let mut disk = flow("cubic", 50);
    disk.source_rate_bps = Some(200 * MBPS);
    let out = run_checked(&scenario(GBPS, bdp_pkts(GBPS, 50), 30, vec![capped, disk]));
    let g: Vec<f64> = out.summary.flows.iter().map(|f| f.goodput_mbps).collect();
    println!("rate-capped {:.1}, disk-limited {:.1} Mb/s", g[0], g[1]);
    assert!(g[0] <= 300.0 && g[0] > 0.95 * 300.0);
    assert!(g[1] <= 200.0 && g[1] > 0.95 * 200.0);
}

/// Two-way traffic: the forward flow's ACKs queue behind the reverse flow's data, arrive in
/// compressed bursts, and the forward flow loses some throughput (Zhang, Shenker & Clark,
/// SIGCOMM 1991). The path is symmetric, so both directions fare alike.
#[test]
fn reverse_traffic_on_the_ack_path_costs_the_forward_flow_throughput() {
    let alone = run_checked(&scenario(100 * MBPS, 300, 60, vec![flow("reno", 40)]));
    let mut back = flow("reno", 40);
    back.reverse = true;
    let both = run_checked(&scenario(100 * MBPS, 300, 60, vec![flow("reno", 40), back]));
    let (a, f) = (alone.summary.flows[0].goodput_mbps, &both.summary.flows);
    println!(
        "forward alone {a:.1} Mb/s; with reverse traffic {:.1} and {:.1} Mb/s",
        f[0].goodput_mbps, f[1].goodput_mbps
    );
    let reverse = &both.summary.links[1];
    println!("reverse direction: {reverse:?}");
    assert!(f[0].goodput_mbps < 0.97 * a, "waiting ACKs cost throughput");
    assert!(
        reverse.mean_queue_pkts > 20.0,
        "the ACKs wait behind the reverse data"
    );
    assert_eq!(
        f[0].goodput_mbps, f[1].goodput_mbps,
        "a symmetric path treats both directions alike"
    );
    assert_eq!(both.summary.links.len(), 2, "the reverse direction exists");
    assert!(
        both.summary.links[1].utilization > 0.7,
        "{:?}",
        both.summary.links[1]
    );
}

#[test]
fn losing_acks_costs_little_thanks_to_cumulative_acks() {
    let base = run_checked(&scenario(100 * MBPS, 300, 30, vec![flow("reno", 40)]));
    let mut s = scenario(100 * MBPS, 300, 30, vec![flow("reno", 40)]);
    s.links[0].reverse_loss = LossSpec::Bernoulli { p: 0.05 };
    let lossy = run_checked(&s);
    let ack_drops = lossy.summary.links[1].random_drops;
    let (a, b) = (
        base.summary.flows[0].goodput_mbps,
        lossy.summary.flows[0].goodput_mbps,
    );
    println!("goodput {a:.1} without ACK loss, {b:.1} with 5 % ({ack_drops} ACKs lost)");
    assert!(ack_drops > 1000);
    assert!(b > 0.9 * a);
}

#[test]
fn periodic_drops_at_the_receiver_follow_mathis_for_periodic_loss() {
    // One loss every N packets is the model Mathis' constant sqrt(3/2) was derived for.
    let mut f = flow("reno", 60);
    f.delayed_ack = false;
    f.drop_every = Some(2000);
    let out = run_checked(&scenario(GBPS, 100_000, 300, vec![f]));
    let fl = &out.summary.flows[0];
    let mathis = 1448.0 * 8.0 / 0.06 * 1.5f64.sqrt() * 2000f64.sqrt() / 1e6;
    println!(
        "goodput {:.1} Mb/s, Mathis {mathis:.1}, receiver drops {}",
        fl.goodput_mbps, fl.receiver_drops
    );
    assert!((fl.goodput_mbps / mathis - 1.0).abs() < 0.2);
    assert_eq!(
        fl.receiver_drops,
        (out.summary.sim.packets_delivered + fl.receiver_drops) / 2000
    );
}

#[test]
fn request_response_latency_starts_slow_start_bound() {
    // A 64 B request, then a 1 MB response (691 segments): slow start needs seven rounds from
    // an initial window of 10 the first time; later exchanges find the window open.
    let mut request = flow("reno", 100);
    request.reverse = true;
    let response = flow("reno", 100);
    let mut s = scenario(GBPS, 10_000, 20, vec![request, response]);
    s.flows.iter_mut().for_each(|f| f.delayed_ack = false);
    s.exchanges = vec![Exchange {
        request_flow: 0,
        response_flow: 1,
        request_bytes: 64,
        response_bytes: 1_000_000,
        think_ns: 0,
        count: 5,
    }];
    let out = run_checked(&s);
    let rtts: Vec<f64> = out.summary.exchanges[0]
        .latencies_s
        .iter()
        .map(|l| l / 0.1)
        .collect();
    println!("latencies in RTTs: {rtts:?}");
    assert_eq!(rtts.len(), 5);
    assert!((6.5..8.0).contains(&rtts[0]), "{rtts:?}");
    assert!(rtts[1..].iter().all(|&r| r < rtts[0] - 2.0), "{rtts:?}");
}

#[test]
fn the_capture_holds_every_packet_that_left_the_link() {
    let mut s = scenario(100 * MBPS, 100, 5, vec![flow("reno", 20)]);
    s.pcap_link = Some("bottleneck".into());
    let out = run_checked(&s);
    let pcap = out.pcap.expect("a capture");
    let records = count_pcap_records(&pcap);
    assert_eq!(records, out.summary.sim.packets_delivered);
}

/// Walk a classic pcap file's records.
fn count_pcap_records(file: &[u8]) -> u64 {
    let mut at = 24;
    let mut n = 0;
    while at + 16 <= file.len() {
        let incl = u32::from_le_bytes(file[at + 8..at + 12].try_into().unwrap()) as usize;
        at += 16 + incl;
        n += 1;
    }
    assert_eq!(at, file.len(), "records end exactly at the end of the file");
    n
}

#[test]
fn a_slow_disk_at_the_receiver_holds_the_sender_to_its_pace() {
    // The receiving application writes to a 150 Mb/s disk from a 2·BDP buffer: the advertised
    // window shrinks as unread data piles up, and the sender follows the disk, not the path.
    let mut f = flow("cubic", 50);
    f.sink_rate_bps = Some(150 * MBPS);
    let out = run_checked(&scenario(GBPS, bdp_pkts(GBPS, 50), 30, vec![f]));
    let steady_mbps = packets_per_s(&out, 0, 10.0) * 1448.0 * 8.0 / 1e6;
    println!("steady goodput {steady_mbps:.1} Mb/s behind a 150 Mb/s disk");
    assert!((steady_mbps / 150.0 - 1.0).abs() < 0.02);
    assert_eq!(
        out.summary.bottleneck.drops, 0,
        "flow control, not loss, holds it back"
    );
}

/// Private paths of the same delay and direction share one delay line (one pending event
/// instead of one per flow), and every flow still sees its own RTT through it.
#[test]
fn flows_of_equal_rtt_share_a_return_line_and_each_keeps_its_rtt() {
    let mut back = flow("reno", 40);
    back.reverse = true;
    let mut flows = vec![flow("reno", 40), flow("reno", 40), flow("reno", 80), back];
    for f in &mut flows {
        // Far below the BDP: at most the windows' bursts queue (60 packets, 0.7 ms), so srtt is
        // the base RTT within a millisecond.
        f.window_pkts = Some(20);
    }
    let s = scenario(GBPS, 1000, 5, flows);
    let topo = topology::build(&s);
    let return_line = |f: u32| *topo.routes.path(Kind::Ack, f, 0).last().unwrap();
    assert_eq!(return_line(0), return_line(1), "equal RTTs share");
    assert_ne!(return_line(0), return_line(2), "another RTT has its own");
    assert_ne!(return_line(0), return_line(3), "so has the other direction");
    let out = run_checked(&s);
    let c = &out.flows;
    for (f, rtt_ms) in [(0, 40.0), (1, 40.0), (2, 80.0), (3, 40.0)] {
        let last = (0..c.t_s.len()).rfind(|&i| c.flow[i] == f).unwrap();
        let srtt_ms = c.srtt_ms[last];
        println!("flow {f}: srtt {srtt_ms:.3} ms for a base RTT of {rtt_ms} ms");
        assert!((srtt_ms - rtt_ms).abs() < 1.0, "flow {f}: {srtt_ms} ms");
    }
}

/// A flow's one-way delays, links included, summed along each direction of its path.
fn one_way_delays_ms(s: &Scenario, f: u32) -> (u64, u64) {
    let topo = topology::build(s);
    let sum = |kind| -> u64 {
        let path = topo.routes.path(kind, f, 0);
        path.iter()
            .map(|&l| topo.links[l as usize].delay_ns)
            .sum::<u64>()
            / MS
    };
    (sum(Kind::Data), sum(Kind::Ack))
}

/// `forward_delay` puts that much of the RTT on the data direction and the rest on the ACKs',
/// for forward and reverse flows and across a link with its own delay; the RTT stays.
#[test]
fn forward_delay_splits_the_rtt_as_given_and_keeps_it() {
    let mut forward = flow("reno", 40);
    forward.forward_delay_ns = Some(30 * MS);
    let mut back = forward.clone();
    back.reverse = true;
    let mut s = scenario(GBPS, 1000, 3, vec![forward, back, flow("reno", 40)]);
    s.links[0].delay_ns = 5 * MS;
    assert_eq!(one_way_delays_ms(&s, 0), (30, 10));
    assert_eq!(
        one_way_delays_ms(&s, 1),
        (30, 10),
        "the reverse flow's data direction"
    );
    assert_eq!(
        one_way_delays_ms(&s, 2),
        (5, 35),
        "none given: all on the ACK side"
    );
    for f in &mut s.flows {
        f.window_pkts = Some(20); // no queue: srtt is the base RTT within a millisecond
    }
    let out = run_checked(&s);
    let c = &out.flows;
    for f in 0..3 {
        let last = (0..c.t_s.len()).rfind(|&i| c.flow[i] == f).unwrap();
        assert!(
            (c.srtt_ms[last] - 40.0).abs() < 1.0,
            "flow {f}: {}",
            c.srtt_ms[last]
        );
    }
}

#[test]
fn a_forward_delay_beyond_what_the_route_leaves_is_refused_by_name() {
    let mut f = flow("reno", 40);
    f.forward_delay_ns = Some(38 * MS);
    let mut s = scenario(GBPS, 1000, 1, vec![f]);
    s.links[0].delay_ns = 5 * MS; // the ACKs would get 2 ms of the link's 5
    let e = tcpeval_sim::run(s).unwrap_err().to_string();
    assert!(
        e.contains("forward_delay") && e.contains("38000000ns"),
        "{e}"
    );
}

/// A path-MTU black hole below the flow's packets (1448 + 52 bytes) swallows every data
/// packet: the sender, which has no path-MTU probing here, delivers nothing, and every loss
/// is counted as the black hole's; one at the packets' size lets all through.
#[test]
fn a_black_hole_below_the_packet_size_delivers_nothing_and_at_it_everything() {
    let mut s = scenario(100 * MBPS, 100, 3, vec![flow("cubic", 20)]);
    s.links[0].mtu_black_hole_bytes = Some(1400);
    let out = run_checked(&s);
    let (f, link) = (&out.summary.flows[0], &out.summary.bottleneck);
    println!("{f:?}\n{link:?}");
    assert_eq!(f.bytes_delivered, 0);
    assert!(f.timeouts > 0, "{f:?}");
    assert!(
        link.black_hole_drops > 0 && link.drops == link.black_hole_drops,
        "{link:?}"
    );
    s.links[0].mtu_black_hole_bytes = Some(1500);
    let out = run_checked(&s);
    assert_eq!(out.summary.bottleneck.black_hole_drops, 0);
    assert!(
        out.summary.flows[0].goodput_mbps > 50.0,
        "{:?}",
        out.summary.flows[0]
    );
}
