//! Topologies: which links exist and the route of each flow through them.
//!
//! The dumbbell: every flow crosses one shared bottleneck; its base RTT comes from a private,
//! uncongested return path. All of a flow's propagation delay sits on that return path, after
//! the receiver. That is no approximation: shifting a flow's delay from before the bottleneck
//! to after it shifts the flow's own clock by a constant and leaves the bottleneck's arrivals,
//! queue, drops and every RTT unchanged; it saves one event per packet.

use crate::engine::LinkId;
use crate::net::link::Link;
use crate::net::loss::BernoulliLoss;
use crate::net::queue::{DropTail, Limit};
use crate::scenario::Scenario;

/// The bottleneck is always link 0.
pub const BOTTLENECK: LinkId = 0;

/// Links in both directions of one flow.
#[derive(Debug, Clone)]
pub struct Route {
    pub data: Vec<LinkId>,
    pub ack: Vec<LinkId>,
}

#[derive(Debug)]
pub struct Topology {
    pub links: Vec<Link>,
    pub routes: Vec<Route>,
}

/// Seed of the bottleneck's loss process, derived from the scenario seed so that each random
/// process has its own stream.
const BOTTLENECK_LOSS_STREAM: u64 = 0x6c6f_7373;

pub fn dumbbell(s: &Scenario) -> Topology {
    let b = &s.bottleneck;
    let limit = match (b.queue_pkts, b.queue_bytes) {
        (Some(p), _) => Limit::Packets(p),
        (None, Some(bytes)) => Limit::Bytes(bytes),
        (None, None) => unreachable!("validated: one queue limit is set"),
    };
    let loss = BernoulliLoss::new(b.loss, s.seed ^ BOTTLENECK_LOSS_STREAM);
    let mut links = vec![Link::bottleneck(
        "bottleneck",
        b.rate_bps,
        0,
        DropTail { limit },
        loss,
    )];
    let routes = s
        .flows
        .iter()
        .enumerate()
        .map(|(i, f)| {
            links.push(Link::delay_line(&format!("return{i}"), f.rtt_ns));
            Route {
                data: vec![BOTTLENECK],
                ack: vec![links.len() as LinkId - 1],
            }
        })
        .collect();
    Topology { links, routes }
}
