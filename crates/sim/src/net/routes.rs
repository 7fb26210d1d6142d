//! The routes packets follow: each distinct path stored once, and per flow and per source the
//! index of the paths it takes.
//!
//! Every hop of every packet looks its route up, so the lookup must not touch the sending
//! flow's own state: with thousands of flows that state is rarely in cache, and reading a
//! route out of it cost more than anything else a hop does (10,000 flows: 15% of the run on
//! that one load). Here a hop reads 8 bytes of a dense table and a path that flows on the same
//! links share, so it stays in cache however many flows there are.

use std::collections::HashMap;

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
    /// Each flow's data path and ACK path.
    flows: Vec<[PathId; 2]>,
    /// Each background source's path.
    sources: Vec<PathId>,
}

impl Routes {
    /// Add the next flow, with the links its data and its ACKs cross.
    pub fn add_flow(&mut self, data: Vec<LinkId>, ack: Vec<LinkId>) {
        let ids = [self.intern(data), self.intern(ack)];
        self.flows.push(ids);
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

    /// The links a packet of this kind crosses, for flow or source `owner` (`Packet::flow`).
    #[inline]
    pub fn path(&self, kind: Kind, owner: u32) -> &[LinkId] {
        let id = match kind {
            Kind::Data => self.flows[owner as usize][0],
            Kind::Ack => self.flows[owner as usize][1],
            Kind::Udp => self.sources[owner as usize],
        };
        &self.paths[id as usize]
    }

    /// The link a packet of this kind enters first.
    pub fn first_link(&self, kind: Kind, owner: u32) -> LinkId {
        self.path(kind, owner)[0]
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
        assert_eq!(routes.path(Kind::Data, 1), [0, 2]);
        assert_eq!(routes.path(Kind::Ack, 2), [1, 4]);
        assert_eq!(routes.path(Kind::Udp, 0), [0, 2]);
        assert_eq!(routes.first_link(Kind::Ack, 0), 1);
    }
}
