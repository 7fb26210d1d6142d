//! The network: links (serialisation, queue, propagation), their loss models and topologies.
//! Queue disciplines and loss processes live in the sans-IO crate `tcpeval-netem`, shared with
//! the lab's real-time emulator.

pub mod link;
pub mod routes;
pub mod topology;

pub use tcpeval_netem::{loss, queue};
