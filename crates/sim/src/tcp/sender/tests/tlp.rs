//! The tail loss probe (RFC 8985 §7): when it goes out, what it sends, and what its answer
//! says about the loss (§7.4).

use super::*;

/// A transfer of ten segments, all sent at t = 0; segments 0..7 arrive and are acknowledged
/// at 100 ms (one RTT sample: SRTT 100 ms, RTO 300 ms), segments 7, 8 and 9 are lost.
fn lose_the_tail(recovery: Recovery) -> Harness {
    let mut h = Harness::start_transfer(10, recovery);
    let sent = h.ack(100 * MS, 7, &[]);
    assert!(sent.new.is_empty() && sent.retransmitted.is_empty());
    h
}

#[test]
fn without_a_tail_loss_probe_a_lost_tail_waits_for_the_retransmission_timer() {
    let mut h = lose_the_tail(Recovery::RFC);
    let (fired_ns, sent) = h.fire_rto();
    assert_eq!(
        fired_ns,
        400 * MS,
        "RTO: SRTT + max(4·RTTVAR, 200 ms) after the ACK"
    );
    assert_eq!(sent.retransmitted, [7]);
    assert_eq!(h.sender.stats.timeouts, 1);
}

#[test]
fn a_tail_loss_probe_resends_the_last_segment_after_two_rtts_and_its_sack_starts_recovery() {
    // RFC 8985 §7: the probe timer replaces the retransmission timer: 2·SRTT after the last
    // ACK no new data is left, so the highest segment goes out again. Its SACK shows 7 and 8,
    // sent 300 ms before it, lost (RACK): fast recovery repairs them, PRR one per ACK, and
    // the retransmission timer never fires.
    let mut h = lose_the_tail(Recovery::LINUX);
    let probe_ns = *h.rto_wakes.first().expect("a timer");
    assert_eq!(probe_ns, 300 * MS);
    h.rto_wakes.pop_first();
    let sent = h.call(|s, out| s.on_rto_wake(probe_ns, out));
    assert_eq!(sent.retransmitted, [9]);
    let sent = h.ack(400 * MS, 7, &[(9, 10)]);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(sent.retransmitted, [7]);
    let sent = h.ack(500 * MS, 8, &[(9, 10)]);
    assert_eq!(sent.retransmitted, [8]);
    h.ack(600 * MS, 10, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!((h.sender.stats.timeouts, h.events()), (0, 1));
    assert_eq!(h.sender.stats.all_acked_ns, Some(600 * MS));
}

#[test]
fn a_tail_loss_probe_sends_new_data_when_there_is_some() {
    // A bulk sender whose ACKs stop: the probe is a new segment, past cwnd.
    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.ack(100 * MS, 2, &[]);
    let in_flight = h.sender.in_flight_pkts();
    let probe_ns = *h.rto_wakes.first().expect("a timer");
    assert_eq!(probe_ns, 300 * MS);
    let sent = h.call(|s, out| s.on_rto_wake(probe_ns, out));
    assert_eq!((sent.new.len(), sent.retransmitted.len()), (1, 0));
    assert_eq!(h.sender.in_flight_pkts(), in_flight + 1);
    // One probe at a time: the retransmission timer is next, an RTO after the probe.
    assert_eq!(h.sender.rto_slot, RtoSlot::Retransmission);
    assert_eq!(h.sender.rto.deadline_ns(), Some(probe_ns + 300 * MS));
}

/// A transfer of ten segments whose ACKs stop after 0..7: at 300 ms a tail loss probe resends
/// segment 9 (see `a_tail_loss_probe_resends_...`).
fn probe_the_tail() -> Harness {
    let mut h = lose_the_tail(Recovery::LINUX);
    let probe_ns = h.rto_wakes.pop_first().expect("the probe's timer");
    let sent = h.call(|s, out| s.on_rto_wake(probe_ns, out));
    assert_eq!((probe_ns, sent.retransmitted), (300 * MS, vec![9]));
    h
}

#[test]
fn a_tail_loss_probe_whose_d_sack_shows_it_unneeded_reduces_nothing() {
    // RFC 8985 §7.4, Linux `tcp_process_tlp_ack`: the tail was only late. Its ACKs come after
    // the probe: the probe's own lost mark starts no recovery, and the D-SACK of the probe
    // ends its episode: no reduction, so nothing to undo either.
    let mut h = probe_the_tail();
    h.ack(305 * MS, 8, &[]);
    assert_eq!(
        h.sender.ca_state(),
        CaState::Open,
        "no recovery for the probe"
    );
    h.ack(306 * MS, 10, &[]);
    assert!(
        h.sender.loss_probe.is_some(),
        "the probe's answer is still due"
    );
    h.ack(400 * MS, 10, &[(9, 10)]);
    assert!(h.sender.loss_probe.is_none());
    let stats = &h.sender.stats;
    assert_eq!((stats.congestion_events, stats.undos), (0, 0));
    assert_eq!(h.sender.ssthresh_pkts(), f64::INFINITY);
}

#[test]
fn a_tail_loss_probe_that_repaired_a_loss_reduces_the_window_once_acks_pass_it() {
    // Segments 7 and 8 arrived, 9 was lost and the probe repaired it: the ACK reaches the
    // probe's snd_nxt with no D-SACK. Linux reduces (CWR, at once, no recovery) when an ACK
    // goes beyond it, here for data the application writes next.
    let mut h = probe_the_tail();
    h.ack(400 * MS, 10, &[]);
    assert_eq!(h.events(), 0);
    let cwnd = h.sender.cwnd_pkts();
    let sent = h.call(|s, out| s.write(400 * MS, 2 * u64::from(MSS), out).1);
    assert_eq!(sent.new, [10, 11]);
    h.ack(500 * MS, 12, &[]);
    assert_eq!(h.events(), 1);
    assert_eq!(h.sender.ssthresh_pkts(), (cwnd / 2.0).floor().max(2.0));
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert!(h.sender.loss_probe.is_none());
}
