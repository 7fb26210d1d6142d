//! TCP timestamps (RFC 7323): the sender stamps each data segment with its clock (TSval), and
//! the receiver echoes one of them in each ACK (TSecr), chosen by RFC 7323 §4.3's rules. The
//! sender reads the echo to tell an ACK of an original from an ACK of its retransmission
//! (Eifel detection, RFC 3522; `undo.rs`).
//!
//! The clock ticks in milliseconds, as Linux's default `tcp_time_stamp_ts` does
//! (`TCP_TS_HZ` 1000 since 4.13; the microsecond clock of 6.7 is a route option, off unless
//! asked for). Linux 2.6 ticked in jiffies, 1–4 ms; its hosts here tick in ms too.

use crate::time::NS_PER_MS;

/// TSval of a segment sent at `now_ns`: the clock in ms, wrapping at 2^32 (RFC 7323 §5.2).
pub fn tsval(now_ns: u64) -> u32 {
    (now_ns / NS_PER_MS) as u32
}

/// Whether timestamp `a` is older than `b`, modulo 2^32 (RFC 7323 §5.2; Linux `before`).
pub fn before(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) < 0
}

/// The receiver's TS.Recent (RFC 7323 §4.3): the TSval its next ACK echoes.
#[derive(Debug, Clone, Default)]
pub struct Echo {
    ts_recent: u32,
    /// Last.ACK.sent, in segments: `rcv_nxt` when the last ACK left (Linux `rcv_wup`).
    last_ack_sent: u64,
}

impl Echo {
    /// Segment `seq` arrived stamped `tsval`. It becomes TS.Recent if it is not older and
    /// starts at or below the last ACK sent (§4.3 (2); Linux `tcp_replace_ts_recent`). So a
    /// delayed ACK echoes the earliest of the segments it covers; a segment above a hole does
    /// not count, and the one that fills the hole does: an ACK that a retransmission made
    /// echoes the retransmission, one that a late original made echoes the original.
    pub fn on_segment(&mut self, seq: u64, tsval: u32) {
        if seq <= self.last_ack_sent && !before(tsval, self.ts_recent) {
            self.ts_recent = tsval;
        }
    }

    /// An ACK for everything below `rcv_nxt` leaves: the TSecr it carries.
    pub fn on_ack_sent(&mut self, rcv_nxt: u64) -> u32 {
        self.last_ack_sent = rcv_nxt;
        self.ts_recent
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_clock_ticks_in_milliseconds_and_compares_across_the_wrap() {
        assert_eq!(tsval(2_999_999), 2);
        assert_eq!(tsval(3_000_000), 3);
        assert!(before(1, 2) && !before(2, 2) && !before(3, 2));
        // RFC 7323 §5.2: comparisons are modulo 2^32, so a clock that wrapped is still newer.
        assert!(before(u32::MAX, 0));
        assert!(!before(0, u32::MAX));
        assert_eq!(tsval((u64::from(u32::MAX) + 1) * NS_PER_MS), 0);
    }

    #[test]
    fn a_delayed_ack_echoes_the_first_segment_it_covers() {
        // RFC 7323 §4.3 (2)'s example: A and B arrive, one delayed ACK covers both and echoes
        // A's TSval, so that the sender's RTT includes the delay.
        let mut e = Echo::default();
        e.on_segment(0, 10);
        e.on_segment(1, 11);
        assert_eq!(e.on_ack_sent(2), 10);
        e.on_segment(2, 12);
        assert_eq!(e.on_ack_sent(3), 12);
    }

    #[test]
    fn a_segment_above_a_hole_is_not_echoed_and_the_one_filling_it_is() {
        // RFC 7323 §4.3 (3)'s example: 1 is lost, 2 and 3 arrive out of order and their ACKs
        // echo the last in-order segment (0); the retransmission of 1 fills the hole, and the
        // ACK that covers 0..4 echoes it.
        let mut e = Echo::default();
        e.on_segment(0, 100);
        assert_eq!(e.on_ack_sent(1), 100);
        e.on_segment(2, 102);
        assert_eq!(e.on_ack_sent(1), 100);
        e.on_segment(3, 103);
        assert_eq!(e.on_ack_sent(1), 100);
        e.on_segment(1, 150);
        assert_eq!(e.on_ack_sent(4), 150);
        // An older duplicate does not move TS.Recent back (PAWS, §5).
        e.on_segment(1, 101);
        assert_eq!(e.on_ack_sent(4), 150);
    }
}
