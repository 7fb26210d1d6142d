//! The sans-IO link over packet traces with a simulated clock.

use tcpeval_netem::queue::{CodelParams, RedParams};
use tcpeval_netem::spec::{AqmSpec, LossSpec, PolicerSpec, ReorderSpec};

use super::*;

const MS: u64 = 1_000_000;
const RATE_BPS: u64 = 100_000_000;
/// 1500 bytes at 100 Mb/s.
const PKT_TIME_NS: u64 = 120_000;

fn direction(limit: Limit, aqm: AqmSpec, loss: LossSpec) -> DirectionConfig {
    let (queue_pkts, queue_bytes) = match limit {
        Limit::Packets(n) => (Some(n), None),
        Limit::Bytes(n) => (None, Some(n)),
    };
    DirectionConfig {
        rate_bps: Some(RATE_BPS),
        queue_pkts,
        queue_bytes,
        aqm,
        loss,
        policer: None,
        reorder: None,
        mtu_black_hole_bytes: None,
        seed: 1,
    }
}

fn droptail(limit_pkts: u64) -> DirectionConfig {
    direction(
        Limit::Packets(limit_pkts),
        AqmSpec::Droptail {},
        LossSpec::None {},
    )
}

/// One arrival of a trace.
#[derive(Clone, Copy)]
struct Arrival {
    at_ns: u64,
    size_bytes: u32,
    endpoint: Option<u16>,
    ecn: Ecn,
}

fn full(at_ns: u64, endpoint: Option<u16>) -> Arrival {
    Arrival {
        at_ns,
        size_bytes: 1500,
        endpoint,
        ecn: Ecn::NotEct,
    }
}

/// Packet `id` of a trace, of flow 0: a TCP data segment.
fn pkt(id: u32, size_bytes: u32, endpoint: Option<u16>, ecn: Ecn) -> Pkt {
    Pkt {
        id,
        size_bytes,
        endpoint,
        ecn,
        flow_key: 0,
        tcp_data: true,
    }
}

/// What left the link, in transmission order.
#[derive(Default)]
struct Run {
    sent: Vec<(InFlight, u64)>,
    dropped: Vec<(u32, Drop)>,
}

/// Drive `link` over `trace` as the I/O loop would: before each arrival, send every frame
/// whose release time has come, at its release time plus `jitter(i)` (a busy loop's
/// lateness). Afterwards drain everything.
fn drive(link: &mut Link, trace: &[Arrival], jitter: impl Fn(u64) -> u64) -> Run {
    let mut run = Run::default();
    let send_due = |link: &mut Link, run: &mut Run, now_ns: u64| {
        link.advance(now_ns);
        while let Some(p) = link.pop_due(now_ns) {
            let actual_ns = p.release_ns + jitter(p.seq);
            link.record_sent(&p, actual_ns);
            run.sent.push((p, actual_ns));
        }
        while let Some(id) = link.pop_freed() {
            run.dropped.push((id, Drop::Aqm));
        }
    };
    for (i, a) in trace.iter().enumerate() {
        // Run time forward in small steps so CoDel's transmitter dequeues on time.
        send_due(link, &mut run, a.at_ns);
        let pkt = pkt(i as u32, a.size_bytes, a.endpoint, a.ecn);
        if let Offer::Dropped(d) = link.offer(a.at_ns, pkt) {
            run.dropped.push((i as u32, d));
        }
    }
    send_due(link, &mut run, u64::MAX / 4);
    run
}

/// Back-to-back arrivals `factor` times faster than the link, for `n` packets.
fn overload(n: u64, gap_ns: u64, endpoints: u16) -> Vec<Arrival> {
    (0..n)
        .map(|i| full(i * gap_ns, Some((i % u64::from(endpoints)) as u16)))
        .collect()
}

#[test]
fn delivered_rate_while_backlogged_equals_the_rate() {
    // 10% overload for 20 000 packets into a 100-packet queue; sends are late by 0–7 µs.
    let mut link = Link::new(&droptail(100), &[20 * MS], 10_000);
    let trace = overload(20_000, PKT_TIME_NS * 10 / 11, 1);
    drive(&mut link, &trace, |seq| (seq * 7919) % 7_000);
    let b = link.stats.backlogged.total();
    assert!(b.pkts > 15_000, "{b:?}");
    let rate = b.bytes as f64 * 8e9 / b.ns as f64;
    assert!((rate / RATE_BPS as f64 - 1.0).abs() < 0.001, "{rate}");
}

#[test]
fn the_rate_check_holds_across_endpoints_of_different_delay() {
    let mut link = Link::new(&droptail(100), &[30 * MS, 5 * MS], 10_000);
    let trace = overload(20_000, PKT_TIME_NS * 10 / 11, 2);
    drive(&mut link, &trace, |seq| (seq * 104_729) % 3_000);
    let b = link.stats.backlogged.total();
    let rate = b.bytes as f64 * 8e9 / b.ns as f64;
    assert!((rate / RATE_BPS as f64 - 1.0).abs() < 0.001, "{rate}");
}

#[test]
fn added_delay_equals_the_endpoints_delay() {
    let mut link = Link::new(&droptail(1000), &[30 * MS, 5 * MS], 10_000);
    // Light load: every packet finds the queue empty.
    let trace = overload(1000, MS, 2);
    let run = drive(&mut link, &trace, |_| 0);
    assert_eq!(run.sent.len(), 1000);
    for (e, delay_ns) in [(0, 30 * MS), (1, 5 * MS)] {
        let s = link.stats.added_delay[e].summary();
        assert_eq!(
            (s.min, s.max, s.count),
            (Some(delay_ns), Some(delay_ns), 500)
        );
    }
    // And each packet's departure is its arrival plus its own transmission time.
    for (p, _) in &run.sent {
        assert_eq!(p.departure_ns, trace[p.id as usize].at_ns + PKT_TIME_NS);
    }
    assert_eq!(link.stats.lateness.summary().max, Some(0));
}

#[test]
fn order_is_kept_per_endpoint_with_two_delays() {
    let mut link = Link::new(&droptail(50), &[40 * MS, 2 * MS], 10_000);
    let trace: Vec<Arrival> = (0..10_000u64)
        .map(|i| full(i * 100_000, Some(((i * 7) % 3 % 2) as u16)))
        .collect();
    let run = drive(&mut link, &trace, |_| 0);
    for e in [0, 1] {
        let ids: Vec<u32> = run
            .sent
            .iter()
            .filter(|(p, _)| p.endpoint == Some(e))
            .map(|(p, _)| p.id)
            .collect();
        assert!(ids.len() > 1000);
        assert!(
            ids.windows(2).all(|w| w[0] < w[1]),
            "endpoint {e} reordered"
        );
    }
    // Transmission order is release order.
    assert!(run
        .sent
        .windows(2)
        .all(|w| w[0].0.release_ns <= w[1].0.release_ns));
}

#[test]
fn bernoulli_loss_rate_is_within_its_binomial_99_percent_interval() {
    let loss = LossSpec::Bernoulli { p: 0.01 };
    let cfg = DirectionConfig {
        rate_bps: None,
        ..direction(Limit::Packets(10), AqmSpec::Droptail {}, loss)
    };
    let mut link = Link::new(&cfg, &[MS], 1000);
    let n = 200_000u64;
    let trace: Vec<Arrival> = (0..n).map(|i| full(i * 1_000, Some(0))).collect();
    let run = drive(&mut link, &trace, |_| 0);
    // Mean 2000, sd sqrt(n·p·(1−p)) = 44.5; 99%: ±2.576 sd = ±114.6.
    let drops = link.stats.counters.random_drops;
    assert!((1886..=2114).contains(&drops), "{drops}");
    assert_eq!(run.sent.len() as u64 + drops, n);
    assert!(run.dropped.iter().all(|&(_, d)| d == Drop::Random));
}

#[test]
fn the_policer_holds_an_overload_to_its_rate_before_the_queue() {
    // 50 Mb/s offered to a 100 Mb/s link policed at 20 Mb/s with a 15 KB bucket, for 2 s:
    // what leaves is the bucket plus 20 Mb/s, to within a packet; the queue never fills.
    let policer = PolicerSpec {
        rate_bps: 20_000_000,
        burst_bytes: 15_000,
    };
    let cfg = DirectionConfig {
        policer: Some(policer),
        ..droptail(100)
    };
    let mut link = Link::new(&cfg, &[MS], 10_000);
    let trace = overload(8_333, 240_000, 1); // a 1500-byte frame every 240 µs
    let run = drive(&mut link, &trace, |_| 0);
    let c = link.stats.counters;
    let sent_bytes = 1500 * run.sent.len() as u64;
    let allowed_bytes = 15_000 + 20_000_000 / 8 * 8_332 * 240_000 / 1_000_000_000;
    assert!(
        allowed_bytes - sent_bytes < 1500,
        "{sent_bytes} vs {allowed_bytes}"
    );
    assert_eq!(
        (c.queue_drops, c.policer_drops),
        (0, 8_333 - run.sent.len() as u64)
    );
    assert!(run.dropped.iter().all(|&(_, d)| d == Drop::Policer));
}

/// Offer each arrival and check the hard limit acted exactly at the limit.
fn assert_limit_exact(limit: Limit, sizes: impl Fn(u64) -> u32) {
    let cfg = direction(limit, AqmSpec::Droptail {}, LossSpec::None {});
    let mut link = Link::new(&cfg, &[MS], 10_000);
    let (mut accepted, mut dropped) = (0, 0);
    for i in 0..20_000u64 {
        let at_ns = i * 50_000; // 2.4× overload of full packets
        link.advance(at_ns);
        while link.pop_due(at_ns).is_some() {}
        let (q_pkts, q_bytes) = link.queue();
        let size_bytes = sizes(i);
        let fits = match limit {
            Limit::Packets(n) => q_pkts < n,
            Limit::Bytes(n) => q_bytes + u64::from(size_bytes) <= n,
        };
        match link.offer(at_ns, pkt(i as u32, size_bytes, Some(0), Ecn::NotEct)) {
            Offer::Accepted => {
                assert!(fits, "accepted beyond the limit at {i}");
                accepted += 1;
            }
            Offer::Dropped(d) => {
                assert_eq!(d, Drop::Queue);
                assert!(
                    !fits,
                    "dropped below the limit at {i}: {q_pkts} pkts {q_bytes} B"
                );
                dropped += 1;
            }
        }
    }
    let c = link.stats.counters;
    assert!(dropped > 1000 && accepted > 1000);
    assert_eq!(
        (c.queue_drops, c.aqm_drops, c.random_drops),
        (dropped, 0, 0)
    );
    match limit {
        Limit::Packets(n) => assert_eq!(c.max_queue_pkts, n),
        Limit::Bytes(n) => assert!(c.max_queue_bytes <= n),
    }
}

#[test]
fn queue_drops_happen_only_beyond_the_packet_limit() {
    assert_limit_exact(Limit::Packets(100), |_| 1500);
}

#[test]
fn queue_drops_happen_only_beyond_the_byte_limit() {
    assert_limit_exact(Limit::Bytes(150_000), |i| [1500, 52, 900][(i % 3) as usize]);
}

fn red(ecn: bool) -> AqmSpec {
    AqmSpec::Red(RedParams {
        min_th_pkts: 5.0,
        max_th_pkts: 15.0,
        max_p: 0.1,
        weight: 0.02,
        gentle: true,
        ecn,
        harddrop: false,
    })
}

fn codel(ecn: bool) -> AqmSpec {
    AqmSpec::Codel(CodelParams {
        ecn,
        ..CodelParams::dropping(5 * MS, 100 * MS)
    })
}

/// `trace` with every packet of codepoint `ecn`.
fn with_ecn(trace: Vec<Arrival>, ecn: Ecn) -> Vec<Arrival> {
    trace.into_iter().map(|a| Arrival { ecn, ..a }).collect()
}

#[test]
fn red_drops_are_aqm_drops() {
    let cfg = direction(Limit::Packets(1000), red(false), LossSpec::None {});
    let mut link = Link::new(&cfg, &[MS], 10_000);
    // Marking is asked for nowhere: ECN-capable packets are dropped all the same.
    let trace = with_ecn(overload(20_000, PKT_TIME_NS * 10 / 11, 1), Ecn::Ect0);
    let run = drive(&mut link, &trace, |_| 0);
    let c = link.stats.counters;
    assert!(c.aqm_drops > 1000, "{c:?}");
    assert_eq!((c.queue_drops, c.aqm_marks, c.sent_ce_pkts), (0, 0, 0));
    assert!(c.max_queue_pkts < 100, "{c:?}");
    assert_eq!(run.sent.len() as u64 + c.aqm_drops, 20_000);
}

#[test]
fn red_with_ecn_marks_capable_packets_where_it_would_drop_them() {
    // The same overload, ECT(0): RED signals as often, but by marks. An unresponsive
    // overload is not held down by marks, so the queue grows to the hard limit, which drops.
    let cfg = direction(Limit::Packets(1000), red(true), LossSpec::None {});
    let mut link = Link::new(&cfg, &[MS], 10_000);
    let trace = with_ecn(overload(20_000, PKT_TIME_NS * 10 / 11, 1), Ecn::Ect0);
    let run = drive(&mut link, &trace, |_| 0);
    let c = link.stats.counters;
    assert_eq!(c.aqm_drops, 0, "{c:?}");
    assert!(c.aqm_marks > 1000, "{c:?}");
    let marked = run.sent.iter().filter(|(p, _)| p.ce).count() as u64;
    assert_eq!((c.sent_ce_pkts, marked), (c.aqm_marks, c.aqm_marks));
    assert_eq!(run.sent.len() as u64 + c.queue_drops, 20_000);
    // Not-ECT packets on the same link are dropped, never marked.
    let mut link = Link::new(&cfg, &[MS], 10_000);
    drive(
        &mut link,
        &overload(20_000, PKT_TIME_NS * 10 / 11, 1),
        |_| 0,
    );
    let c = link.stats.counters;
    assert!(c.aqm_drops > 1000 && c.aqm_marks == 0, "{c:?}");
}

#[test]
fn codel_drops_are_aqm_drops_at_dequeue() {
    let cfg = direction(Limit::Packets(10_000), codel(false), LossSpec::None {});
    let mut link = Link::new(&cfg, &[MS], 20_000);
    // 5% overload for 30 s (250 000 packets).
    let trace = overload(250_000, PKT_TIME_NS * 100 / 105, 1);
    let run = drive(&mut link, &trace, |_| 0);
    let c = link.stats.counters;
    assert_eq!((c.queue_drops, c.aqm_marks), (0, 0));
    let share = c.aqm_drops as f64 / 250_000.0;
    assert!((0.04..0.05).contains(&share), "{share}");
    // Every CoDel drop hands its buffer back; the rest are sent.
    let aqm_freed = run.dropped.iter().filter(|d| d.1 == Drop::Aqm).count() as u64;
    assert_eq!(aqm_freed, c.aqm_drops);
    assert_eq!(run.sent.len() as u64 + c.aqm_drops, 250_000);
    // Without CoDel the queue would grow by the whole excess, 12 500 packets.
    assert!(c.max_queue_pkts < 2500, "{c:?}");
    // Departures are spaced by exactly one packet time while backlogged.
    let b = link.stats.backlogged.total();
    let rate = b.bytes as f64 * 8e9 / b.ns as f64;
    assert!((rate / RATE_BPS as f64 - 1.0).abs() < 0.001, "{rate}");
}

#[test]
fn codel_with_ecn_marks_at_dequeue_and_the_marks_leave_marked() {
    // A burst the link takes 250 ms to clear, once: CoDel's sojourn stays above target for
    // more than an interval, so it signals, by marks since every packet is ECT(0).
    let cfg = direction(Limit::Packets(10_000), codel(true), LossSpec::None {});
    let mut link = Link::new(&cfg, &[MS], 20_000);
    let trace = with_ecn(overload(2_000, PKT_TIME_NS / 2, 1), Ecn::Ect0);
    let run = drive(&mut link, &trace, |_| 0);
    let c = link.stats.counters;
    assert_eq!((c.aqm_drops, c.queue_drops), (0, 0));
    assert!(c.aqm_marks > 0, "{c:?}");
    assert_eq!(run.sent.len(), 2_000);
    let marked = run.sent.iter().filter(|(p, _)| p.ce).count() as u64;
    assert_eq!((c.sent_ce_pkts, marked), (c.aqm_marks, c.aqm_marks));
    // The marks fell where CoDel signals: after the first interval above target.
    let first = run.sent.iter().find(|(p, _)| p.ce).unwrap().0;
    assert!(first.departure_ns >= 100 * MS, "{first:?}");
}

#[test]
fn a_scheduled_discipline_with_a_full_buffer_refuses_the_arrival() {
    // CoDel behind a 10-packet limit, 2.4× overload for 100 ms (below CoDel's interval, so
    // only the limit acts): every refusal is a queue drop, its buffer the caller's to free.
    let cfg = direction(Limit::Packets(10), codel(true), LossSpec::None {});
    let mut link = Link::new(&cfg, &[MS], 1_000);
    let run = drive(&mut link, &overload(2_000, 50_000, 1), |_| 0);
    let c = link.stats.counters;
    assert!(c.queue_drops > 1000, "{c:?}");
    assert_eq!((c.aqm_drops, c.max_queue_pkts), (0, 10));
    let refused = run.dropped.iter().filter(|d| d.1 == Drop::Queue).count() as u64;
    assert_eq!(refused, c.queue_drops);
    assert_eq!(run.sent.len() as u64 + c.queue_drops, 2_000);
}

#[test]
fn without_a_rate_there_is_no_queue_and_unmatched_frames_get_no_delay() {
    let cfg = DirectionConfig {
        rate_bps: None,
        ..droptail(1)
    };
    let mut link = Link::new(&cfg, &[10 * MS], 100);
    let trace = vec![
        full(0, Some(0)),
        full(0, None),
        full(0, Some(0)),
        full(1, None),
    ];
    let run = drive(&mut link, &trace, |_| 0);
    let out: Vec<(u32, u64)> = run.sent.iter().map(|(p, t)| (p.id, *t)).collect();
    assert_eq!(out, vec![(1, 0), (3, 1), (0, 10 * MS), (2, 10 * MS)]);
    let c = link.stats.counters;
    assert_eq!(
        (c.unmatched_pkts, c.max_queue_pkts, c.queue_drops),
        (2, 0, 0)
    );
}

#[test]
fn late_read_arrivals_never_run_time_backwards() {
    let mut link = Link::new(&droptail(10), &[MS], 100);
    link.advance(1_000_000);
    assert_eq!(
        link.offer(500_000, pkt(0, 1500, Some(0), Ecn::NotEct)),
        Offer::Accepted
    );
    link.advance(u64::MAX / 4);
    let p = link.pop_due(u64::MAX / 4).unwrap();
    assert_eq!(p.departure_ns, 1_000_000 + PKT_TIME_NS);
}

#[test]
fn induced_losses_drop_each_times_first_data_segment_of_its_endpoint_before_the_queue() {
    // Endpoint 0 asks for drops at 5 ms and 9 ms after an origin of 1 s; endpoint 1 for none.
    // A one-packet queue with random loss of 0: anything else dropped would be a queue drop.
    let origin = 1_000 * MS;
    let endpoint = |last, drop_at_ns| Endpoint {
        ip: std::net::Ipv4Addr::new(10, 201, 1, last),
        forward_delay_ns: MS,
        reverse_delay_ns: MS,
        drop_at_ns,
    };
    let endpoints = [endpoint(1, vec![5 * MS, 9 * MS]), endpoint(2, vec![])];
    let mut link = Link::new(&droptail(1000), &[MS, MS], 100);
    link.induce(InducedDrops::new(&endpoints, origin));
    let ack = |id, at_ms, e| (id, origin + at_ms * MS, Some(e), false);
    let data = |id, at_ms, e| (id, origin + at_ms * MS, Some(e), true);
    let trace = [
        data(0, 4, 0),  // before the first time
        ack(1, 5, 0),   // at it, but a pure ACK (or a SYN): no payload
        data(2, 6, 1),  // another source's data
        data(3, 6, 0),  // the first data segment of endpoint 0 at or after 5 ms: dropped
        data(4, 7, 0),  // one segment per time
        ack(5, 10, 0),  // after the second time, no payload
        data(6, 12, 0), // dropped: the first data segment at or after 9 ms
        data(7, 13, 0),
    ];
    let mut dropped = Vec::new();
    for (id, at_ns, endpoint, tcp_data) in trace {
        let pkt = Pkt {
            tcp_data,
            ..pkt(id, if tcp_data { 1500 } else { 52 }, endpoint, Ecn::NotEct)
        };
        if let Offer::Dropped(d) = link.offer(at_ns, pkt) {
            dropped.push((id, d));
        }
    }
    assert_eq!(dropped, [(3, Drop::Induced), (6, Drop::Induced)]);
    let c = link.stats.counters;
    assert_eq!((c.induced_drops, c.drops(), c.arrived_pkts), (2, 2, 8));
    assert_eq!((c.queue_drops, c.random_drops, c.aqm_drops), (0, 0, 0));
    // The report gives each drop's arrival on the emulator's clock, per endpoint.
    let report = link.report(&endpoints, true);
    assert_eq!(report.endpoints[0].dropped_at_ns, [6 * MS, 12 * MS]);
    assert!(report.endpoints[1].dropped_at_ns.is_empty());
}

#[test]
fn a_black_hole_drops_what_exceeds_its_mtu_before_loss_and_queue() {
    let cfg = DirectionConfig {
        mtu_black_hole_bytes: Some(1400),
        ..droptail(100)
    };
    let mut link = Link::new(&cfg, &[MS], 100);
    let sizes = [1500, 52, 1400, 1401];
    let trace: Vec<Arrival> = sizes
        .iter()
        .enumerate()
        .map(|(i, &size_bytes)| Arrival {
            size_bytes,
            ..full(i as u64 * MS, Some(0))
        })
        .collect();
    let run = drive(&mut link, &trace, |_| 0);
    let sent: Vec<u32> = run.sent.iter().map(|(p, _)| p.id).collect();
    assert_eq!(sent, [1, 2]);
    assert_eq!(run.dropped, [(0, Drop::BlackHole), (3, Drop::BlackHole)]);
    let c = link.stats.counters;
    assert_eq!((c.black_hole_drops, c.drops()), (2, 2));
}

/// With reordering, the share held back matches and those packets leave after ones that
/// departed the bottleneck later; their endpoint's added delay is still judged without the
/// detour, and nothing is lost.
#[test]
fn reordering_holds_back_its_share_which_later_packets_overtake() {
    let share = 0.01;
    let cfg = DirectionConfig {
        reorder: Some(ReorderSpec {
            share,
            delay_ns: 2 * MS,
        }),
        ..droptail(1000)
    };
    let mut link = Link::new(&cfg, &[10 * MS], 10_000);
    let n = 50_000u64;
    let run = drive(&mut link, &overload(n, PKT_TIME_NS, 1), |_| 0);
    let held = link.stats.counters.reordered_pkts;
    // Binomial: n·p = 500, σ = √(n·p·(1 − p)) ≈ 22.2; 99% ≈ ±2.576σ ≈ ±58.
    assert!((442..=558).contains(&held), "{held}");
    assert_eq!(run.sent.len() as u64, n, "reordering loses nothing");
    let overtaken = run
        .sent
        .windows(2)
        .filter(|w| w[0].0.seq > w[1].0.seq)
        .count() as u64;
    // Each held-back packet is overtaken by the ~16 sent in its 2 ms: it leaves after them,
    // one inversion each (two held within 2 ms of each other stay in order between them).
    assert!(
        overtaken <= held && overtaken > held * 9 / 10,
        "{overtaken} of {held}"
    );
    // The detour counted would make the held-back packets' 12 ms.
    let added = link.stats.added_delay[0].summary();
    assert!(added.max.unwrap() < 11 * MS, "{added:?}");
}
