//! Time series, sampled every `sample_interval`: one row per flow and one per queued link,
//! kept in columns ready for Parquet.

use crate::flow::Flow;
use crate::net::link::Link;
use crate::time::{millis, secs};

#[derive(Debug, Clone, Default, PartialEq)]
pub struct FlowColumns {
    pub t_s: Vec<f64>,
    pub flow: Vec<u32>,
    pub cwnd_pkts: Vec<f64>,
    pub ssthresh_pkts: Vec<f64>,
    pub srtt_ms: Vec<f64>,
    pub inflight_pkts: Vec<f64>,
    pub delivered_bytes: Vec<u64>,
    pub retransmits: Vec<u64>,
    pub pacing_rate_bps: Vec<f64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkColumns {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    pub queue_pkts: Vec<f64>,
    pub drops: Vec<u64>,
    pub tx_bytes: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct Recorder {
    pub flows: FlowColumns,
    pub links: LinkColumns,
    /// Indices of the links that get a series: those with a queue.
    pub recorded_links: Vec<usize>,
}

impl Recorder {
    pub fn new(links: &[Link], n_flows: usize, n_samples: usize) -> Self {
        let recorded_links: Vec<usize> = links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.rate_bps.is_some())
            .map(|(i, _)| i)
            .collect();
        let mut r = Self {
            recorded_links,
            ..Self::default()
        };
        r.flows.reserve(n_flows * n_samples);
        r.links.reserve(r.recorded_links.len() * n_samples);
        r
    }

    pub fn sample(&mut self, now_ns: u64, flows: &[Flow], links: &mut [Link]) {
        let t_s = secs(now_ns);
        for (i, f) in flows.iter().enumerate() {
            let s = &f.sender;
            let c = &mut self.flows;
            c.t_s.push(t_s);
            c.flow.push(i as u32);
            c.cwnd_pkts.push(s.cwnd_pkts());
            c.ssthresh_pkts.push(s.ssthresh_pkts());
            c.srtt_ms.push(millis(s.srtt_ns()));
            c.inflight_pkts.push(s.in_flight_pkts() as f64);
            c.delivered_bytes.push(f.delivered_bytes());
            c.retransmits.push(s.stats.retransmits);
            c.pacing_rate_bps.push(s.pacing_rate_bps_now());
        }
        for (row, &i) in self.recorded_links.iter().enumerate() {
            let l = &mut links[i];
            let c = &mut self.links;
            c.t_s.push(t_s);
            c.link.push(row as u32);
            c.queue_pkts.push(l.backlog_pkts(now_ns) as f64);
            c.drops.push(l.drops());
            c.tx_bytes.push(l.tx_bytes(now_ns));
        }
    }
}

impl FlowColumns {
    fn reserve(&mut self, n: usize) {
        self.t_s.reserve(n);
        self.flow.reserve(n);
        self.cwnd_pkts.reserve(n);
        self.ssthresh_pkts.reserve(n);
        self.srtt_ms.reserve(n);
        self.inflight_pkts.reserve(n);
        self.delivered_bytes.reserve(n);
        self.retransmits.reserve(n);
        self.pacing_rate_bps.reserve(n);
    }
}

impl LinkColumns {
    fn reserve(&mut self, n: usize) {
        self.t_s.reserve(n);
        self.link.reserve(n);
        self.queue_pkts.reserve(n);
        self.drops.reserve(n);
        self.tx_bytes.reserve(n);
    }
}
