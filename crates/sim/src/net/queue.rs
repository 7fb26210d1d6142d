//! Queue disciplines decide, when a packet arrives, whether it may join the queue.
//!
//! They see only the current backlog and the time, and do no I/O, so a real-time link
//! emulator can reuse them. Drop-tail is the discipline of the studies' testbeds.

/// The buffer limit of a drop-tail queue.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug, Clone, Copy)]
pub struct DropTail {
    pub limit: Limit,
}

impl DropTail {
    /// Admit a packet of `size_bytes` onto a backlog of `queued_pkts`/`queued_bytes`
    /// (the packet being transmitted counts as queued).
    pub fn admits(&self, queued_pkts: u64, queued_bytes: u64, size_bytes: u32) -> bool {
        match self.limit {
            Limit::Packets(n) => queued_pkts < n,
            Limit::Bytes(n) => queued_bytes + u64::from(size_bytes) <= n,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_limit_counts_packets() {
        let q = DropTail {
            limit: Limit::Packets(2),
        };
        assert!(q.admits(1, 3000, 1500));
        assert!(!q.admits(2, 0, 1500));
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let q = DropTail {
            limit: Limit::Bytes(3000),
        };
        assert!(q.admits(1, 1500, 1500));
        assert!(!q.admits(1, 1501, 1500));
    }
}
