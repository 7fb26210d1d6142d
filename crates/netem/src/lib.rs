//! tcpeval-netem: what a link does to packets besides carrying them, with no I/O and no clock
//! of its own. The token-bucket policer at the link's entry, the queue's hard limit, the AQMs
//! (RED decides at arrival, CoDel at departure) and the loss processes (Bernoulli,
//! Gilbert–Elliott) see only sizes, backlogs and the time the caller passes in, so the
//! simulator runs them in simulated time and the lab's emulator in real time: one
//! implementation, judged in both worlds.

pub mod loss;
pub mod policer;
pub mod queue;

/// What the queue models need to know of a packet: its size on the wire.
pub trait Frame {
    fn size_bytes(&self) -> u32;
}
