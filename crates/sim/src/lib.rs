//! tcpeval-sim: a packet-level simulator of TCP congestion control on dumbbell paths.
//!
//! Contract: a resolved [`scenario::Scenario`] in, an [`output::Output`] (summary and
//! time-series columns) out; same scenario and seed, same output bit for bit (wall time
//! aside). Pure Rust: no Python, no I/O. Invariants checked by the tests: every data packet
//! sent is delivered, dropped or still in flight; simultaneous events run in scheduling order.

pub mod cc;
pub mod engine;
pub mod error;
pub mod net;
pub mod packet;
pub mod scenario;
pub mod time;
