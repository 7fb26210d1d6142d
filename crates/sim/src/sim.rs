//! The simulation: flows, sources and links wired by a topology, driven by the event queue.
//!
//! Packets move link to link along their route; a link's exit event hands its head packet to
//! the next link or to the endpoint. Senders and receivers are sans-IO: they fill `outbox` and
//! return deadlines, which this loop turns into events.

use std::time::Instant;

use crate::engine::{Event, EventQueue, FlowId, LinkId, TimerAction};
use crate::error::{RunError, ScenarioError};
use crate::flow::Flow;
use crate::induced_drops::InducedDrops;
use crate::net::link::{Link, Offer};
use crate::net::routes::Routes;
use crate::net::topology::{self, Detour};
use crate::output::Output;
use crate::packet::{Kind, Packet};
use crate::pcap::Pcap;
use crate::prefetch::prefetch;
use crate::progress::{Progress, EVENTS_PER_UPDATE};
use crate::record::Recorder;
use crate::scenario::{self, Scenario, ACK_BYTES};
use crate::summary::{self, SimSummary, Summary};
use crate::tcp::receiver::Reply;
use crate::tcp::sender::Wakeups;
use crate::time::secs;
use crate::traffic::exchange::{Action, Exchange};
use crate::traffic::source::Source;

/// Data-packet counters of the flows, for the conservation check.
#[derive(Debug, Default)]
struct DataCounters {
    sent: u64,
    delivered: u64,
    dropped: u64,
}

pub struct Simulation {
    now_ns: u64,
    duration_ns: u64,
    sample_interval_ns: u64,
    /// The largest data packet any flow sends: links report their queues in packets of it.
    largest_packet_bytes: u32,
    queue: EventQueue,
    links: Vec<Link>,
    flows: Vec<Flow>,
    sources: Vec<Source>,
    routes: Routes,
    /// By declared link, where the packets it holds back go (`net/topology.rs`).
    detours: Vec<Option<Detour>>,
    induced_drops: InducedDrops,
    exchanges: Vec<Exchange>,
    /// The exchange each flow belongs to, if any.
    flow_exchange: Vec<Option<u32>>,
    /// The captured link and its capture.
    capture: Option<(LinkId, Pcap)>,
    /// Packets a sender just emitted; reused so sending allocates nothing.
    outbox: Vec<Packet>,
    recorder: Recorder,
    data: DataCounters,
    samples_taken: u64,
    /// Whether the flows' state outgrows a core's cache, so that fetching it ahead pays, and
    /// their delayed-ACK deadlines are many enough to be worth a FIFO of their own.
    many_flows: bool,
}

/// Above this much flow state, a visit to a flow finds its lines cold (docs/performance.md);
/// below it, prefetching them only costs instructions (10 flows ran 10-15% slower with it), and
/// so does the delayed-ACK FIFO (+1.5% instructions), since few deadlines are pending.
const MANY_FLOWS_ABOVE_BYTES: usize = 1 << 20;
/// How many delayed-ACK wake-ups ahead a wake-up fetches the timer of.
const DELAYED_ACK_AHEAD: usize = 3;

impl Simulation {
    /// The simulation of `scenario`, which it consumes: the run reads only what the flows,
    /// sources and exchanges keep of their specs, and the rest, dropped here, weighs about
    /// 1 kB a flow (its `cc` map above all).
    pub fn new(scenario: Scenario) -> Result<Self, ScenarioError> {
        scenario.validate()?;
        let topo = topology::build(&scenario);
        let flow_exchange: Vec<Option<u32>> = (0..scenario.flows.len() as u32)
            .map(|f| {
                scenario
                    .exchanges
                    .iter()
                    .position(|x| x.request_flow == f || x.response_flow == f)
                    .map(|i| i as u32)
            })
            .collect();
        // Pushed into room for all: collected from fallible builds, they would grow by doubling
        // (100,000 flows: 178 MB of room for 136 MB, copied at each step).
        let mut flows = Vec::with_capacity(scenario.flows.len());
        for (i, exchange) in flow_exchange.iter().enumerate() {
            flows.push(Flow::new(i as FlowId, &scenario, exchange.is_some())?);
        }
        let sources = scenario
            .sources
            .iter()
            .enumerate()
            .map(|(i, spec)| {
                Source::new(
                    i as u32,
                    spec,
                    scenario.seed ^ (i as u64 + 1).wrapping_mul(0xa076_1d64_78bd_642f),
                )
            })
            .collect();
        let recorder = Recorder::new(&topo.links, flows.len());
        let capture = scenario
            .pcap_link
            .as_ref()
            .and_then(|name| scenario.link_index(name))
            .map(|i| (i as LinkId, Pcap::new()));
        let mut sim = Self {
            now_ns: 0,
            duration_ns: scenario.duration_ns,
            sample_interval_ns: scenario.sample_interval_ns,
            largest_packet_bytes: scenario
                .flows
                .iter()
                .map(scenario::Flow::packet_bytes)
                .max()
                .unwrap_or(1500),
            queue: EventQueue::default(),
            links: topo.links,
            flows,
            sources,
            routes: topo.routes,
            detours: topo.detours,
            induced_drops: InducedDrops::new(&scenario),
            exchanges: scenario.exchanges.iter().map(Exchange::new).collect(),
            flow_exchange,
            capture,
            outbox: Vec::new(),
            recorder,
            data: DataCounters::default(),
            samples_taken: 0,
            many_flows: scenario.flows.len() * size_of::<Flow>() > MANY_FLOWS_ABOVE_BYTES,
        };
        sim.schedule_starts();
        sim.schedule_route_changes(&scenario);
        sim.queue.push(scenario.sample_interval_ns, Event::Sample);
        Ok(sim)
    }

    fn schedule_route_changes(&mut self, scenario: &Scenario) {
        for (i, f) in scenario.flows.iter().enumerate() {
            for change in &f.route_changes {
                self.queue
                    .push(change.at_ns, Event::RouteChange(i as FlowId));
            }
        }
    }

    fn schedule_starts(&mut self) {
        for (i, f) in self.flows.iter().enumerate() {
            self.queue.push(f.start_ns, Event::FlowStart(i as FlowId));
            if let Some(stop) = f.stop_ns {
                self.queue.push(stop, Event::FlowStop(i as FlowId));
            }
        }
        for (i, source) in self.sources.iter_mut().enumerate() {
            self.queue
                .push(source.first_send_ns(), Event::SourceSend(i as u32));
        }
        for (i, x) in self.exchanges.iter().enumerate() {
            let start = self.flows[x.spec.request_flow as usize]
                .start_ns
                .max(self.flows[x.spec.response_flow as usize].start_ns);
            self.queue.push(start, Event::ExchangeBegin(i as u32));
        }
    }

    /// Run as with many flows or as with few (fetching flow state ahead, queueing delayed-ACK
    /// deadlines apart), whatever their number. Only the speed of a run may differ:
    /// `tests/many_flows.rs` checks that the outputs are the same.
    pub fn as_many_flows(mut self, many: bool) -> Self {
        self.many_flows = many;
        self
    }

    /// Run to the end of the scenario and collect the output, telling `progress` how far it
    /// got every [`EVENTS_PER_UPDATE`] events and stopping when it says so.
    pub fn run(mut self, progress: &Progress) -> Result<Output, RunError> {
        let wall = Instant::now();
        let end_ns = self.duration_ns;
        let mut events: u64 = 0;
        while let Some((now_ns, event)) = self.queue.pop_until(end_ns) {
            self.now_ns = now_ns;
            self.handle(event)?;
            events += 1;
            if events % EVENTS_PER_UPDATE == 0 && !progress.update(now_ns, events) {
                return Err(RunError::Stopped);
            }
        }
        self.now_ns = end_ns;
        progress.update(end_ns, events);
        Ok(self.finish(wall.elapsed().as_secs_f64()))
    }

    fn handle(&mut self, event: Event) -> Result<(), RunError> {
        match event {
            Event::LinkExit(link) => self.on_link_exit(link),
            Event::LinkTxDone(link) => self.on_link_tx_done(link),
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
            Event::RouteChange(f) => self.flows[f as usize].route += 1,
            Event::Rto(f) => {
                let w = self.flows[f as usize]
                    .sender
                    .on_rto_wake(self.now_ns, &mut self.outbox);
                self.after_sender(f, w);
            }
            Event::SendWake(f) => {
                let w = self.flows[f as usize]
                    .sender
                    .on_send_wake(self.now_ns, &mut self.outbox);
                self.after_sender(f, w);
            }
            Event::DelayedAck(f) => self.on_delayed_ack(f),
            Event::WindowUpdate(f) => self.on_window_update(f),
            Event::SourceSend(s) => self.on_source_send(s),
            Event::ExchangeBegin(x) => {
                let action = self.exchanges[x as usize].begin(self.now_ns);
                self.act(x, action);
            }
            Event::Sample => return self.on_sample(),
        }
        Ok(())
    }

    /// Schedule what the sender asked for and put its packets on their way.
    fn after_sender(&mut self, f: FlowId, w: Wakeups) {
        if let Some(t) = w.rto_ns {
            self.queue.push(t, Event::Rto(f));
        }
        if let Some(t) = w.send_ns {
            self.queue.push(t, Event::SendWake(f));
        }
        let route = self.flows[f as usize].route;
        let first_link = self.routes.first_link(Kind::Data, f, route);
        let mut out = std::mem::take(&mut self.outbox);
        for mut pkt in out.drain(..) {
            self.data.sent += 1;
            pkt.route = route;
            self.offer(first_link, pkt);
        }
        self.outbox = out;
    }

    fn on_source_send(&mut self, s: u32) {
        let (pkt, next) = self.sources[s as usize].send(self.now_ns);
        if let Some(t) = next {
            self.queue.push(t, Event::SourceSend(s));
        }
        if let Some(pkt) = pkt {
            self.offer(self.routes.first_link(Kind::Udp, s, 0), pkt);
        }
    }

    fn offer(&mut self, link: LinkId, pkt: Packet) {
        if pkt.kind == Kind::Data && pkt.hop == 0 && self.induced_drops.take(pkt.flow, self.now_ns)
        {
            self.links[link as usize].counters.induced_drops += 1;
            self.data.dropped += 1;
            return;
        }
        match self.links[link as usize].offer(self.now_ns, pkt) {
            Offer::Dropped(_) => self.count_drop(&pkt),
            Offer::AcceptedAsHead(t) => self.queue.push(t, Event::LinkExit(link)),
            Offer::AcceptedStartsTx(t) => self.queue.push(t, Event::LinkTxDone(link)),
            Offer::Accepted => {}
        }
        self.count_discarded(link);
    }

    /// A scheduled link finished a transmission: schedule what follows and count the packets
    /// its discipline dropped as it dequeued the next one.
    fn on_link_tx_done(&mut self, link: LinkId) {
        let done = self.links[link as usize].on_tx_done(self.now_ns);
        if let Some(t) = done.next_tx_done_ns {
            self.queue.push(t, Event::LinkTxDone(link));
        }
        if let Some(t) = done.exit_head_ns {
            self.queue.push(t, Event::LinkExit(link));
        }
        self.count_discarded(link);
    }

    /// Count the packets a scheduled link's discipline discarded at its last call.
    fn count_discarded(&mut self, link: LinkId) {
        while let Some(pkt) = self.links[link as usize].pop_discarded() {
            self.count_drop(&pkt);
        }
    }

    fn count_drop(&mut self, pkt: &Packet) {
        match pkt.kind {
            Kind::Data => self.data.dropped += 1,
            Kind::Udp => self.sources[pkt.flow as usize].stats.packets_dropped += 1,
            Kind::Ack => {}
        }
    }

    fn on_link_exit(&mut self, link: LinkId) {
        let (mut pkt, next) = self.links[link as usize].pop();
        if let Some(t) = next {
            self.queue.push(t, Event::LinkExit(link));
            if self.many_flows {
                self.prefetch_for(link);
            }
        }
        if let Some((captured, pcap)) = &mut self.capture {
            if *captured == link {
                let mss = match pkt.kind {
                    Kind::Udp => 0,
                    _ => self.flows[pkt.flow as usize].mss_bytes,
                };
                pcap.record(self.now_ns, &pkt, mss);
            }
        }
        if self.takes_detour(link, pkt) {
            return;
        }
        pkt.hop += 1;
        match self
            .routes
            .path(pkt.kind, pkt.flow, pkt.route)
            .get(usize::from(pkt.hop))
        {
            Some(&next_link) => self.offer(next_link, pkt),
            None => match pkt.kind {
                Kind::Data => self.deliver_data(pkt),
                Kind::Ack => self.deliver_ack(pkt),
                Kind::Udp => self.sources[pkt.flow as usize].on_delivered(
                    self.now_ns,
                    pkt.seq,
                    pkt.size_bytes,
                ),
            },
        }
    }

    /// Whether the link holds the packet back, sending it along its detour, where it keeps its
    /// hop: it goes on along its route as it leaves the detour.
    fn takes_detour(&mut self, link: LinkId, pkt: Packet) -> bool {
        let Some(detour) = self.detours.get_mut(link as usize).and_then(Option::as_mut) else {
            return false;
        };
        if !detour.reorder.holds_next() {
            return false;
        }
        let line = detour.line;
        // A delay line takes every packet; only the first onto it needs an event.
        if let Offer::AcceptedAsHead(t) = self.links[line as usize].offer(self.now_ns, pkt) {
            self.queue.push(t, Event::LinkExit(line));
        }
        true
    }

    /// Start loading the state the link's next packets will read when they arrive at its end:
    /// the flow's own lines for the second, and what those lines point to for the first (they
    /// were fetched one exit ago, so reading the pointers does not wait).
    fn prefetch_for(&self, link: LinkId) {
        let link = &self.links[link as usize];
        if let Some(pkt) = link.upcoming(1).filter(|p| self.arrives(p)) {
            let flow = &self.flows[pkt.flow as usize];
            if pkt.kind == Kind::Data {
                prefetch(&flow.receiver);
                prefetch(&flow.delayed_ack);
            } else {
                prefetch(&flow.sender);
            }
        }
        if let Some(pkt) = link.upcoming(0).filter(|p| self.arrives(p)) {
            if pkt.kind == Kind::Ack {
                self.flows[pkt.flow as usize].sender.prefetch_indirect();
            }
        }
    }

    /// Whether the packet, one of a flow's, ends its path at its next exit.
    fn arrives(&self, pkt: &Packet) -> bool {
        pkt.kind != Kind::Udp
            && self.routes.path(pkt.kind, pkt.flow, pkt.route).len() == usize::from(pkt.hop) + 1
    }

    fn deliver_data(&mut self, pkt: Packet) {
        let f = pkt.flow;
        let flow = &mut self.flows[f as usize];
        if flow.receiver.take_periodic_drop() {
            self.data.dropped += 1;
            return;
        }
        self.data.delivered += 1;
        let receiver = &flow.receiver;
        if receiver.held_sack_would_lose_a_block(pkt.seq)
            || (receiver.ecn.flushes_delayed_ack(pkt.ecn) && receiver.ack_pending())
        {
            // The held ACK first, with the blocks and the CE state as they stood.
            self.send_ack(f);
        }
        let flow = &mut self.flows[f as usize];
        let ecn_acks_now = flow.receiver.ecn.on_segment(pkt.ecn, pkt.cwr);
        match flow
            .receiver
            .on_segment(self.now_ns, pkt.seq, pkt.timestamp)
        {
            Reply::AckNow => self.send_ack(f),
            Reply::Delay(_) if ecn_acks_now => self.send_ack(f),
            Reply::Delay(deadline) => {
                if let TimerAction::Schedule(t) = flow.delayed_ack.set(deadline) {
                    if self.many_flows {
                        self.queue.push_in_order(t, Event::DelayedAck(f));
                    } else {
                        self.queue.push(t, Event::DelayedAck(f));
                    }
                }
            }
        }
        if let Some(x) = self.flow_exchange[f as usize] {
            let rcv_nxt = self.flows[f as usize].receiver.rcv_nxt();
            let action = self.exchanges[x as usize].on_delivered(self.now_ns, f, rcv_nxt);
            self.act(x, action);
        }
    }

    /// Carry out what an exchange asked for.
    fn act(&mut self, x: u32, action: Action) {
        match action {
            Action::Nothing => {}
            Action::Write { flow, bytes } => {
                let (end, w) =
                    self.flows[flow as usize]
                        .sender
                        .write(self.now_ns, bytes, &mut self.outbox);
                self.exchanges[x as usize].written(end);
                self.after_sender(flow, w);
            }
            Action::NextAt(t) => self.queue.push(t, Event::ExchangeBegin(x)),
        }
    }

    fn on_delayed_ack(&mut self, f: FlowId) {
        if self.many_flows {
            // Most wake-ups only find their timer already met, but each reads it cold.
            if let Some(Event::DelayedAck(later)) = self.queue.in_order_ahead(DELAYED_ACK_AHEAD) {
                prefetch(&self.flows[later as usize].delayed_ack);
            }
        }
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
        ack.route = flow.route;
        flow.receiver.make_ack(self.now_ns, &mut ack);
        if let Some(t) = flow.receiver.window_reopens_at(self.now_ns) {
            if let TimerAction::Schedule(t) = flow.window_update.set(t) {
                self.queue.push(t, Event::WindowUpdate(f));
            }
        }
        self.offer(self.routes.first_link(Kind::Ack, f, ack.route), ack);
    }

    /// The receiving application has read enough to reopen the window: say so.
    fn on_window_update(&mut self, f: FlowId) {
        match self.flows[f as usize].window_update.on_wake(self.now_ns) {
            TimerAction::Fire => self.send_ack(f),
            TimerAction::Schedule(t) => self.queue.push(t, Event::WindowUpdate(f)),
            TimerAction::Nothing => {}
        }
    }

    fn deliver_ack(&mut self, pkt: Packet) {
        let f = pkt.flow;
        let w = self.flows[f as usize]
            .sender
            .on_ack(self.now_ns, &pkt, &mut self.outbox);
        self.after_sender(f, w);
    }

    fn on_sample(&mut self) -> Result<(), RunError> {
        self.recorder
            .sample(self.now_ns, &self.flows, &mut self.links)?;
        self.samples_taken += 1;
        let next = (self.samples_taken + 1) * self.sample_interval_ns;
        if next <= self.duration_ns {
            self.queue.push(next, Event::Sample);
        }
        Ok(())
    }

    fn finish(mut self, wall_seconds: f64) -> Output {
        let end_ns = self.duration_ns;
        let links: Vec<_> = self
            .recorder
            .recorded_links
            .iter()
            .map(|&i| summary::link_summary(&mut self.links[i], end_ns, self.largest_packet_bytes))
            .collect();
        let summary = Summary {
            flows: self
                .flows
                .iter()
                .enumerate()
                .map(|(i, f)| summary::flow_summary(i, f, end_ns))
                .collect(),
            bottleneck: links[0].clone(),
            links,
            sources: self
                .sources
                .iter()
                .enumerate()
                .map(|(i, s)| summary::source_summary(i, s, end_ns))
                .collect(),
            exchanges: self
                .exchanges
                .iter()
                .map(summary::exchange_summary)
                .collect(),
            sim: self.sim_summary(wall_seconds),
        };
        let link_names = self
            .recorder
            .recorded_links
            .iter()
            .map(|&i| self.links[i].name.clone())
            .collect();
        Output {
            summary,
            flows: self.recorder.flows,
            links: self.recorder.links,
            link_names,
            pcap: self.capture.map(|(_, pcap)| pcap.into_bytes()),
        }
    }

    fn sim_summary(&self, wall_seconds: f64) -> SimSummary {
        let in_flight = self
            .links
            .iter()
            .map(|l| l.packets().filter(|p| p.kind == Kind::Data).count() as u64)
            .sum();
        SimSummary {
            events: self.queue.events(),
            packets_sent: self.data.sent,
            packets_delivered: self.data.delivered,
            packets_dropped: self.data.dropped,
            packets_in_flight: in_flight,
            sim_seconds: secs(self.duration_ns),
            wall_seconds,
        }
    }
}
