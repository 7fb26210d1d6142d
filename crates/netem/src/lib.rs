//! tcpeval-netem: what a link does to packets besides carrying them, with no I/O and no clock
//! of its own. A path-MTU black hole and the token-bucket policer at the link's entry, the
//! queue's hard limit, the AQMs (RED decides at arrival, CoDel at departure), the loss
//! processes (Bernoulli, Gilbert–Elliott) and reordering see only sizes, ECN codepoints,
//! backlogs and the time the caller passes in, so the simulator runs them in simulated time and the lab's emulator in real time: one
//! implementation, judged in both worlds.

pub mod black_hole;
pub mod ecn;
pub mod hist;
pub mod loss;
pub mod policer;
pub mod queue;
pub mod reorder;
pub mod spec;

pub use ecn::Ecn;

/// What the queue models need to know of a packet, and the one change they make to it.
pub trait Frame {
    /// Its size on the wire (the IP packet).
    fn size_bytes(&self) -> u32;
    /// Its ECN codepoint.
    fn ecn(&self) -> Ecn;
    /// Set its codepoint to CE; called only on an ECN-capable packet.
    fn mark_ce(&mut self);
    /// Which transport flow it belongs to, for flow queueing: any value equal for the
    /// packets of one flow (the simulator's flow number, a hash of the lab's 5-tuple).
    fn flow_key(&self) -> u64;
}

#[cfg(test)]
pub(crate) mod testing;
