//! Today's queues against their RFCs' goals: FQ-CoDel isolates a sparse flow and shares the
//! link between unlike stacks (RFC 8290 §1, §4), PIE holds the queueing delay at its target
//! (RFC 8033 §1), and an ECN-enabled AQM marks where it would have dropped (RFC 3168 §7).

mod common;

use common::*;
use tcpeval_sim::net::queue::{CodelParams, FqCodelParams, PieParams, RedParams};
use tcpeval_sim::scenario::{AqmSpec, Scenario, SourceSpec};
use tcpeval_sim::tcp::ecn::EcnMode;
use tcpeval_sim::Output;

const RATE_BPS: u64 = 100 * MBPS;
/// Seconds of a 1500-byte packet at `RATE_BPS`.
const PKT_S: f64 = 1500.0 * 8.0 / RATE_BPS as f64;

fn fq_codel() -> AqmSpec {
    AqmSpec::FqCodel(FqCodelParams::default())
}

/// Reno, CUBIC and BBR at 40 ms through `aqm` at 100 Mb/s with a 1 BDP buffer, beside a 1 Mb/s
/// CBR source of 200-byte datagrams, for 60 s.
fn mixed_stacks(aqm: AqmSpec) -> Output {
    let flows = ["reno", "cubic", "bbr"].map(|cc| flow(cc, 40)).to_vec();
    let mut s = scenario(RATE_BPS, bdp_pkts(RATE_BPS, 40), 60, flows);
    s.links[0].aqm = aqm;
    s.sources.push(SourceSpec::Cbr {
        route: vec!["bottleneck".into()],
        reverse: false,
        rate_bps: MBPS,
        packet_bytes: 200,
        start_ns: 0,
        stop_ns: None,
    });
    run_checked(&s)
}

#[test]
fn fq_codel_shares_between_unlike_stacks_and_keeps_a_sparse_flow_out_of_the_queue() {
    let fq = mixed_stacks(fq_codel());
    let rates: Vec<f64> = (0..3).map(|f| packets_per_s(&fq, f, 30.0)).collect();
    // RFC 8290 §1: flow queueing gives each flow its share whatever its congestion control.
    assert!(jain(&rates) >= 0.98, "{rates:?}: Jain {}", jain(&rates));
    // §1 "sparse flows": the CBR's datagrams skip the bulk flows' queues (new-flow priority):
    // their delay is their own serialisation and a few packets', far below CoDel's 5 ms.
    let cbr_ms = fq.summary.sources[0].mean_delay_ms.unwrap();
    assert!(cbr_ms < 5.0, "FQ-CoDel: the CBR waited {cbr_ms} ms");
    // Drop-tail gives it the bulk flows' standing queue: most of the 40 ms buffer.
    let fifo = mixed_stacks(AqmSpec::Droptail {});
    let fifo_ms = fifo.summary.sources[0].mean_delay_ms.unwrap();
    assert!(fifo_ms > 15.0, "drop-tail: the CBR waited {fifo_ms} ms");
}

fn pie() -> AqmSpec {
    AqmSpec::Pie(PieParams::default())
}

/// The mean queueing delay (s) of the bottleneck from `from_s` on, from its sampled backlog.
fn mean_queue_delay_s(out: &Output, from_s: f64) -> f64 {
    let l = &out.links;
    let queue: Vec<f64> = (0..l.t_s.len())
        .filter(|&i| l.link[i] == 0 && l.t_s[i] >= from_s)
        .map(|i| l.queue_pkts[i])
        .collect();
    queue.iter().sum::<f64>() / queue.len() as f64 * PKT_S
}

/// The mean queueing delay (ms) under PIE of `n` Reno flows of `rtt_ms` at 100 Mb/s, with a
/// buffer of 1000 packets (tc pie's limit: 120 ms if it filled), over the last 40 of 60 s.
fn pie_delay_ms(n: usize, rtt_ms: u64) -> f64 {
    let flows = (0..n).map(|_| flow("reno", rtt_ms)).collect();
    let mut s: Scenario = scenario(RATE_BPS, 1000, 60, flows);
    s.links[0].aqm = pie();
    let out = run_checked(&s);
    mean_queue_delay_s(&out, 20.0) * 1e3
}

#[test]
fn pie_holds_the_mean_queueing_delay_at_its_target_from_one_to_twenty_flows() {
    // RFC 8033 §1: PIE keeps the average queueing delay at `target` (15 ms) whatever the
    // load, here within 20%. A standing queue needs flows whose halved windows still fill the
    // pipe: on a 10 ms path (83-packet BDP, 125 packets at target) one flow does; on a 40 ms
    // path (333 packets) one or two Reno flows cannot (measured: 6.9 and 10.4 ms, the link
    // idle after each halving), so there the goal is held from five flows on.
    let cases = [(1, 10), (5, 10), (20, 10), (5, 40), (20, 40)];
    for (n, rtt_ms) in cases {
        let delay_ms = pie_delay_ms(n, rtt_ms);
        assert!(
            (delay_ms / 15.0 - 1.0).abs() <= 0.2,
            "{n} flows at {rtt_ms} ms: mean queueing delay {delay_ms:.1} ms against 15 ms"
        );
    }
}

/// The last value of `column` at or before `t_s` and at the end, for rows of `key == id`.
fn at_and_end(t: &[f64], key: &[u32], column: &[u64], id: u32, t_s: f64) -> (u64, u64) {
    let rows: Vec<usize> = (0..t.len()).filter(|&i| key[i] == id).collect();
    let before = rows.iter().rfind(|&&i| t[i] <= t_s).unwrap();
    (column[*before], column[*rows.last().unwrap()])
}

/// Two flows of `cc` at 40 ms with ECN `ecn`, 100 Mb/s, through `aqm` with a 2 BDP buffer,
/// for 60 s.
fn two_flows(cc: &str, aqm: AqmSpec, ecn: EcnMode) -> Output {
    let mut f = flow(cc, 40);
    f.ecn = ecn;
    let mut s = scenario(RATE_BPS, 2 * bdp_pkts(RATE_BPS, 40), 60, vec![f.clone(), f]);
    s.links[0].aqm = aqm;
    run_checked(&s)
}

/// The same AQM dropping instead of marking.
fn dropping(aqm: &AqmSpec) -> AqmSpec {
    match aqm.clone() {
        AqmSpec::Red(p) => AqmSpec::Red(RedParams { ecn: false, ..p }),
        AqmSpec::Codel(p) => AqmSpec::Codel(CodelParams { ecn: false, ..p }),
        other => other,
    }
}

/// The bottleneck's utilization over the last 40 s.
fn steady_utilization(out: &Output) -> f64 {
    let l = &out.links;
    let (tx_at_20, tx) = at_and_end(&l.t_s, &l.link, &l.tx_bytes, 0, 20.0);
    (tx - tx_at_20) as f64 * 8.0 / 40.0 / RATE_BPS as f64
}

#[test]
fn an_ecn_aqm_marks_where_it_would_drop_and_the_senders_answer_the_marks() {
    let red = AqmSpec::Red(RedParams {
        min_th_pkts: 83.0,
        max_th_pkts: 250.0,
        max_p: 0.1,
        weight: 0.002,
        gentle: true,
        ecn: true,
        harddrop: false,
    });
    let codel = AqmSpec::Codel(CodelParams {
        ecn: true,
        ..CodelParams::dropping(5 * MS, 100 * MS)
    });
    for (cc, aqm) in [
        ("reno", red.clone()),
        ("cubic", red),
        ("reno", codel.clone()),
        ("cubic", codel),
    ] {
        let out = two_flows(cc, aqm.clone(), EcnMode::Classic);
        let name = format!("{cc} through {aqm:?}");
        // RFC 3168 §7: once the flows are out of slow start (whose overshoot a slow average
        // cannot stop), ECN-capable packets are marked and none is dropped.
        let (l, f) = (&out.links, &out.flows);
        let (drops_at_20, drops) = at_and_end(&l.t_s, &l.link, &l.drops, 0, 20.0);
        let (marks_at_20, marks) = at_and_end(&l.t_s, &l.link, &l.marks, 0, 20.0);
        assert_eq!(drops, drops_at_20, "{name}: drops after start-up");
        assert!(marks > marks_at_20, "{name}: no marks after start-up");
        for id in 0..2 {
            let (retx_at_20, retx) = at_and_end(&f.t_s, &f.flow, &f.retransmits, id, 20.0);
            assert_eq!(
                retx, retx_at_20,
                "{name}: flow {id} retransmitted after start-up"
            );
        }
        // §6.1.2: the senders answer the echoes, and marking costs no throughput against
        // dropping on the same AQM (within 5%).
        let b = &out.summary.bottleneck;
        for f in &out.summary.flows {
            assert!(f.ecn_reductions > 0 && f.ce_marks > 0, "{name}: {f:?}");
            assert!(f.ece_acks >= f.ecn_reductions, "{name}: {f:?}");
        }
        let received: u64 = out.summary.flows.iter().map(|f| f.ce_marks).sum();
        assert_eq!(
            received, b.aqm_marks,
            "{name}: every mark reaches a receiver"
        );
        let marking = steady_utilization(&out);
        let dropping = steady_utilization(&two_flows(cc, dropping(&aqm), EcnMode::Off));
        assert!(
            marking >= 0.95 * dropping,
            "{name}: {marking} against {dropping}"
        );
    }
}
