//! The propagation delay after the bottleneck: one FIFO per endpoint (plus one, without delay,
//! for frames that match no endpoint). Every packet of a FIFO has the same delay, so each FIFO
//! stays sorted by release time and per-endpoint order is kept; the next packet out is the
//! earliest head. A reordering link has a second set of lines, each the first's delay plus the
//! reordering delay, for the packets it holds back: those sent after them overtake them.

use std::collections::VecDeque;

/// A packet that has left the bottleneck and waits out its propagation delay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InFlight {
    /// The frame buffer holding it.
    pub id: u32,
    pub size_bytes: u32,
    /// Index into the config's endpoints; `None` when unmatched.
    pub endpoint: Option<u16>,
    /// It left the bottleneck marked CE: its IP header is rewritten before it is sent.
    pub ce: bool,
    /// Held back by reordering: its release is the reordering delay later.
    pub held: bool,
    /// Departure order on this direction.
    pub seq: u64,
    /// When its (virtual) transmission at the bottleneck ended.
    pub departure_ns: u64,
    /// When it may go out on the far interface.
    pub release_ns: u64,
}

#[derive(Debug, Clone)]
pub struct DelayLines {
    /// One per endpoint, then the unmatched line; a reordering link's held-back set after.
    lines: Vec<VecDeque<InFlight>>,
    delays_ns: Vec<u64>,
    /// Lines in a set: the endpoints' and the unmatched one.
    set_len: usize,
    len: usize,
}

/// Lines start with room for this many packets each (more grow once, during warm-up).
const INITIAL_LINE_PKTS: usize = 4096;

impl DelayLines {
    /// `delays_ns[i]` is endpoint `i`'s delay; `held_back_ns` the reordering delay, if the
    /// link reorders; `capacity_pkts` the most packets in flight.
    pub fn new(delays_ns: &[u64], held_back_ns: Option<u64>, capacity_pkts: usize) -> Self {
        let per_line = capacity_pkts.min(INITIAL_LINE_PKTS);
        let mut delays = delays_ns.to_vec();
        delays.push(0); // unmatched frames: no added delay
        if let Some(extra_ns) = held_back_ns {
            let held: Vec<u64> = delays.iter().map(|d| d + extra_ns).collect();
            delays.extend(held);
        }
        Self {
            lines: delays
                .iter()
                .map(|_| VecDeque::with_capacity(per_line))
                .collect(),
            delays_ns: delays,
            set_len: delays_ns.len() + 1,
            len: 0,
        }
    }

    /// The line of `endpoint`'s packets, the held-back set's if `held`.
    fn line(&self, endpoint: Option<u16>, held: bool) -> usize {
        let first = if held { self.set_len } else { 0 };
        first + endpoint.map_or(self.set_len - 1, usize::from)
    }

    /// Queue a packet that left the bottleneck at `departure_ns`; fills in `release_ns`.
    pub fn push(&mut self, mut pkt: InFlight) {
        let line = self.line(pkt.endpoint, pkt.held);
        pkt.release_ns = pkt.departure_ns + self.delays_ns[line];
        self.lines[line].push_back(pkt);
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    fn earliest_line(&self) -> Option<usize> {
        let heads = self.lines.iter().enumerate();
        let with_head = heads.filter_map(|(i, l)| l.front().map(|p| (p.release_ns, i)));
        with_head.min().map(|(_, i)| i)
    }

    /// The earliest packet whose release time has come by `now_ns`.
    pub fn pop_due(&mut self, now_ns: u64) -> Option<InFlight> {
        let line = self.earliest_line()?;
        let lines = &mut self.lines[line];
        if lines.front()?.release_ns > now_ns {
            return None;
        }
        self.len -= 1;
        lines.pop_front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pkt(id: u32, endpoint: Option<u16>, departure_ns: u64) -> InFlight {
        InFlight {
            id,
            size_bytes: 100,
            endpoint,
            ce: false,
            held: false,
            seq: u64::from(id),
            departure_ns,
            release_ns: 0,
        }
    }

    #[test]
    fn the_earliest_head_leaves_first_and_each_line_keeps_its_order() {
        let mut d = DelayLines::new(&[50, 10], None, 16);
        d.push(pkt(0, Some(0), 0)); // release 50
        d.push(pkt(1, Some(1), 1)); // 11
        d.push(pkt(2, None, 2)); // 2
        d.push(pkt(3, Some(1), 3)); // 13
        assert_eq!(d.pop_due(1), None);
        let order: Vec<u32> = std::iter::from_fn(|| d.pop_due(100))
            .map(|p| p.id)
            .collect();
        assert_eq!(order, vec![2, 1, 3, 0]);
        assert_eq!(d.len(), 0);
    }

    #[test]
    fn a_held_back_packet_is_overtaken_by_those_of_its_endpoint_within_the_extra_delay() {
        let mut d = DelayLines::new(&[50], Some(20), 16);
        d.push(InFlight {
            held: true,
            ..pkt(0, Some(0), 0)
        }); // release 70
        d.push(pkt(1, Some(0), 10)); // 60
        d.push(pkt(2, Some(0), 30)); // 80
        d.push(InFlight {
            held: true,
            ..pkt(3, None, 31)
        }); // unmatched: 0 + 20
        let order: Vec<(u32, u64)> = std::iter::from_fn(|| d.pop_due(100))
            .map(|p| (p.id, p.release_ns))
            .collect();
        assert_eq!(order, vec![(3, 51), (1, 60), (0, 70), (2, 80)]);
    }
}
