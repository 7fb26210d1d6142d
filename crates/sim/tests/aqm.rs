//! Today's queues against their RFCs' goals: FQ-CoDel isolates a sparse flow and shares the
//! link between unlike stacks (RFC 8290 §1, §4), PIE holds the queueing delay at its target
//! (RFC 8033 §1), and an ECN-enabled AQM marks where it would have dropped (RFC 3168 §7).

mod common;

use common::*;
use tcpeval_sim::scenario::{AqmSpec, Scenario, SourceSpec};
use tcpeval_sim::tcp::ecn::EcnMode;
use tcpeval_sim::Output;

const RATE_BPS: u64 = 100 * MBPS;
/// Seconds of a 1500-byte packet at `RATE_BPS`.
const PKT_S: f64 = 1500.0 * 8.0 / RATE_BPS as f64;

fn fq_codel() -> AqmSpec {
    AqmSpec::FqCodel {
        flows: 1024,
        quantum_bytes: 1514,
        target_ns: 5 * MS,
        interval_ns: 100 * MS,
        ecn: true,
        ce_threshold_ns: None,
        drop_batch_pkts: 64,
    }
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
    AqmSpec::Pie {
        target_ns: 15 * MS,
        tupdate_ns: 15 * MS,
        alpha: 0.125,
        beta: 1.25,
        max_burst_ns: 150 * MS,
        ecn: false,
        mark_ecn_threshold: 0.1,
        bytemode: false,
    }
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

#[test]
fn pie_holds_the_mean_queueing_delay_at_its_target_from_one_to_twenty_flows() {
    // RFC 8033 §1: PIE keeps the average queueing delay at `target` (15 ms) whatever the load.
    // 100 Mb/s, 40 ms, a buffer of 1000 packets (tc pie's limit): 96 ms if it filled.
    for n in [1, 5, 20] {
        let flows = (0..n).map(|_| flow("reno", 40)).collect();
        let mut s: Scenario = scenario(RATE_BPS, 1000, 60, flows);
        s.links[0].aqm = pie();
        let out = run_checked(&s);
        let delay_ms = mean_queue_delay_s(&out, 20.0) * 1e3;
        assert!(
            (delay_ms / 15.0 - 1.0).abs() <= 0.2,
            "{n} flows: mean queueing delay {delay_ms:.1} ms against 15 ms"
        );
        assert!(out.summary.bottleneck.utilization > 0.9);
    }
}

/// Two flows of `cc` at 40 ms, 100 Mb/s, through `aqm` with a 2 BDP buffer, for 60 s.
fn classic_ecn(cc: &str, aqm: AqmSpec) -> Output {
    let mut f = flow(cc, 40);
    f.ecn = EcnMode::Classic;
    let mut s = scenario(RATE_BPS, 2 * bdp_pkts(RATE_BPS, 40), 60, vec![f.clone(), f]);
    s.links[0].aqm = aqm;
    run_checked(&s)
}

#[test]
fn an_ecn_aqm_marks_where_it_would_drop_and_the_senders_answer_the_marks() {
    let red = AqmSpec::Red {
        min_th_pkts: 83.0,
        max_th_pkts: 250.0,
        max_p: 0.1,
        weight: 0.002,
        gentle: true,
        ecn: true,
        harddrop: false,
    };
    let codel = AqmSpec::Codel {
        target_ns: 5 * MS,
        interval_ns: 100 * MS,
        ecn: true,
        ce_threshold_ns: None,
    };
    for (cc, aqm) in [
        ("reno", red.clone()),
        ("cubic", red),
        ("reno", codel.clone()),
        ("cubic", codel),
    ] {
        let out = classic_ecn(cc, aqm.clone());
        let b = &out.summary.bottleneck;
        let name = format!("{cc} through {aqm:?}");
        // RFC 3168 §7: ECN-capable packets are marked, not dropped; the buffer never fills.
        assert!(b.aqm_marks > 0, "{name}: no marks");
        assert_eq!((b.aqm_drops, b.queue_drops), (0, 0), "{name}");
        // §6.1.2: every reduction answers an echo, and the flows still fill the link.
        for f in &out.summary.flows {
            assert_eq!(f.ecn_reductions, f.congestion_events, "{name}");
            assert!(f.ecn_reductions > 0 && f.retransmits == 0, "{name}: {f:?}");
            assert!(
                f.ce_marks > 0 && f.ece_acks >= f.ecn_reductions,
                "{name}: {f:?}"
            );
        }
        let marks: u64 = out.summary.flows.iter().map(|f| f.ce_marks).sum();
        assert_eq!(marks, b.aqm_marks, "{name}: every mark reaches a receiver");
        assert!(b.utilization > 0.9, "{name}: {}", b.utilization);
    }
}
