//! Time series, sampled every `sample_interval`: one row per flow and one per queued link,
//! kept in columns ready for Parquet.

use crate::flow::Flow;
use crate::net::link::Link;
use crate::time::{millis, secs};

/// The names of the flow columns, in the order [`FlowColumns::into_named`] gives them: the
/// one place they are written (the front end reads them from here, docs/contract.md).
pub const FLOW_COLUMNS: [&str; 9] = [
    "t_s",
    "flow",
    "cwnd_pkts",
    "ssthresh_pkts",
    "srtt_ms",
    "inflight_pkts",
    "delivered_bytes",
    "retransmits",
    "pacing_rate_bps",
];

/// The names of the link columns, in the order [`LinkColumns::into_named`] gives them.
pub const LINK_COLUMNS: [&str; 5] = ["t_s", "link", "queue_pkts", "drops", "tx_bytes"];

/// One column of a time series, in its own number type.
#[derive(Debug, Clone, PartialEq)]
pub enum Column {
    F64(Vec<f64>),
    U32(Vec<u32>),
    U64(Vec<u64>),
}

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
    /// The columns with their names, in the order of [`FLOW_COLUMNS`].
    pub fn into_named(self) -> impl Iterator<Item = (&'static str, Column)> {
        let columns = [
            Column::F64(self.t_s),
            Column::U32(self.flow),
            Column::F64(self.cwnd_pkts),
            Column::F64(self.ssthresh_pkts),
            Column::F64(self.srtt_ms),
            Column::F64(self.inflight_pkts),
            Column::U64(self.delivered_bytes),
            Column::U64(self.retransmits),
            Column::F64(self.pacing_rate_bps),
        ];
        FLOW_COLUMNS.into_iter().zip(columns)
    }

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
    /// The columns with their names, in the order of [`LINK_COLUMNS`].
    pub fn into_named(self) -> impl Iterator<Item = (&'static str, Column)> {
        let columns = [
            Column::F64(self.t_s),
            Column::U32(self.link),
            Column::F64(self.queue_pkts),
            Column::U64(self.drops),
            Column::U64(self.tx_bytes),
        ];
        LINK_COLUMNS.into_iter().zip(columns)
    }

    fn reserve(&mut self, n: usize) {
        self.t_s.reserve(n);
        self.link.reserve(n);
        self.queue_pkts.reserve(n);
        self.drops.reserve(n);
        self.tx_bytes.reserve(n);
    }
}
