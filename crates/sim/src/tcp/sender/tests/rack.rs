//! RACK's loss detection by time (RFC 8985 §6): holes below a delivered segment, the
//! reordering window and its timer, and what happens without RACK.

use super::*;

#[test]
fn rack_takes_every_hole_below_a_sacked_segment_for_lost_once_in_recovery() {
    // Segments 0, 4 and 6 are lost; 1..4, 5 and 7 arrive. DupThresh needs three SACKed
    // segments above a hole, so only 0 is lost; RACK, once recovery has begun, needs one sent
    // after it, so 4 and 6 are lost too, and PRR lets the first of them out at once.
    let blocks = [(7, 8), (5, 6), (1, 4)];
    let mut rfc = Harness::start(true);
    rfc.lose_the_first_segment();
    rfc.ack(110 * MS, 0, &blocks);
    assert_eq!(rfc.sender.board.lost_out(), 1);
    let mut linux = Harness::start_on(true, Recovery::LINUX);
    linux.lose_the_first_segment();
    let sent = linux.ack(110 * MS, 0, &blocks);
    assert_eq!(linux.sender.board.lost_out(), 3);
    assert_eq!(sent.retransmitted, [4]);
}

/// A transfer of ten segments, all sent at t = 0, of which 8 is missing: at 100 ms one ACK
/// covers 0..8 and SACKs 9. One segment above the hole is not DupThresh, and 9 was not sent a
/// reordering window (a quarter of the 100 ms minimum RTT) after 8: the hole is only a suspect.
fn miss_the_next_to_last_segment(recovery: Recovery) -> Harness {
    let mut h = Harness::start_transfer(10, recovery);
    let sent = h.ack(100 * MS, 8, &[(9, 10)]);
    assert!(sent.retransmitted.is_empty());
    assert_eq!(h.sender.board.lost_out(), 0);
    assert_eq!(h.sender.ca_state(), CaState::Disorder);
    h
}

#[test]
fn rack_s_reordering_timer_finds_a_hole_lost_when_no_more_acks_come() {
    // RFC 8985 §6.2 step 5 and §6.3: segment 8 is lost once RACK.rtt (100 ms) plus the
    // reordering window (25 ms) has passed since it was sent, and the timer fires then (plus
    // Linux's two jiffies, 8 ms): fast recovery, not the retransmission timer 300 ms later.
    let mut h = miss_the_next_to_last_segment(Recovery::LINUX);
    let timer_ns = *h.rto_wakes.first().expect("a timer");
    assert_eq!(timer_ns, (100 + 25 + 8) * MS);
    h.rto_wakes.pop_first();
    let cwnd = h.sender.cwnd_pkts();
    let sent = h.call(|s, out| s.on_rto_wake(timer_ns, out));
    assert_eq!(sent.retransmitted, [8]);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(h.sender.ssthresh_pkts(), cwnd / 2.0, "one reduction");
    assert_eq!(
        h.sender.rto.deadline_ns(),
        Some(timer_ns + 300 * MS),
        "the retransmission timer has its slot back"
    );
    h.ack(233 * MS, 10, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!((h.sender.stats.timeouts, h.events()), (0, 1));
}

#[test]
fn a_hole_filled_before_the_reordering_timer_fires_was_only_reordered() {
    // Segment 8 arrives at 120 ms, inside the reordering window: nothing is taken for lost,
    // and the timer, cleared with nothing left outstanding, fires no more.
    let mut h = miss_the_next_to_last_segment(Recovery::LINUX);
    h.ack(120 * MS, 10, &[]);
    for at_ns in std::mem::take(&mut h.rto_wakes) {
        h.call(|s, out| s.on_rto_wake(at_ns, out));
    }
    assert_eq!(h.sender.ca_state(), CaState::Open);
    let stats = &h.sender.stats;
    assert_eq!(
        (stats.retransmits, stats.congestion_events, stats.timeouts),
        (0, 0, 0)
    );
}

#[test]
fn without_rack_a_hole_short_of_dupthresh_waits_for_the_retransmission_timer() {
    let mut h = miss_the_next_to_last_segment(Recovery::RFC);
    let (fired_ns, sent) = h.fire_rto();
    assert_eq!(fired_ns, 400 * MS);
    assert_eq!(sent.retransmitted, [8]);
}
