//! Topologies: the links declared by the scenario, and the route of every flow and source
//! through them.
//!
//! Each declared link has a forward direction (the one its queue, AQM and loss describe) and,
//! when something can queue or drop there, a reverse direction with the same rate, delay and
//! queue. Data of forward flows crosses the forward directions of its route; its ACKs come back
//! over the reverse directions that exist, then over a private return path carrying the rest
//! of the flow's base RTT. Reverse flows do the opposite, so their ACKs meet the forward data.
//!
//! Where a flow's private delay sits is a free choice for a single bottleneck: moving delay
//! from before a queue to after it only shifts that flow's own clock, leaving the queue, drops
//! and every RTT unchanged. So it all sits on the ACK side, saving an event per data packet.
//! Flows of request-response exchanges are the exception: the time their data takes to
//! arrive is what an exchange measures, so their private delay is split evenly. A flow that
//! gives its data direction's delay (`forward_delay_ns`: a path slower one way than the other)
//! has its private delay split so: its data take that, its ACKs the rest of the RTT. Private
//! paths of the same delay and direction share one delay line (`Topology::delay_line`).
//!
//! A link that reorders has a detour: a delay line of its reordering delay, which the packets
//! it holds back take on leaving the link before they go on along their route, so those sent
//! after them overtake them. Only the forward direction reorders.

use std::collections::BTreeMap;

use crate::engine::{FlowId, LinkId};
use crate::net::link::Link;
use crate::net::queue::Limit;
use crate::net::routes::Routes;
use crate::scenario::{Flow, LinkSpec, Scenario};
use tcpeval_netem::black_hole::MtuBlackHole;
use tcpeval_netem::reorder::Reorder;

#[derive(Debug)]
pub struct Topology {
    pub links: Vec<Link>,
    /// Forward direction of declared link i is `LinkId` i; the first declared link is "the
    /// bottleneck" of the summary.
    pub reverse: Vec<Option<LinkId>>,
    pub routes: Routes,
    /// The private delay lines by (delay, reverse), each shared by the flows it fits.
    delay_lines: BTreeMap<(u64, bool), LinkId>,
    /// By declared link, its detour if it reorders; empty when none does.
    pub detours: Vec<Option<Detour>>,
}

/// Where a reordering link sends the packets it holds back.
#[derive(Debug, Clone)]
pub struct Detour {
    pub reorder: Reorder,
    pub line: LinkId,
}

/// Seeds of the loss and AQM processes, derived from the scenario seed so that each has its
/// own stream.
const LOSS_STREAM: u64 = 0x6c6f_7373;
const AQM_STREAM: u64 = 0x0061_716d_0000_0000;
const REORDER_STREAM: u64 = 0x7265_6f72_0000_0000;

pub fn build(s: &Scenario) -> Topology {
    let mut links: Vec<Link> = s
        .links
        .iter()
        .enumerate()
        .map(|(i, spec)| make_link(s, i, spec, false))
        .collect();
    let reverse = (0..s.links.len())
        .map(|i| {
            needs_reverse(s, i).then(|| {
                links.push(make_link(s, i, &s.links[i], true));
                (links.len() - 1) as LinkId
            })
        })
        .collect::<Vec<_>>();
    let detours = detours(s, &mut links);
    let mut topo = Topology {
        links,
        reverse,
        routes: Routes::default(),
        delay_lines: BTreeMap::new(),
        detours,
    };
    let in_exchange = |f: usize| {
        s.exchanges
            .iter()
            .any(|x| [x.request_flow, x.response_flow].contains(&(f as u32)))
    };
    for (i, f) in s.flows.iter().enumerate() {
        let split = Split::of(f, in_exchange(i));
        let (data, ack) = topo.flow_route(s, &f.route, f.reverse, f.rtt_ns, split);
        topo.routes.add_flow(data, ack);
        for (n, change) in f.route_changes.iter().enumerate() {
            let rtt_ns = rtt_on_route(s, f, &change.route);
            let split = split.on_route(s, &f.route, &change.route);
            let (data, ack) = topo.flow_route(s, &change.route, f.reverse, rtt_ns, split);
            let route = u8::try_from(n + 1).expect("validated: at most 255 route changes");
            topo.routes.add_flow_route(i as FlowId, route, data, ack);
        }
    }
    for spec in &s.sources {
        let (route, reverse) = spec.route();
        let data = topo.directions(s, route, reverse);
        topo.routes.add_source(data);
    }
    topo
}

/// The detour of each link that reorders, its delay line added to `links`.
fn detours(s: &Scenario, links: &mut Vec<Link>) -> Vec<Option<Detour>> {
    if s.links.iter().all(|l| l.reorder.is_none()) {
        return Vec::new();
    }
    let detour = |(i, spec): (usize, &LinkSpec)| {
        let reorder = spec.reorder?;
        let name = format!("{}:reordered", spec.name);
        links.push(Link::delay_line(&name, reorder.delay_ns));
        Some(Detour {
            reorder: reorder.build(s.seed ^ REORDER_STREAM ^ ((i as u64) << 16)),
            line: (links.len() - 1) as LinkId,
        })
    };
    s.links.iter().enumerate().map(detour).collect()
}

/// Where a flow's private delay sits: all on the ACK side, half and half, or what makes its
/// data direction's delay, links included, the one given.
#[derive(Debug, Clone, Copy)]
enum Split {
    AllOnAcks,
    Even,
    ForwardDelay(u64),
}

impl Split {
    fn of(f: &Flow, in_exchange: bool) -> Self {
        match f.forward_delay_ns {
            Some(forward_ns) => Split::ForwardDelay(forward_ns),
            None if in_exchange => Split::Even,
            None => Split::AllOnAcks,
        }
    }

    /// The split on a later route: the private part of the data direction's delay stays.
    fn on_route(self, s: &Scenario, first: &[String], later: &[String]) -> Self {
        match self {
            Split::ForwardDelay(forward_ns) => {
                Split::ForwardDelay(forward_ns - one_way_ns(s, first) + one_way_ns(s, later))
            }
            other => other,
        }
    }
}

/// The sum of the delays of `route`'s links.
fn one_way_ns(s: &Scenario, route: &[String]) -> u64 {
    route
        .iter()
        .map(|name| s.links[s.link_index(name).expect("validated")].delay_ns)
        .sum()
}

/// The flow's base RTT on `route`: its private path (what its RTT adds to its first route's
/// delay, both ways) does not change, only the links it crosses.
fn rtt_on_route(s: &Scenario, f: &Flow, route: &[String]) -> u64 {
    f.rtt_ns - 2 * one_way_ns(s, &f.route) + 2 * one_way_ns(s, route)
}

/// A reverse direction exists where reverse data, reverse sources, reverse loss or a reverse
/// outage make it more than a constant delay.
fn needs_reverse(s: &Scenario, link: usize) -> bool {
    let name = &s.links[link].name;
    let used_reversed = s
        .flows
        .iter()
        .any(|f| f.reverse && f.routes().any(|route| route.contains(name)))
        || s.sources
            .iter()
            .any(|src| matches!(src.route(), (route, true) if route.contains(name)));
    used_reversed
        || !s.links[link].reverse_loss.is_none()
        || !s.links[link].reverse_outages_ns.is_empty()
}

fn make_link(s: &Scenario, i: usize, spec: &LinkSpec, reverse: bool) -> Link {
    let limit = Limit::from_spec(spec.queue_pkts, spec.queue_bytes)
        .expect("validated: one queue limit is set");
    let (name, loss, outages) = if reverse {
        let name = format!("{}:reverse", spec.name);
        (name, &spec.reverse_loss, &spec.reverse_outages_ns)
    } else {
        (spec.name.clone(), &spec.loss, &spec.outages_ns)
    };
    let seed = s.seed ^ LOSS_STREAM ^ ((2 * i as u64 + u64::from(reverse)) << 32);
    let link = Link::bottleneck(
        &name,
        spec.rate_bps,
        spec.delay_ns,
        limit,
        spec.aqm.build(seed ^ AQM_STREAM),
        loss.build(seed),
    )
    .with_rate_changes(&spec.rate_changes)
    .with_outages(outages);
    if reverse {
        return link;
    }
    let link = link.with_black_hole(spec.mtu_black_hole_bytes.map(MtuBlackHole::new));
    match spec.policer {
        Some(p) => link.with_policer(p.build()),
        None => link,
    }
}

impl Topology {
    /// The link directions crossed by data sent over `route`.
    fn directions(&self, s: &Scenario, route: &[String], reverse: bool) -> Vec<LinkId> {
        route
            .iter()
            .map(|name| {
                let i = s
                    .link_index(name)
                    .expect("validated: routes name declared links");
                if reverse {
                    self.reverse[i].expect("reverse data creates the reverse direction")
                } else {
                    i as LinkId
                }
            })
            .collect()
    }

    /// The links a flow's data crosses, and those its ACKs cross back.
    fn flow_route(
        &mut self,
        s: &Scenario,
        route: &[String],
        reverse: bool,
        rtt_ns: u64,
        split: Split,
    ) -> (Vec<LinkId>, Vec<LinkId>) {
        let mut data = self.directions(s, route, reverse);
        let mut ack: Vec<LinkId> = route
            .iter()
            .rev()
            .filter_map(|name| {
                let i = s.link_index(name).expect("validated");
                if reverse {
                    Some(i as LinkId)
                } else {
                    self.reverse[i]
                }
            })
            .collect();
        let delay_ns = |links: &[LinkId]| -> u64 {
            links.iter().map(|&l| self.links[l as usize].delay_ns).sum()
        };
        let data_crossed_ns = delay_ns(&data);
        let private_ns = rtt_ns - data_crossed_ns - delay_ns(&ack); // validated: rtt ≥ twice the route's delay
        let data_side_ns = match split {
            Split::AllOnAcks => 0,
            Split::Even => private_ns / 2,
            // Validated: the data direction's delay covers its links, the ACKs' the rest.
            Split::ForwardDelay(forward_ns) => forward_ns - data_crossed_ns,
        };
        if data_side_ns > 0 {
            data.push(self.delay_line(data_side_ns, reverse));
        }
        ack.push(self.delay_line(private_ns - data_side_ns, reverse));
        (data, ack)
    }

    /// A pure delay line of `delay_ns` for a flow in the direction `reverse` says, shared by
    /// every private path of that delay and direction. A constant delay keeps its packets in
    /// order whoever sent them, so one FIFO carries them all exactly, and the event queue holds
    /// one head event for it rather than one per flow: fewer pending events to walk past on
    /// every push (ten paced BBR flows: 2.4 M pushes of an ACK path's next head walked past 9.6
    /// events each with a line per flow, 1.8 shared). Forward and reverse flows have their
    /// senders at opposite ends of the path, so their private paths are kept apart, and a
    /// symmetric two-way path stays a mirror image down to the order of simultaneous events.
    fn delay_line(&mut self, delay_ns: u64, reverse: bool) -> LinkId {
        if let Some(&line) = self.delay_lines.get(&(delay_ns, reverse)) {
            return line;
        }
        self.links
            .push(Link::delay_line(&format!("delay {delay_ns} ns"), delay_ns));
        let line = (self.links.len() - 1) as LinkId;
        self.delay_lines.insert((delay_ns, reverse), line);
        line
    }
}
