//! The network: links (policer, serialisation, queue, propagation), their loss models and
//! topologies. The policer, queue disciplines and loss processes live in the sans-IO crate
//! `tcpeval-netem`, shared with the lab's real-time emulator.

pub mod link;
pub mod routes;
pub mod topology;

pub use tcpeval_netem::{loss, policer, queue};
