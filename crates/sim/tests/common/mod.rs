//! Scenario builders and checks shared by the integration tests.
#![allow(dead_code)] // each test binary uses its own subset

use tcpeval_sim::scenario::{AqmSpec, Flow, LinkSpec, LossSpec, Scenario};
use tcpeval_sim::tcp::ecn::EcnMode;
use tcpeval_sim::tcp::host::Recovery;
use tcpeval_sim::{run, Output};

pub const MS: u64 = 1_000_000;
pub const SEC: u64 = 1_000_000_000;
pub const MBPS: u64 = 1_000_000;

/// A bulk flow with the front end's defaults.
pub fn flow(cc: &str, rtt_ms: u64) -> Flow {
    let mut cc_table = serde_json::Map::new();
    cc_table.insert("name".into(), cc.into());
    Flow {
        group: 0,
        cc: cc_table,
        rtt_ns: rtt_ms * MS,
        forward_delay_ns: None,
        start_ns: 0,
        stop_ns: None,
        size_bytes: None,
        mss_bytes: 1448,
        sack: true,
        delayed_ack: true,
        sack_compression: true,
        ecn: EcnMode::Off,
        window_reduction: Recovery::LINUX.window_reduction,
        loss_detection: Recovery::LINUX.loss_detection,
        lost_retransmission: Recovery::LINUX.lost_retransmission,
        tail_loss_probe: Recovery::LINUX.tail_loss_probe,
        undo: Recovery::LINUX.undo,
        timestamps: Recovery::LINUX.timestamps,
        rto_in_recovery: Recovery::LINUX.rto_in_recovery,
        tso: true,
        window_pkts: None,
        initial_cwnd_pkts: 10,
        min_rto_ns: 200 * MS,
        drop_at_ns: vec![],
        route: vec!["bottleneck".into()],
        route_changes: vec![],
        reverse: false,
        drop_every: None,
        pacing_gap_ns: None,
        pacing_rate_bps: None,
        source_rate_bps: None,
        sink_rate_bps: None,
    }
}

/// The flow with another host's loss recovery, and TSO frames only on the `linux` host's, as
/// the profiles set them.
pub fn on_host(flow: Flow, recovery: Recovery) -> Flow {
    Flow {
        tso: recovery == Recovery::LINUX,
        window_reduction: recovery.window_reduction,
        loss_detection: recovery.loss_detection,
        lost_retransmission: recovery.lost_retransmission,
        tail_loss_probe: recovery.tail_loss_probe,
        undo: recovery.undo,
        timestamps: recovery.timestamps,
        rto_in_recovery: recovery.rto_in_recovery,
        ..flow
    }
}

/// Bandwidth-delay product in 1500-byte packets.
pub fn bdp_pkts(rate_bps: u64, rtt_ms: u64) -> u64 {
    rate_bps * rtt_ms / 1000 / 8 / 1500
}

pub fn scenario(rate_bps: u64, queue_pkts: u64, duration_s: u64, flows: Vec<Flow>) -> Scenario {
    Scenario {
        name: "test".into(),
        duration_ns: duration_s * SEC,
        seed: 1,
        sample_interval_ns: 100 * MS,
        links: vec![link("bottleneck", rate_bps, queue_pkts)],
        flows,
        sources: vec![],
        exchanges: vec![],
        pcap_link: None,
    }
}

/// A drop-tail link without delay or loss.
pub fn link(name: &str, rate_bps: u64, queue_pkts: u64) -> LinkSpec {
    LinkSpec {
        name: name.into(),
        rate_bps,
        delay_ns: 0,
        queue_pkts: Some(queue_pkts),
        queue_bytes: None,
        aqm: AqmSpec::Droptail {},
        loss: LossSpec::None {},
        reverse_loss: LossSpec::None {},
        policer: None,
        reorder: None,
        mtu_black_hole_bytes: None,
        outages_ns: vec![],
        reverse_outages_ns: vec![],
        rate_changes: vec![],
    }
}

/// Run and check packet conservation, which must hold for every run.
pub fn run_checked(s: &Scenario) -> Output {
    let out = run(s.clone()).expect("valid scenario");
    let sim = &out.summary.sim;
    assert_eq!(
        sim.packets_sent,
        sim.packets_delivered + sim.packets_dropped + sim.packets_in_flight,
        "packet conservation: {sim:?}"
    );
    out
}

pub fn jain(xs: &[f64]) -> f64 {
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    sum * sum / (xs.len() as f64 * sq)
}

/// Average goodput of `flow` from `from_s` to the end of the run, in packets per second.
pub fn packets_per_s(out: &Output, flow: u32, from_s: f64) -> f64 {
    let c = &out.flows;
    let rows: Vec<usize> = (0..c.t_s.len()).filter(|&i| c.flow[i] == flow).collect();
    let first = rows.iter().find(|&&i| c.t_s[i] >= from_s).copied().unwrap();
    let last = *rows.last().unwrap();
    let bytes = c.delivered_bytes[last] - c.delivered_bytes[first];
    bytes as f64 / 1448.0 / (c.t_s[last] - c.t_s[first])
}
