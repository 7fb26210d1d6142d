//! TCP endpoints: the sender (windows, SACK scoreboard, recovery, RTO, pacing) and the
//! receiver (reassembly, delayed ACK, SACK blocks). Sans-IO: time comes in as an argument,
//! packets go out into a caller's buffer, deadlines are returned for the caller to schedule.

pub mod appdata;
pub mod ecn;
pub mod host;
pub mod pacer;
pub mod rate;
pub mod receiver;
pub mod reduction;
pub mod rtt;
pub mod scoreboard;
pub mod sender;
pub mod sink;
pub mod timestamps;
pub mod tso;
pub mod undo;
