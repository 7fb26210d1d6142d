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

    const JUMBO_BYTES: u32 = 9014;
    const SMALL_BYTES: u32 = 3014;

    /// The sizes a tail-drop queue of `limit` holds after `burst` arrives with nothing leaving.
    fn held(limit: Limit, burst: &[u32]) -> Vec<u32> {
        let mut held = Vec::new();
        for &size in burst {
            let bytes: u64 = held.iter().map(|&s| u64::from(s)).sum();
            if limit.admits(held.len() as u64, bytes, size) {
                held.push(size);
            }
        }
        held
    }

    /// Jumbo and small frames alternating: the burst tests/kernel_fifo.py sends, less the
    /// first jumbo and small frame its htb bucket lets straight through.
    fn alternating_burst() -> Vec<u32> {
        [JUMBO_BYTES, SMALL_BYTES].repeat(39)
    }

    /// Jumbo packets, small packets and bytes among `sizes`.
    fn tally(sizes: &[u32]) -> (usize, usize, u64) {
        let count = |size| sizes.iter().filter(|&&s| s == size).count();
        let bytes = sizes.iter().map(|&s| u64::from(s)).sum();
        (count(JUMBO_BYTES), count(SMALL_BYTES), bytes)
    }

    // Figures measured on Linux 6.18 with tests/kernel_fifo.py (pfifo limit 20, bfifo limit
    // 60000 B, 9014- and 3014-byte frames); `Limit` must hold what the kernel holds.

    #[test]
    fn a_packet_limit_holds_as_many_packets_whatever_their_sizes() {
        let held = held(Limit::Packets(20), &alternating_burst());
        assert_eq!(tally(&held), (10, 10, 120_280));
    }

    #[test]
    fn a_byte_limit_holds_bytes_whatever_their_sizes() {
        let held = held(Limit::Bytes(60_000), &alternating_burst());
        assert_eq!(tally(&held), (5, 4, 57_126));
    }

    #[test]
    fn a_full_byte_limit_admits_a_small_packet_a_full_packet_limit_refuses() {
        // Jumbos until full, then small packets (the kernel's burst less the two jumbos its
        // bucket passed): pfifo takes none of them, bfifo one into the room no jumbo fits.
        let burst = [[JUMBO_BYTES].repeat(28), [SMALL_BYTES].repeat(10)].concat();
        assert_eq!(tally(&held(Limit::Packets(20), &burst)), (20, 0, 20 * 9014));
        assert_eq!(tally(&held(Limit::Bytes(60_000), &burst)), (6, 1, 57_098));
    }

    #[test]
    fn one_size_at_a_time_packets_give_jumbos_three_times_the_bytes() {
        let jumbo = [JUMBO_BYTES; 40];
        let small = [SMALL_BYTES; 40];
        // Packets: 20 of either size, so jumbo frames take 3x the memory.
        assert_eq!(held(Limit::Packets(20), &jumbo).len(), 20);
        assert_eq!(held(Limit::Packets(20), &small).len(), 20);
        // Bytes: the same memory, so a third as many jumbo frames (6 and 19 of 60000 B).
        assert_eq!(held(Limit::Bytes(60_000), &jumbo).len(), 6);
        assert_eq!(held(Limit::Bytes(60_000), &small).len(), 19);
    }
}
