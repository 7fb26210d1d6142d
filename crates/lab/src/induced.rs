//! Induced losses (`drop_at`): per endpoint, the first TCP data segment from it that arrives at
//! the forward bottleneck at or after each listed time is dropped there, before the queue. The
//! simulator drops a flow's data packet reaching the first link of its route the same way
//! (`crates/sim/src/induced_drops.rs`); here a flow is known by its group's address, which is
//! why the front end asks this only of groups of one flow.
//!
//! Times are given from the emulator's start and kept on the clock its arrivals are stamped
//! with; a count of the drops still to come lets every other segment pass with no look-up.

use std::collections::VecDeque;

use crate::config::Endpoint;

#[derive(Debug, Default)]
pub struct InducedDrops {
    /// Per endpoint, the drop times still to come (arrival clock), earliest first.
    due_ns: Vec<VecDeque<u64>>,
    /// Per endpoint, when each drop happened: the dropped segment's arrival, since `origin_ns`.
    done_ns: Vec<Vec<u64>>,
    origin_ns: u64,
    /// How many drops are still to come, over all endpoints.
    left: usize,
}

impl InducedDrops {
    /// The endpoints' `drop_at_ns`, counted from `origin_ns` on the arrival clock.
    pub fn new(endpoints: &[Endpoint], origin_ns: u64) -> Self {
        let due_ns: Vec<VecDeque<u64>> = endpoints
            .iter()
            .map(|e| {
                let mut times: Vec<u64> = e
                    .drop_at_ns
                    .iter()
                    .map(|&t| origin_ns.saturating_add(t))
                    .collect();
                times.sort_unstable();
                times.into()
            })
            .collect();
        // Room for every drop now: none is allocated while relaying.
        let done_ns = due_ns.iter().map(|d| Vec::with_capacity(d.len())).collect();
        let left = due_ns.iter().map(VecDeque::len).sum();
        Self {
            due_ns,
            done_ns,
            origin_ns,
            left,
        }
    }

    /// Whether the data segment from `endpoint` arriving at `now_ns` is dropped.
    pub fn take(&mut self, endpoint: Option<u16>, now_ns: u64) -> bool {
        if self.left == 0 {
            return false;
        }
        let Some(e) = endpoint.map(usize::from) else {
            return false;
        };
        let due = &mut self.due_ns[e];
        if due.front().is_none_or(|&t| t > now_ns) {
            return false;
        }
        due.pop_front();
        self.left -= 1;
        self.done_ns[e].push(now_ns - self.origin_ns);
        true
    }

    /// When `endpoint`'s drops happened, since the origin.
    pub fn done_ns(&self, endpoint: usize) -> &[u64] {
        self.done_ns.get(endpoint).map_or(&[], Vec::as_slice)
    }
}

#[cfg(test)]
mod tests {
    use std::net::Ipv4Addr;

    use super::*;

    fn endpoint(last: u8, drop_at_ns: Vec<u64>) -> Endpoint {
        Endpoint {
            ip: Ipv4Addr::new(10, 201, 1, last),
            forward_delay_ns: 0,
            reverse_delay_ns: 0,
            drop_at_ns,
        }
    }

    #[test]
    fn each_time_drops_the_first_segment_of_its_endpoint_at_or_after_it_once() {
        // Listed out of order, one time twice: two segments in a row at that time.
        let origin = 1_000;
        let endpoints = [endpoint(1, vec![90, 50, 50]), endpoint(2, vec![])];
        let mut drops = InducedDrops::new(&endpoints, origin);
        assert!(!drops.take(Some(0), origin + 49), "not yet due");
        assert!(!drops.take(Some(1), origin + 60), "another endpoint's time");
        assert!(!drops.take(None, origin + 60), "an unmatched frame");
        assert!(drops.take(Some(0), origin + 50), "at the time");
        assert!(drops.take(Some(0), origin + 51), "the time listed twice");
        assert!(
            !drops.take(Some(0), origin + 52),
            "one segment per listed time"
        );
        assert!(drops.take(Some(0), origin + 200), "after it");
        assert!(!drops.take(Some(0), origin + 300), "none left");
        assert_eq!(drops.done_ns(0), [50, 51, 200]);
        assert_eq!(drops.done_ns(1), [] as [u64; 0]);
    }

    #[test]
    fn no_times_drop_nothing() {
        let mut drops = InducedDrops::default();
        assert!(!drops.take(Some(0), u64::MAX));
        assert_eq!(drops.done_ns(0), [] as [u64; 0]);
    }
}
