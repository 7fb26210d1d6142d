//! Induced losses (`drop_at`): each flow's data packet that reaches the first link of its
//! route at or after a listed time is dropped there.
//!
//! Kept apart from the flows' state, with a count of the drops still to come: every data
//! packet sent asks here, and once none is due (in most scenarios from the start) the answer
//! costs no look-up of the sender's flow, which with thousands of flows would be a cache miss
//! per packet.

use std::collections::VecDeque;

use crate::engine::FlowId;
use crate::scenario::Scenario;

#[derive(Debug, Default)]
pub struct InducedDrops {
    /// Per flow, the drop times still to come, earliest first.
    due_ns: Vec<VecDeque<u64>>,
    /// How many drops are still to come, over all flows.
    left: usize,
}

impl InducedDrops {
    pub fn new(s: &Scenario) -> Self {
        let due_ns: Vec<VecDeque<u64>> = s
            .flows
            .iter()
            .map(|f| {
                let mut times = f.drop_at_ns.clone();
                times.sort_unstable();
                times.into()
            })
            .collect();
        let left = due_ns.iter().map(VecDeque::len).sum();
        Self { due_ns, left }
    }

    /// Whether the data packet of `flow` reaching its first link at `now_ns` is dropped.
    pub fn take(&mut self, flow: FlowId, now_ns: u64) -> bool {
        if self.left == 0 {
            return false;
        }
        let due = &mut self.due_ns[flow as usize];
        if due.front().is_some_and(|&t| t <= now_ns) {
            due.pop_front();
            self.left -= 1;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_listed_time_drops_the_next_packet_of_its_flow_once() {
        let mut drops = InducedDrops {
            due_ns: vec![VecDeque::from([5, 9]), VecDeque::new()],
            left: 2,
        };
        assert!(!drops.take(0, 4), "not yet due");
        assert!(!drops.take(1, 6), "another flow's time");
        assert!(drops.take(0, 6));
        assert!(!drops.take(0, 7), "one packet per listed time");
        assert!(drops.take(0, 20));
        assert_eq!(drops.left, 0);
        assert!(!drops.take(0, 30));
    }
}
