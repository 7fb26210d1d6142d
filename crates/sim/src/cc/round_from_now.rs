//! A round trip that starts now: Linux BBR restarts its round counter there
//! (`next_rtt_delivered = tp->delivered`; draft-ietf-ccwg-bbr `StartRound()`). The sender's
//! rounds (`Ack::round_start`) started earlier.

use crate::cc::Ack;

/// Ends when an ACK covers a packet sent after the mark: on a FIFO path, once more packets
/// have been delivered or marked lost than were in flight at the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundFromNow {
    in_flight_at_mark: u64,
    left_since_mark: u64,
}

impl RoundFromNow {
    pub fn start(in_flight: u32) -> Self {
        Self {
            in_flight_at_mark: u64::from(in_flight),
            left_since_mark: 0,
        }
    }

    /// Count this ACK (acknowledged after the mark); true once the round is over.
    pub fn on_ack(&mut self, ack: &Ack) -> bool {
        self.left_since_mark += u64::from(ack.acked) + u64::from(ack.lost);
        self.left_since_mark > self.in_flight_at_mark
    }
}
