//! TSO/GSO frames: a Linux sender hands the device frames of several segments, which leave the
//! host back to back, and holds a small frame back when an ACK due soon lets a larger one go.
//!
//! - How many segments a frame holds (`frame_pkts`): about a millisecond of the pacing rate
//!   (`sk_pacing_shift` = 10: rate/1024 bytes), plus an allowance for near peers that halves
//!   with every 512 µs of minimum RTT (`tcp_tso_rtt_log` = 9), at most 64 KB
//!   (`gso_max_size`) and at least two segments (`tcp_min_tso_segs`); and at most half of
//!   cwnd, so that two frames are in flight (`tcp_tso_autosize`, `tcp_tso_segs`,
//!   `tcp_cwnd_test`). A controller without a rate of its own (all but BBR) still has one for
//!   this: 200% of cwnd/srtt in slow start, 120% after (`tcp_update_pacing_rate`).
//! - When a frame is held back (`Outlook::defers`, Linux `tcp_tso_should_defer`): cwnd or
//!   the receive window admits less than a full frame and less than a third of the window
//!   (`tcp_tso_win_divisor` = 3), the sender sent something within the last millisecond, and
//!   the oldest segment's ACK is due within min(srtt/2, 1 ms). Never in fast recovery or after
//!   a timeout; the ACK that comes sends the larger frame.
//! - How a frame reaches the path: its segments are handed to the first link at one instant,
//!   as the host's line rate is far above the path's (the lab's kernel sends into a veth), and
//!   that link serialises them back to back at its own rate.
//!
//! The frame ends where the sender stops, as a kernel frame is cut to what cwnd allowed
//! (`tso_fragment`); what is left is a new frame next time. The application's data is taken as
//! more than a frame: a sender with less ready defers as a bulk one does (the kernel too, unless
//! the write ends with MSG_EOR or FIN).

use crate::time::{NS_PER_MS, NS_PER_SEC};

/// `sk_pacing_shift`: a frame carries 1/2^10 s (about a millisecond) of the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `tcp_min_tso_segs`.
const MIN_FRAME_PKTS: u64 = 2;
/// `gso_max_size`: the largest frame (`GSO_LEGACY_MAX_SIZE`).
pub const MAX_FRAME_BYTES: u64 = 65_536;
/// `tcp_tso_rtt_log`: the near-peer allowance of 64 KB halves with every 2^9 µs of min RTT.
const RTT_LOG: u32 = 9;
/// `tcp_tso_win_divisor`: a third of the window is worth sending without waiting.
const WIN_DIVISOR: u64 = 3;
/// A frame is held back only if the last one left within this (`tcp_tso_should_defer`).
const RECENT_SEND_NS: u64 = NS_PER_MS;
/// `tcp_pacing_ss_ratio`, `tcp_pacing_ca_ratio` (200% and 120%): of cwnd/srtt.
const SLOW_START_RATIO: f64 = 2.0;
const AVOIDANCE_RATIO: f64 = 1.2;

/// Segments of `mss_bytes` in a frame of about a millisecond at `rate_bps` (payload bits/s),
/// with `extra_bytes` added, within 64 KB and at least two (`tcp_tso_autosize`). The pacer's
/// frames are the same, without the near-peer allowance.
pub fn autosize_pkts(rate_bps: u64, mss_bytes: u32, extra_bytes: u64) -> u64 {
    let mss = u64::from(mss_bytes);
    let bytes = ((rate_bps / 8) >> PACING_SHIFT).saturating_add(extra_bytes);
    (bytes.min(MAX_FRAME_BYTES) / mss).max(MIN_FRAME_PKTS)
}

/// The near-peer allowance: 64 KB at a minimum RTT under 512 µs, halving with every 512 µs
/// more; none before the first sample (Linux's min RTT starts at ~0U) or beyond 16 ms.
fn rtt_allowance_bytes(min_rtt_ns: u64) -> u64 {
    if min_rtt_ns == 0 {
        return 0;
    }
    let halvings = (min_rtt_ns / 1_000) >> RTT_LOG;
    if halvings < u64::from(u32::BITS) {
        MAX_FRAME_BYTES >> halvings
    } else {
        0
    }
}

/// What a connection's rate is taken to be for sizing frames, payload bits/s, for a controller
/// that sets none (Linux `tcp_update_pacing_rate`); `None` before the first RTT sample, when
/// Linux's rate is unlimited.
pub fn kernel_pacing_rate_bps(
    mss_bytes: u32,
    cwnd_pkts: u64,
    ssthresh_pkts: f64,
    packets_out: u64,
    srtt_ns: u64,
) -> Option<u64> {
    if srtt_ns == 0 {
        return None;
    }
    let ratio = if (cwnd_pkts as f64) < ssthresh_pkts / 2.0 {
        SLOW_START_RATIO
    } else {
        AVOIDANCE_RATIO
    };
    let window_bits = f64::from(mss_bytes) * 8.0 * cwnd_pkts.max(packets_out) as f64;
    Some((window_bits * ratio * NS_PER_SEC as f64 / srtt_ns as f64) as u64)
}

/// Segments in the next frame: the autosized frame at `rate_bps` (unlimited when `None`),
/// and at most half of cwnd (`tcp_cwnd_test`: two frames in flight).
pub fn frame_pkts(rate_bps: Option<u64>, mss_bytes: u32, min_rtt_ns: u64, cwnd_pkts: u64) -> u64 {
    let autosized = autosize_pkts(
        rate_bps.unwrap_or(u64::MAX),
        mss_bytes,
        rtt_allowance_bytes(min_rtt_ns),
    );
    autosized.min((cwnd_pkts / 2).max(1))
}

/// What `tcp_tso_should_defer` reads of the connection, in segments.
#[derive(Debug, Clone, Copy)]
pub struct Outlook {
    pub now_ns: u64,
    pub last_send_ns: u64,
    pub cwnd_pkts: u64,
    pub in_flight_pkts: u64,
    /// The receive window (or the socket's limit), and what of it is outstanding.
    pub rwnd_pkts: u64,
    pub packets_out: u64,
    /// The oldest outstanding segment's last send time (any time with nothing outstanding:
    /// a third of the window is then free, and nothing is held back).
    pub oldest_sent_ns: u64,
    pub srtt_ns: u64,
}

impl Outlook {
    fn cwnd_room_pkts(&self) -> u64 {
        self.cwnd_pkts.saturating_sub(self.in_flight_pkts)
    }

    fn rwnd_room_pkts(&self) -> u64 {
        self.rwnd_pkts.saturating_sub(self.packets_out)
    }

    /// Whether cwnd rather than the receive window limits what may leave (a frame held back
    /// is cwnd-limited only then: `is_cwnd_limited` against `is_rwnd_limited`).
    pub fn cwnd_binds(&self) -> bool {
        self.cwnd_room_pkts() < self.rwnd_room_pkts()
    }

    /// Whether to hold a frame of `frame_pkts` back for an ACK due soon, that would let a
    /// larger one go. The caller has checked that cwnd admits at least one segment.
    pub fn defers(&self, frame_pkts: u64) -> bool {
        if self.now_ns > self.last_send_ns + RECENT_SEND_NS {
            return false; // idle a while: waiting would only add delay
        }
        let room = self.cwnd_room_pkts().min(self.rwnd_room_pkts());
        if room >= frame_pkts || room * WIN_DIVISOR >= self.cwnd_pkts.min(self.rwnd_pkts) {
            return false;
        }
        let ack_due_ns = self.oldest_sent_ns + self.srtt_ns;
        let patience_ns = (self.srtt_ns / 2).min(NS_PER_MS);
        ack_due_ns <= self.now_ns + patience_ns
    }
}

/// The frame being sent.
#[derive(Debug, Clone, Default)]
pub struct Frame {
    left_pkts: u64,
}

impl Frame {
    /// Whether the next segment begins a new frame.
    pub fn is_done(&self) -> bool {
        self.left_pkts == 0
    }

    pub fn start(&mut self, pkts: u64) {
        self.left_pkts = pkts;
    }

    pub fn on_send(&mut self) {
        self.left_pkts = self.left_pkts.saturating_sub(1);
    }

    /// The sender stopped: the rest of the frame is a new one next time (`tso_fragment`).
    pub fn end(&mut self) {
        self.left_pkts = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1448;
    const MS: u64 = NS_PER_MS;

    #[test]
    fn a_frame_holds_about_a_millisecond_of_the_rate() {
        // rate/8/1024 bytes: 10 Mb/s 1220 B (the floor of 2), 100 Mb/s 12 207 B (8),
        // 500 Mb/s 61 035 B (42), 1 Gb/s capped at 64 KB (45).
        let at = |rate_bps| frame_pkts(Some(rate_bps), MSS, 100 * MS, u64::MAX);
        assert_eq!(at(10_000_000), 2);
        assert_eq!(at(100_000_000), 8);
        assert_eq!(at(500_000_000), 42);
        assert_eq!(at(1_000_000_000), 45);
    }

    #[test]
    fn no_frame_exceeds_64_kb() {
        assert_eq!(frame_pkts(None, MSS, 0, u64::MAX), 65_536 / 1448);
        assert_eq!(frame_pkts(Some(u64::MAX), 8948, 0, u64::MAX), 7);
        assert_eq!(autosize_pkts(u64::MAX, MSS, u64::MAX), 45);
    }

    #[test]
    fn a_near_peer_gets_larger_frames() {
        // 10 Mb/s alone gives 1220 B; at 300 µs the allowance is the whole 64 KB, at 1 ms
        // (one 512 µs step) 32 KB, at 2 ms (three) 8 KB; past 16 ms none.
        let at = |min_rtt_ns| frame_pkts(Some(10_000_000), MSS, min_rtt_ns, u64::MAX);
        assert_eq!(at(300_000), 45);
        assert_eq!(at(MS), (1220 + 32_768) / 1448);
        assert_eq!(at(2 * MS), (1220 + 8_192) / 1448);
        assert_eq!(at(20 * MS), 2);
    }

    #[test]
    fn a_frame_is_at_most_half_of_cwnd() {
        assert_eq!(frame_pkts(None, MSS, 100 * MS, 10), 5);
        assert_eq!(frame_pkts(None, MSS, 100 * MS, 1), 1);
    }

    #[test]
    fn the_rate_is_twice_cwnd_per_rtt_in_slow_start_and_1_2_times_after() {
        // 100 segments of 1000 B per 100 ms: 8 Mb/s.
        let rate = |ssthresh| kernel_pacing_rate_bps(1000, 100, ssthresh, 0, 100 * MS);
        assert_eq!(rate(f64::INFINITY), Some(16_000_000));
        assert_eq!(rate(150.0), Some(9_600_000)); // past half of ssthresh
                                                  // More outstanding than cwnd (after a reduction): the flight counts.
        let rate = kernel_pacing_rate_bps(1000, 100, 50.0, 200, 100 * MS);
        assert_eq!(rate, Some(19_200_000));
        assert_eq!(kernel_pacing_rate_bps(1000, 100, 50.0, 0, 0), None);
    }

    /// A flow at 100 ms with cwnd 100, 98 in flight, its oldest segment sent 99.5 ms ago.
    fn clocked() -> Outlook {
        Outlook {
            now_ns: 1_000 * MS,
            last_send_ns: 1_000 * MS - 100_000,
            cwnd_pkts: 100,
            in_flight_pkts: 98,
            rwnd_pkts: u64::MAX,
            packets_out: 98,
            oldest_sent_ns: 900 * MS + 500_000,
            srtt_ns: 100 * MS,
        }
    }

    #[test]
    fn room_for_less_than_a_frame_waits_for_an_ack_due_soon() {
        assert!(clocked().defers(8));
    }

    #[test]
    fn a_full_frame_goes_at_once() {
        let o = Outlook {
            in_flight_pkts: 92,
            ..clocked()
        };
        assert!(!o.defers(8));
    }

    #[test]
    fn a_third_of_the_window_goes_at_once() {
        // cwnd 12, 8 in flight: room for 4, a third of 12, short of a frame of 6.
        let o = Outlook {
            cwnd_pkts: 12,
            in_flight_pkts: 8,
            ..clocked()
        };
        assert!(!o.defers(6));
        let o = Outlook {
            in_flight_pkts: 9,
            ..o
        };
        assert!(o.defers(6));
    }

    #[test]
    fn the_receive_window_counts_as_cwnd_does() {
        assert!(clocked().cwnd_binds());
        let o = Outlook {
            in_flight_pkts: 50,
            rwnd_pkts: 100,
            packets_out: 98,
            ..clocked()
        };
        assert!(o.defers(8));
        assert!(!o.cwnd_binds());
        let o = Outlook {
            rwnd_pkts: 120,
            ..o
        };
        assert!(!o.defers(8));
    }

    #[test]
    fn an_ack_not_due_soon_is_not_waited_for() {
        // Due in 1.5 ms: beyond min(srtt/2, 1 ms).
        let o = Outlook {
            oldest_sent_ns: 901 * MS + 500_000,
            ..clocked()
        };
        assert!(!o.defers(8));
        // At 1 ms RTT the patience is half of it, 500 µs.
        let o = Outlook {
            srtt_ns: MS,
            oldest_sent_ns: 1_000 * MS - 400_000,
            ..clocked()
        };
        assert!(!o.defers(8));
        let o = Outlook {
            oldest_sent_ns: 1_000 * MS - 600_000,
            ..o
        };
        assert!(o.defers(8));
    }

    #[test]
    fn a_sender_idle_for_over_a_millisecond_does_not_wait() {
        let o = Outlook {
            last_send_ns: 1_000 * MS - 1_100_000,
            ..clocked()
        };
        assert!(!o.defers(8));
    }

    #[test]
    fn a_frame_ends_where_the_sender_stops() {
        let mut frame = Frame::default();
        assert!(frame.is_done());
        frame.start(3);
        frame.on_send();
        assert!(!frame.is_done());
        frame.end();
        assert!(frame.is_done());
    }
}
