//! The routes packets follow: each distinct path stored once, and per flow and per source the
//! index of the paths it takes.
//!
//! Every hop of every packet looks its route up, so the lookup must not touch the sending
//! flow's own state: with thousands of flows that state is rarely in cache, and reading a
//! route out of it cost more than anything else a hop does (10,000 flows: 15% of the run on
//! that one load). Here a hop reads 8 bytes of a dense table and a path that flows on the same
//! links share, so it stays in cache however many flows there are.
//!
//! A flow whose route changes during the run has its later routes apart, by the number its
//! packets carry (`Packet::route`): a packet finishes the path it was sent on, so the links of
//! the old route deliver (or drop) what was already on them, as a rerouted network does with
//! packets already past the point where the routes part.

use std::collections::HashMap;

use crate::engine::FlowId;

use crate::engine::LinkId;
use crate::packet::Kind;

/// Index of a distinct path.
type PathId = u32;

#[derive(Debug, Default)]
pub struct Routes {
    /// The distinct paths, each the links crossed in order.
    paths: Vec<Vec<LinkId>>,
    /// Where each path is in `paths`, to store it once (used while the topology is built).
    index: HashMap<Vec<LinkId>, PathId>,
    /// Each flow's data path and ACK path on its first route.
    flows: Vec<[PathId; 2]>,
    /// The data and ACK paths of the later routes, by flow and route number (from 1).
    later: HashMap<(FlowId, u8), [PathId; 2]>,
    /// Each background source's path.
    sources: Vec<PathId>,
}

impl Routes {
    /// Add the next flow, with the links its data and its ACKs cross.
    pub fn add_flow(&mut self, data: Vec<LinkId>, ack: Vec<LinkId>) {
        let ids = [self.intern(data), self.intern(ack)];
        self.flows.push(ids);
    }

    /// Add route number `route` (from 1) of flow `flow`, with the links its data and ACKs cross.
    pub fn add_flow_route(&mut self, flow: FlowId, route: u8, data: Vec<LinkId>, ack: Vec<LinkId>) {
        let ids = [self.intern(data), self.intern(ack)];
        self.later.insert((flow, route), ids);
    }

    /// Add the next background source, with the links its datagrams cross.
    pub fn add_source(&mut self, path: Vec<LinkId>) {
        let id = self.intern(path);
        self.sources.push(id);
    }

    fn intern(&mut self, path: Vec<LinkId>) -> PathId {
        let next = self.paths.len() as PathId;
        *self.index.entry(path).or_insert_with_key(|path| {
            self.paths.push(path.clone());
            next
        })
    }

    /// The links a packet of this kind crosses, for flow or source `owner` (`Packet::flow`)
    /// on its route number `route` (`Packet::route`; 0 for sources).
    #[inline]
    pub fn path(&self, kind: Kind, owner: u32, route: u8) -> &[LinkId] {
        let id = match kind {
            Kind::Data => self.flow_paths(owner, route)[0],
            Kind::Ack => self.flow_paths(owner, route)[1],
            Kind::Udp => self.sources[owner as usize],
        };
        &self.paths[id as usize]
    }

    #[inline]
    fn flow_paths(&self, flow: FlowId, route: u8) -> [PathId; 2] {
        if route == 0 {
            self.flows[flow as usize]
        } else {
            self.later[&(flow, route)]
        }
    }

    /// The link a packet of this kind enters first.
    pub fn first_link(&self, kind: Kind, owner: u32, route: u8) -> LinkId {
        self.path(kind, owner, route)[0]
    }

    /// How many distinct paths the flows and sources take.
    pub fn distinct_paths(&self) -> usize {
        self.paths.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flows_on_the_same_links_share_one_path() {
        let mut routes = Routes::default();
        routes.add_flow(vec![0, 2], vec![1, 3]);
        routes.add_flow(vec![0, 2], vec![1, 3]);
        routes.add_flow(vec![0, 2], vec![1, 4]);
        routes.add_source(vec![0, 2]);
        assert_eq!(routes.distinct_paths(), 3);
        assert_eq!(routes.path(Kind::Data, 1, 0), [0, 2]);
        assert_eq!(routes.path(Kind::Ack, 2, 0), [1, 4]);
        assert_eq!(routes.path(Kind::Udp, 0, 0), [0, 2]);
        assert_eq!(routes.first_link(Kind::Ack, 0, 0), 1);
    }

    #[test]
    fn a_packet_keeps_the_route_it_was_sent_on() {
        let mut routes = Routes::default();
        routes.add_flow(vec![0], vec![1]);
        routes.add_flow_route(0, 1, vec![2, 3], vec![4]);
        assert_eq!(routes.path(Kind::Data, 0, 0), [0]);
        assert_eq!(routes.path(Kind::Data, 0, 1), [2, 3]);
        assert_eq!(routes.first_link(Kind::Ack, 0, 1), 4);
    }
}
