//! Time series, sampled every `sample_interval`: one row per active flow and one per queued
//! link, kept in columns ready for Parquet.
//!
//! A flow is sampled from its start until the first sample after it finished (its transfer
//! acknowledged, or stopped with nothing in flight): a run of many short flows (web traffic)
//! costs rows for the flows alive, not for every flow ever started at every sample. The
//! columns grow with `try_reserve`, so a run whose series outgrow memory stops with
//! [`RunError::OutOfMemory`] instead of aborting the process.

use std::collections::TryReserveError;

use crate::cc::{CongestionControl, MAX_STATE_VALUES};
use crate::error::RunError;
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

/// The simulator's own columns after the contract's, cumulative (the other backends have no
/// such counters): per flow the CE-marked packets its receiver got, the ACKs whose echo
/// signalled congestion, its window reductions and those of them for ECN (the rest answered
/// losses); per link the packets its AQM marked.
pub const SIM_FLOW_COLUMNS: [&str; 4] = [
    "ce_marks",
    "ece_acks",
    "congestion_events",
    "ecn_reductions",
];
pub const SIM_LINK_COLUMNS: [&str; 1] = ["marks"];

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
    pub ce_marks: Vec<u64>,
    pub ece_acks: Vec<u64>,
    pub congestion_events: Vec<u64>,
    pub ecn_reductions: Vec<u64>,
    /// The controllers' own state (`CongestionControl::state_names`), one column per name any
    /// flow's controller gives, in the order first seen; NaN in the rows of other flows.
    pub controller: Vec<(&'static str, StateColumn)>,
}

/// One column of controller state. NaN marks the rows of flows without that state, so two
/// columns are equal when equal bit for bit (whole runs are compared: determinism, the
/// many-flows mode).
#[derive(Debug, Clone, Default)]
pub struct StateColumn(pub Vec<f64>);

impl PartialEq for StateColumn {
    fn eq(&self, other: &Self) -> bool {
        let same = |(a, b): (&f64, &f64)| a.to_bits() == b.to_bits();
        self.0.len() == other.0.len() && self.0.iter().zip(&other.0).all(same)
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct LinkColumns {
    pub t_s: Vec<f64>,
    pub link: Vec<u32>,
    pub queue_pkts: Vec<f64>,
    pub drops: Vec<u64>,
    pub tx_bytes: Vec<u64>,
    pub marks: Vec<u64>,
}

#[derive(Debug, Default)]
pub struct Recorder {
    pub flows: FlowColumns,
    pub links: LinkColumns,
    /// Indices of the links that get a series: those with a queue.
    pub recorded_links: Vec<usize>,
    /// Flows whose last row is written: they finished before the previous sample.
    done: Vec<bool>,
}

impl Recorder {
    pub fn new(links: &[Link], n_flows: usize) -> Self {
        let recorded_links: Vec<usize> = links
            .iter()
            .enumerate()
            .filter(|(_, l)| l.rate_bps.is_some())
            .map(|(i, _)| i)
            .collect();
        Self {
            recorded_links,
            done: vec![false; n_flows],
            ..Self::default()
        }
    }

    pub fn sample(
        &mut self,
        now_ns: u64,
        flows: &[Flow],
        links: &mut [Link],
    ) -> Result<(), RunError> {
        let active = |(i, f): &(usize, &Flow)| !self.done[*i] && f.start_ns <= now_ns;
        let rows = flows.iter().enumerate().filter(active).count();
        let rows_so_far = self.flows.t_s.len() + self.links.t_s.len();
        let out_of_memory = |_: TryReserveError| RunError::OutOfMemory { rows: rows_so_far };
        self.flows.try_reserve(rows).map_err(out_of_memory)?;
        let link_rows = self.recorded_links.len();
        self.links.try_reserve(link_rows).map_err(out_of_memory)?;
        let t_s = secs(now_ns);
        for (i, f) in flows.iter().enumerate() {
            if self.done[i] || f.start_ns > now_ns {
                continue;
            }
            self.done[i] = f.finished();
            let s = &f.sender;
            let c = &mut self.flows;
            c.push_controller_state(s.controller())
                .map_err(out_of_memory)?;
            c.t_s.push(t_s);
            c.flow.push(i as u32);
            c.cwnd_pkts.push(s.cwnd_pkts());
            c.ssthresh_pkts.push(s.ssthresh_pkts());
            c.srtt_ms.push(millis(s.srtt_ns()));
            c.inflight_pkts.push(s.in_flight_pkts() as f64);
            c.delivered_bytes.push(f.delivered_bytes());
            c.retransmits.push(s.stats.retransmits);
            c.pacing_rate_bps.push(s.pacing_rate_bps_now());
            c.ce_marks.push(f.receiver.ecn.ce_received);
            c.ece_acks.push(s.stats.ece_acks);
            c.congestion_events.push(s.stats.congestion_events);
            c.ecn_reductions.push(s.stats.ecn_reductions);
        }
        for (row, &i) in self.recorded_links.iter().enumerate() {
            let l = &mut links[i];
            let c = &mut self.links;
            c.t_s.push(t_s);
            c.link.push(row as u32);
            c.queue_pkts.push(l.backlog_pkts(now_ns) as f64);
            c.drops.push(l.drops());
            c.tx_bytes.push(l.tx_bytes(now_ns));
            c.marks.push(l.counters.aqm_marks);
        }
        Ok(())
    }
}

impl FlowColumns {
    /// The columns with their names, in the order of [`FLOW_COLUMNS`], then the simulator's own.
    pub fn into_named(self) -> impl Iterator<Item = (&'static str, Column)> {
        let own = SIM_FLOW_COLUMNS.into_iter().zip([
            Column::U64(self.ce_marks),
            Column::U64(self.ece_acks),
            Column::U64(self.congestion_events),
            Column::U64(self.ecn_reductions),
        ]);
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
        let controller = (self.controller.into_iter()).map(|(name, v)| (name, Column::F64(v.0)));
        FLOW_COLUMNS
            .into_iter()
            .zip(columns)
            .chain(own)
            .chain(controller)
    }

    /// One row of the controllers' columns: this flow's values under its names, NaN under the
    /// others'; a name not seen before starts a column, NaN in the rows before.
    fn push_controller_state(&mut self, cc: &dyn CongestionControl) -> Result<(), TryReserveError> {
        let names = cc.state_names();
        let mut values = [f64::NAN; MAX_STATE_VALUES];
        cc.state_values(&mut values[..names.len()]);
        for &name in names {
            if !self.controller.iter().any(|(known, _)| *known == name) {
                let mut column = Vec::new();
                column.try_reserve(self.t_s.capacity())?;
                column.resize(self.t_s.len(), f64::NAN);
                self.controller.push((name, StateColumn(column)));
            }
        }
        for (name, column) in &mut self.controller {
            let at = names.iter().position(|known| known == name);
            column.0.push(at.map_or(f64::NAN, |i| values[i]));
        }
        Ok(())
    }

    fn try_reserve(&mut self, n: usize) -> Result<(), TryReserveError> {
        for (_, column) in &mut self.controller {
            column.0.try_reserve(n)?;
        }
        self.t_s.try_reserve(n)?;
        self.flow.try_reserve(n)?;
        self.cwnd_pkts.try_reserve(n)?;
        self.ssthresh_pkts.try_reserve(n)?;
        self.srtt_ms.try_reserve(n)?;
        self.inflight_pkts.try_reserve(n)?;
        self.delivered_bytes.try_reserve(n)?;
        self.retransmits.try_reserve(n)?;
        self.pacing_rate_bps.try_reserve(n)?;
        self.ce_marks.try_reserve(n)?;
        self.ece_acks.try_reserve(n)?;
        self.congestion_events.try_reserve(n)?;
        self.ecn_reductions.try_reserve(n)
    }
}

impl LinkColumns {
    /// The columns with their names, in the order of [`LINK_COLUMNS`], then the simulator's own.
    pub fn into_named(self) -> impl Iterator<Item = (&'static str, Column)> {
        let own = SIM_LINK_COLUMNS.into_iter().zip([Column::U64(self.marks)]);
        let columns = [
            Column::F64(self.t_s),
            Column::U32(self.link),
            Column::F64(self.queue_pkts),
            Column::U64(self.drops),
            Column::U64(self.tx_bytes),
        ];
        LINK_COLUMNS.into_iter().zip(columns).chain(own)
    }

    fn try_reserve(&mut self, n: usize) -> Result<(), TryReserveError> {
        self.t_s.try_reserve(n)?;
        self.link.try_reserve(n)?;
        self.queue_pkts.try_reserve(n)?;
        self.drops.try_reserve(n)?;
        self.tx_bytes.try_reserve(n)?;
        self.marks.try_reserve(n)
    }
}
