//! TSO frames in the sender: a frame too small for the room cwnd leaves is held back for an
//! ACK due soon, and the larger frame then leaves at one instant. The path's RTT is 1 ms here,
//! so that the near-peer allowance makes frames of half of cwnd (`tso.rs`).

use super::*;
use crate::tcp::tso::Frame;

const US: u64 = 1_000;

/// The textbook harness's first window, with TSO frames from here on.
fn start_with_tso() -> Harness {
    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.sender.tso = Some(Frame::default());
    h
}

#[test]
fn a_frame_smaller_than_half_of_cwnd_waits_for_the_next_ack() {
    let mut h = start_with_tso();
    // Segment 0 is acknowledged at 1 ms: cwnd 11, 9 in flight, room for 2 of a frame of 5
    // (half of cwnd), and segment 1's ACK is due now. Without TSO, 10 and 11 would leave.
    let sent = h.ack(MS, 1, &[]);
    assert!(sent.new.is_empty(), "{sent:?}");
    // Two more segments acknowledged: cwnd 13, 7 in flight, room for a full frame of 6, which
    // leaves in one call, at one instant.
    let sent = h.ack(MS + 10 * US, 3, &[]);
    assert_eq!(sent.new, (10..16).collect::<Vec<_>>());
}

#[test]
fn a_sender_idle_for_over_a_millisecond_sends_what_it_may() {
    let mut h = start_with_tso();
    // The same ACK 2 ms after the last send: no frame is held back.
    let sent = h.ack(2 * MS, 1, &[]);
    assert_eq!(sent.new, [10, 11]);
}

#[test]
fn nothing_is_held_back_in_recovery() {
    let mut h = start_with_tso();
    h.ack(MS, 1, &[]);
    let cwnd_pkts = h.sender.send_window_pkts();
    assert_eq!(h.sender.tso_defers(MS, cwnd_pkts), Some(true));
    h.sender.ca_state = CaState::Recovery;
    assert_eq!(h.sender.tso_defers(MS, cwnd_pkts), None);
}
