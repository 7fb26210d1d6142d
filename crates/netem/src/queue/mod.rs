//! Queue disciplines: the hard buffer limit every queue has, and the active queue management
//! (AQM) in front of it.
//!
//! They see only the backlog, packet sizes, ECN codepoints and the time, and do no I/O, so a
//! real-time link emulator can reuse them. Each returns a verdict per packet: pass it, mark it
//! CE (only an ECN-capable packet, RFC 3168 §5), or drop it. Two kinds:
//!
//! - *arrival* disciplines decide as a packet arrives (drop-tail, RED, PIE, the step marker):
//!   the departure of every packet is then known at its arrival, so a link can serve them as
//!   an analytic FIFO;
//! - *scheduled* disciplines hold the packets themselves and decide as one leaves (CoDel,
//!   FQ-CoDel, DualPI2): the link asks them for the next packet each time its transmitter
//!   frees.

pub mod codel;
pub mod dualpi2;
pub mod fq_codel;
pub mod pie;
pub mod red;
pub mod step;

pub use codel::{Codel, CodelParams};
pub use dualpi2::{DualPi2, DualPi2Params};
pub use fq_codel::{FqCodel, FqCodelParams};
pub use pie::{Pie, PieParams};
pub use red::{Red, RedParams};
pub use step::{Step, StepThreshold};

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

/// An arrival discipline's decision on one packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Pass it with its codepoint set to CE (the caller sets it).
    Mark,
    Drop,
}

impl Verdict {
    /// What a discipline that has chosen to signal congestion does to a packet of codepoint
    /// `ecn`: mark it if the discipline marks (`ecn_enabled`) and the packet can take a mark,
    /// else drop it (RFC 3168 §5: a Not-ECT packet is dropped).
    pub fn signal(ecn_enabled: bool, ecn: crate::Ecn) -> Self {
        if ecn_enabled && ecn.is_capable() {
            Verdict::Mark
        } else {
            Verdict::Drop
        }
    }
}

/// Why a scheduled discipline discarded a packet it held or was offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// The buffer was full.
    Overflow,
    /// The AQM chose it.
    Aqm,
}

/// A packet a scheduled discipline discarded, with when it arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Discard<P> {
    pub arrival_ns: u64,
    pub pkt: P,
    pub cause: Cause,
}

/// The packet a scheduled discipline hands the transmitter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dequeued<P> {
    pub arrival_ns: u64,
    pub pkt: P,
    /// The discipline set CE on it on the way out.
    pub marked: bool,
}

/// What an arrival discipline knows when a packet arrives at a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    pub now_ns: u64,
    /// Packets and bytes queued or in transmission, the arrival not counted.
    pub backlog_pkts: u64,
    pub backlog_bytes: u64,
    /// When the transmitter will have sent everything queued (≤ `now_ns` if idle): the FIFO's
    /// queueing delay at any time until the next arrival is the time left until then.
    pub busy_until_ns: u64,
    /// The transmission time of the arriving packet.
    pub packet_time_ns: u64,
    pub ecn: crate::Ecn,
}

impl Arrival {
    /// Since when the link has been idle, if it is empty now.
    pub fn idle_since_ns(&self) -> Option<u64> {
        (self.backlog_pkts == 0).then_some(self.busy_until_ns)
    }
}

/// A discipline that decides as packets arrive, so a link serves them as an analytic FIFO.
#[derive(Debug, Clone)]
pub enum ArrivalAqm {
    /// Only the hard limit drops.
    DropTail,
    /// Random Early Detection.
    Red(Red),
    /// Proportional Integral controller Enhanced (RFC 8033).
    Pie(Pie),
    /// DCTCP's marker: CE above a queue length K.
    Step(Step),
}

impl ArrivalAqm {
    /// The fate of a packet arriving, before the hard limit is checked.
    pub fn on_arrival(&mut self, a: &Arrival) -> Verdict {
        match self {
            ArrivalAqm::DropTail => Verdict::Pass,
            ArrivalAqm::Red(red) => red.on_arrival(
                a.now_ns,
                a.backlog_pkts,
                a.idle_since_ns(),
                a.packet_time_ns,
                a.ecn,
            ),
            ArrivalAqm::Pie(pie) => pie.on_arrival(a),
            ArrivalAqm::Step(step) => step.on_arrival(a),
        }
    }
}

/// A discipline that holds its packets and decides as they leave; the link's transmitter
/// asks it for the next one whenever it frees.
#[derive(Debug, Clone)]
pub enum Scheduled<P> {
    Codel(Codel<P>),
    FqCodel(FqCodel<P>),
    DualPi2(DualPi2<P>),
}

impl<P: crate::Frame> Scheduled<P> {
    /// A packet arrives at `now_ns`; `over_limit`: the link's hard limit does not admit it.
    /// Returns why the arrival itself was refused, if it was; other packets the discipline
    /// discards to make room (FQ-CoDel drops from its fattest flow) go onto `discards`.
    pub fn enqueue(
        &mut self,
        now_ns: u64,
        pkt: P,
        over_limit: bool,
        discards: &mut Vec<Discard<P>>,
    ) -> Option<Cause> {
        match self {
            Scheduled::Codel(q) => q.enqueue(now_ns, pkt, over_limit),
            Scheduled::FqCodel(q) => q.enqueue(now_ns, pkt, over_limit, discards),
            Scheduled::DualPi2(q) => q.enqueue(now_ns, pkt, over_limit, discards),
        }
    }

    /// The next packet to transmit at `now_ns`; what the AQM drops on the way goes onto
    /// `discards`.
    pub fn dequeue(&mut self, now_ns: u64, discards: &mut Vec<Discard<P>>) -> Option<Dequeued<P>> {
        match self {
            Scheduled::Codel(q) => q.dequeue(now_ns, discards),
            Scheduled::FqCodel(q) => q.dequeue(now_ns, discards),
            Scheduled::DualPi2(q) => q.dequeue(now_ns, discards),
        }
    }

    /// The sojourn distributions the discipline keeps, by queue (DualPI2's L and C).
    pub fn sojourns(&self) -> Vec<(&'static str, &crate::hist::Histogram)> {
        match self {
            Scheduled::DualPi2(q) => q.sojourns().to_vec(),
            Scheduled::Codel(_) | Scheduled::FqCodel(_) => Vec::new(),
        }
    }

    /// The packets waiting, in no particular order.
    pub fn packets(&self) -> Box<dyn Iterator<Item = &P> + '_> {
        match self {
            Scheduled::Codel(q) => Box::new(q.packets()),
            Scheduled::FqCodel(q) => Box::new(q.packets()),
            Scheduled::DualPi2(q) => Box::new(q.packets()),
        }
    }
}

/// The active queue management of a link. Enums, not trait objects: they sit on the
/// per-packet path.
#[derive(Debug, Clone)]
pub enum Aqm<P> {
    Arrival(ArrivalAqm),
    Scheduled(Scheduled<P>),
}

impl<P: crate::Frame> Aqm<P> {
    pub fn drop_tail() -> Self {
        Aqm::Arrival(ArrivalAqm::DropTail)
    }

    /// RED with its own random stream.
    pub fn red(params: RedParams, seed: u64) -> Self {
        Aqm::Arrival(ArrivalAqm::Red(Red::new(params, seed)))
    }

    /// PIE with its own random stream.
    pub fn pie(params: PieParams, seed: u64) -> Self {
        Aqm::Arrival(ArrivalAqm::Pie(Pie::new(params, seed)))
    }

    pub fn step(threshold: StepThreshold) -> Self {
        Aqm::Arrival(ArrivalAqm::Step(Step::new(threshold)))
    }

    pub fn codel(params: CodelParams) -> Self {
        Aqm::Scheduled(Scheduled::Codel(Codel::new(params)))
    }

    /// FQ-CoDel, its flow hash perturbed by `seed`.
    pub fn fq_codel(params: FqCodelParams, seed: u64) -> Self {
        Aqm::Scheduled(Scheduled::FqCodel(FqCodel::new(params, seed)))
    }

    /// DualPI2 with its own random stream.
    pub fn dualpi2(params: DualPi2Params, seed: u64) -> Self {
        Aqm::Scheduled(Scheduled::DualPi2(DualPi2::new(params, seed)))
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
