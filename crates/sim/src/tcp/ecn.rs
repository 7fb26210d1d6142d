//! Explicit Congestion Notification at the two ends of a connection: which codepoint data
//! carries, how the receiver feeds CE marks back, and what the sender reads from the feedback.
//!
//! Three feedback schemes, chosen by `flow.ecn` and the stack:
//! - **classic** (RFC 3168 §6.1): the receiver sets ECE on every ACK from the first CE until a
//!   segment with CWR arrives; the sender reduces once per window and sets CWR on its next new
//!   segment. One bit per round trip: the sender learns *that* there was congestion.
//! - **DCTCP's echo** (RFC 8257 §3.2), for `dctcp` over classic ECN: ECE on an ACK says the
//!   segments it acknowledges were CE-marked; a delayed ACK is cut short when the CE state
//!   changes, so each ACK covers segments of one state and the sender can count marked bytes.
//! - **accurate** (AccECN, RFC 9768 §3.2): for `l4s`, every ACK carries the 3-bit ACE field,
//!   the count of CE-marked packets received modulo 8; the sender recovers the count from its
//!   increments.

use serde::{Deserialize, Serialize};
use tcpeval_netem::Ecn;

/// `flow.ecn`: what the flow's hosts negotiate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    /// Not-ECT: queues drop.
    Off,
    /// ECT(0) with RFC 3168 feedback (DCTCP's echo for `dctcp`).
    Classic,
    /// ECT(1), the L4S identifier (RFC 9331), with accurate feedback (RFC 9768).
    L4s,
}

/// How the receiver reports CE marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    None,
    Classic,
    Dctcp,
    Accurate,
}

impl EcnMode {
    /// The codepoint of the flow's data packets (RFC 3168 §5, RFC 9331 §4.1).
    pub fn codepoint(self) -> Ecn {
        match self {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        }
    }

    /// The feedback the hosts use; `per_packet_echo`: the stack asks for DCTCP's echo.
    pub fn feedback(self, per_packet_echo: bool) -> Feedback {
        match self {
            EcnMode::Off => Feedback::None,
            EcnMode::Classic if per_packet_echo => Feedback::Dctcp,
            EcnMode::Classic => Feedback::Classic,
            EcnMode::L4s => Feedback::Accurate,
        }
    }
}
