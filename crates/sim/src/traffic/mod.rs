//! Traffic besides the TCP flows' own: background sources without congestion control, and
//! applications that drive TCP flows (request-response exchanges).

pub mod exchange;
pub mod source;
