//! The simulation: flows and links wired by a topology, driven by the event queue.
//!
//! Packets move link to link along their flow's route; a link's exit event hands its head
//! packet to the next link or to the endpoint. Senders and receivers are sans-IO: they fill
//! `outbox` and return deadlines, which this loop turns into events.

use std::time::Instant;

use crate::engine::{Event, EventQueue, FlowId, LinkId, TimerAction};
use crate::error::ScenarioError;
use crate::flow::Flow;
use crate::net::link::{Link, Offer};
use crate::net::topology::{self, BOTTLENECK};
use crate::output::{FlowSummary, LinkSummary, Output, SimSummary, Summary};
use crate::packet::{Kind, Packet};
use crate::record::Recorder;
use crate::scenario::{Scenario, ACK_BYTES};
use crate::tcp::receiver::Reply;
use crate::tcp::sender::Wakeups;
use crate::time::{millis, rate_bps, secs};

/// Data-packet counters for the conservation check.
#[derive(Debug, Default)]
struct DataCounters {
    sent: u64,
    delivered: u64,
    dropped: u64,
}

pub struct Simulation {
    scenario: Scenario,
    now_ns: u64,
    queue: EventQueue,
    links: Vec<Link>,
    flows: Vec<Flow>,
    /// Packets a sender just emitted; reused so sending allocates nothing.
    outbox: Vec<Packet>,
    recorder: Recorder,
    data: DataCounters,
    samples_taken: u64,
}

impl Simulation {
    pub fn new(scenario: &Scenario) -> Result<Self, ScenarioError> {
        scenario.validate()?;
        let topo = topology::dumbbell(scenario);
        let flows = topo
            .routes
            .into_iter()
            .enumerate()
            .map(|(i, route)| Flow::new(i as FlowId, scenario, route))
            .collect::<Result<Vec<_>, _>>()?;
        let n_samples = (scenario.duration_ns / scenario.sample_interval_ns) as usize;
        let recorder = Recorder::new(&topo.links, flows.len(), n_samples);
        let mut sim = Self {
            scenario: scenario.clone(),
            now_ns: 0,
            queue: EventQueue::default(),
            links: topo.links,
            flows,
            outbox: Vec::new(),
            recorder,
            data: DataCounters::default(),
            samples_taken: 0,
        };
        sim.schedule_flows();
        sim.queue.push(scenario.sample_interval_ns, Event::Sample);
        Ok(sim)
    }

    fn schedule_flows(&mut self) {
        for (i, f) in self.flows.iter().enumerate() {
            self.queue
                .push(f.spec.start_ns, Event::FlowStart(i as FlowId));
            if let Some(stop) = f.spec.stop_ns {
                self.queue.push(stop, Event::FlowStop(i as FlowId));
            }
        }
    }

    /// Run to the end of the scenario and collect the output.
    pub fn run(mut self) -> Output {
        let wall = Instant::now();
        let end_ns = self.scenario.duration_ns;
        while self.queue.peek_time_ns().is_some_and(|t| t <= end_ns) {
            let (now_ns, event) = self.queue.pop().expect("peeked");
            self.now_ns = now_ns;
            self.handle(event);
        }
        self.now_ns = end_ns;
        self.finish(wall.elapsed().as_secs_f64())
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::LinkExit(link) => self.on_link_exit(link),
            Event::FlowStart(f) => {
                let w = self.flows[f as usize]
                    .sender
                    .start(self.now_ns, &mut self.outbox);
                self.after_sender(f, w);
            }
            Event::FlowStop(f) => {
                let flow = &mut self.flows[f as usize];
                flow.sender.stop();
                flow.delivered_at_stop = Some(flow.receiver.rcv_nxt());
            }
            Event::Rto(f) => {
                let w = self.flows[f as usize]
                    .sender
                    .on_rto_wake(self.now_ns, &mut self.outbox);
                self.after_sender(f, w);
            }
            Event::PacingWake(f) => {
                let w = self.flows[f as usize]
                    .sender
                    .on_pacing_wake(self.now_ns, &mut self.outbox);
                self.after_sender(f, w);
            }
            Event::DelayedAck(f) => self.on_delayed_ack(f),
            Event::Sample => self.on_sample(),
        }
    }

    /// Schedule what the sender asked for and put its packets on their way.
    fn after_sender(&mut self, f: FlowId, w: Wakeups) {
        if let Some(t) = w.rto_ns {
            self.queue.push(t, Event::Rto(f));
        }
        if let Some(t) = w.pacing_ns {
            self.queue.push(t, Event::PacingWake(f));
        }
        let mut out = std::mem::take(&mut self.outbox);
        for pkt in out.drain(..) {
            self.data.sent += 1;
            let first = self.flows[f as usize].route.data[0];
            self.offer(first, pkt);
        }
        self.outbox = out;
    }

    fn offer(&mut self, link: LinkId, pkt: Packet) {
        let is_data = pkt.kind == Kind::Data;
        if is_data
            && link == BOTTLENECK
            && self.flows[pkt.flow as usize].take_induced_drop(self.now_ns)
        {
            self.links[link as usize].counters.induced_drops += 1;
            self.data.dropped += 1;
            return;
        }
        match self.links[link as usize].offer(self.now_ns, pkt) {
            Offer::Dropped(_) => self.data.dropped += u64::from(is_data),
            Offer::AcceptedAsHead(t) => self.queue.push(t, Event::LinkExit(link)),
            Offer::Accepted => {}
        }
    }

    fn on_link_exit(&mut self, link: LinkId) {
        let (mut pkt, next) = self.links[link as usize].pop();
        if let Some(t) = next {
            self.queue.push(t, Event::LinkExit(link));
        }
        pkt.hop += 1;
        let route = &self.flows[pkt.flow as usize].route;
        let path = if pkt.kind == Kind::Data {
            &route.data
        } else {
            &route.ack
        };
        match path.get(usize::from(pkt.hop)) {
            Some(&next_link) => self.offer(next_link, pkt),
            None if pkt.kind == Kind::Data => self.deliver_data(pkt),
            None => self.deliver_ack(pkt),
        }
    }

    fn deliver_data(&mut self, pkt: Packet) {
        self.data.delivered += 1;
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        match flow.receiver.on_segment(self.now_ns, pkt.seq) {
            Reply::AckNow => self.send_ack(f),
            Reply::Delay(deadline) => {
                if let TimerAction::Schedule(t) = flow.delayed_ack.set(deadline) {
                    self.queue.push(t, Event::DelayedAck(f));
                }
            }
        }
    }

    fn on_delayed_ack(&mut self, f: FlowId) {
        let flow = &mut self.flows[f as usize];
        match flow.delayed_ack.on_wake(self.now_ns) {
            TimerAction::Fire if flow.receiver.ack_pending() => self.send_ack(f),
            TimerAction::Schedule(t) => self.queue.push(t, Event::DelayedAck(f)),
            _ => {}
        }
    }

    fn send_ack(&mut self, f: FlowId) {
        let flow = &mut self.flows[f as usize];
        flow.delayed_ack.clear();
        let mut ack = Packet::ack(f, 0, ACK_BYTES);
        flow.receiver.make_ack(&mut ack);
        let first = flow.route.ack[0];
        self.offer(first, ack);
    }

    fn deliver_ack(&mut self, pkt: Packet) {
        let f = pkt.flow;
        let w = self.flows[f as usize]
            .sender
            .on_ack(self.now_ns, &pkt, &mut self.outbox);
        self.after_sender(f, w);
    }

    fn on_sample(&mut self) {
        self.recorder
            .sample(self.now_ns, &self.flows, &mut self.links);
        self.samples_taken += 1;
        let next = (self.samples_taken + 1) * self.scenario.sample_interval_ns;
        if next <= self.scenario.duration_ns {
            self.queue.push(next, Event::Sample);
        }
    }

    fn finish(mut self, wall_seconds: f64) -> Output {
        let end_ns = self.scenario.duration_ns;
        let flows = self
            .flows
            .iter()
            .enumerate()
            .map(|(i, f)| flow_summary(i, f, end_ns))
            .collect();
        let bottleneck = self.bottleneck_summary();
        let in_flight = self
            .links
            .iter()
            .map(|l| l.packets().filter(|p| p.kind == Kind::Data).count() as u64)
            .sum();
        let sim = SimSummary {
            events: self.queue.events(),
            packets_sent: self.data.sent,
            packets_delivered: self.data.delivered,
            packets_dropped: self.data.dropped,
            packets_in_flight: in_flight,
            sim_seconds: secs(end_ns),
            wall_seconds,
        };
        let link_names = self
            .recorder
            .recorded_links
            .iter()
            .map(|&i| self.links[i].name.clone())
            .collect();
        Output {
            summary: Summary {
                flows,
                bottleneck,
                sim,
            },
            flows: self.recorder.flows,
            links: self.recorder.links,
            link_names,
        }
    }

    fn bottleneck_summary(&mut self) -> LinkSummary {
        let end_ns = self.scenario.duration_ns;
        let b = &self.scenario.bottleneck;
        let largest_packet = self
            .flows
            .iter()
            .map(|f| f.spec.packet_bytes())
            .max()
            .unwrap_or(1500);
        let capacity_pkts = b
            .queue_pkts
            .or(b.queue_bytes.map(|q| q / u64::from(largest_packet)));
        let rate = b.rate_bps;
        let link = &mut self.links[BOTTLENECK as usize];
        let tx_bytes = link.tx_bytes(end_ns);
        let c = &link.counters;
        LinkSummary {
            utilization: rate_bps(tx_bytes, end_ns) / rate as f64,
            drops: link.drops(),
            queue_drops: c.queue_drops,
            random_drops: c.random_drops,
            induced_drops: c.induced_drops,
            mean_queue_pkts: c.backlog_ns as f64 / end_ns as f64,
            capacity_pkts,
            tx_bytes,
        }
    }
}

fn flow_summary(id: usize, f: &Flow, end_ns: u64) -> FlowSummary {
    let s = &f.sender.stats;
    let start_ns = f.spec.start_ns.min(end_ns);
    let active_end_ns = s
        .completed_ns
        .or(f.spec.stop_ns)
        .unwrap_or(end_ns)
        .min(end_ns);
    let delivered = match (s.completed_ns, f.delivered_at_stop) {
        (None, Some(segments)) => f.bytes_of(segments),
        _ => f.delivered_bytes(),
    };
    FlowSummary {
        id: id as u32,
        group: f.spec.group,
        cc: f.spec.cc_name().to_owned(),
        rtt_ms: millis(f.spec.rtt_ns),
        goodput_mbps: rate_bps(delivered, active_end_ns.saturating_sub(start_ns)) / 1e6,
        bytes_delivered: delivered,
        retransmits: s.retransmits,
        timeouts: s.timeouts,
        completion_s: s.completed_ns.map(|t| secs(t - f.spec.start_ns)),
        start_s: secs(start_ns),
        end_s: secs(active_end_ns),
        packets_sent: s.packets_sent,
        congestion_events: s.congestion_events,
    }
}
