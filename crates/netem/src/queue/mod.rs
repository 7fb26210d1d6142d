//! Queue disciplines: the hard buffer limit every queue has, and the active queue management
//! (AQM) in front of it.
//!
//! They see only the backlog, packet sizes and the time, and do no I/O, so a real-time link
//! emulator can reuse them. Drop-tail (the limit alone) is the discipline of the studies'
//! testbeds; RED decides as a packet arrives, CoDel as it leaves the queue.

pub mod codel;
pub mod red;

pub use codel::Codel;
pub use red::{Red, RedParams};

/// The hard buffer limit of a queue; it applies whatever the AQM.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Packets(u64),
    Bytes(u64),
}

impl Limit {
    /// Admit a packet of `size_bytes` onto a backlog of `queued_pkts`/`queued_bytes`
    /// (the packet being transmitted counts as queued).
    pub fn admits(&self, queued_pkts: u64, queued_bytes: u64, size_bytes: u32) -> bool {
        match *self {
            Limit::Packets(n) => queued_pkts < n,
            Limit::Bytes(n) => queued_bytes + u64::from(size_bytes) <= n,
        }
    }
}

/// The active queue management of a link. An enum, not a trait object: it sits on the
/// per-packet path.
#[derive(Debug, Clone)]
pub enum Aqm<P> {
    /// Only the hard limit drops.
    DropTail,
    /// Random Early Detection, decided at arrival.
    Red(Red),
    /// Controlled Delay, decided at departure: the link keeps an explicit queue.
    Codel(Codel<P>),
}

impl<P: crate::Frame> Aqm<P> {
    /// RED with its own random stream.
    pub fn red(params: RedParams, seed: u64) -> Self {
        Aqm::Red(Red::new(params, seed))
    }

    pub fn codel(target_ns: u64, interval_ns: u64) -> Self {
        Aqm::Codel(Codel::new(target_ns, interval_ns))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packet_limit_counts_packets() {
        let q = Limit::Packets(2);
        assert!(q.admits(1, 3000, 1500));
        assert!(!q.admits(2, 0, 1500));
    }

    #[test]
    fn byte_limit_counts_bytes() {
        let q = Limit::Bytes(3000);
        assert!(q.admits(1, 1500, 1500));
        assert!(!q.admits(1, 1501, 1500));
    }
}
