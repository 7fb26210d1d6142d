//! The network: links (serialisation, queue, propagation), their loss models and topologies.

pub mod link;
pub mod loss;
pub mod queue;
pub mod topology;
