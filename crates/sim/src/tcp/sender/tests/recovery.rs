//! Fast recovery and timeouts: entering Recovery on SACKs or duplicate ACKs (RFC 6675, RFC
//! 6582), one reduction per window, ECN's CWR (RFC 3168 §6.1.2), PRR against RFC 6675's pause,
//! a lost retransmission (RFC 5681 §4.3), the retransmission timer's backoff (RFC 6298 §5).

use super::*;

#[test]
fn an_ecn_echo_reduces_once_per_window_and_the_next_new_segment_carries_cwr() {
    // RFC 3168 §6.1.2: the sender halves (as for a loss, with nothing to retransmit) at most
    // once per window of data, and sets CWR on the first new segment it sends after.
    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.sender.cfg.ecn = EcnSender::new(EcnMode::Classic, false);
    let cwnd = h.sender.cwnd_pkts();
    let out = h.ece_ack(100 * MS, 2);
    assert_eq!(h.sender.ca_state(), CaState::Cwr);
    assert_eq!((h.events(), h.sender.stats.ecn_reductions), (1, 1));
    // The echo is answered before the ACK could grow the window (Linux: ECE makes the ACK
    // "dubious", handled before `cong_control`).
    assert_eq!(h.sender.ssthresh_pkts(), cwnd / 2.0);
    let cwr: Vec<bool> = out.iter().map(|p| p.cwr).collect();
    assert!(
        cwr.is_empty() || (cwr[0] && !cwr[1..].contains(&true)),
        "{cwr:?}"
    );
    assert!(out.iter().all(|p| p.ecn == Ecn::Ect0), "new data is ECT(0)");
    // More echoes from the same window: no second reduction, no retransmission.
    let recovery_point = h.sender.recovery_point;
    h.ece_ack(110 * MS, 5);
    h.ece_ack(120 * MS, recovery_point - 1);
    assert_eq!((h.events(), h.sender.stats.retransmits), (1, 0));
    // An echo acknowledging up to the recovery point was sent before the CWR segment (the
    // first after it) arrived: still the same window.
    h.ece_ack(190 * MS, recovery_point);
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Cwr, 1));
    // The CWR segment acknowledged: back to Open; the next echo is a new window's signal.
    h.ack(200 * MS, recovery_point + 1, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    h.ece_ack(210 * MS, recovery_point + 2);
    assert_eq!((h.events(), h.sender.stats.ecn_reductions), (2, 2));
}

#[test]
fn the_third_sacked_segment_above_a_hole_starts_fast_recovery() {
    // RFC 6675 §5 step 4: a hole is lost once DupThresh (3) segments above it are SACKed.
    let mut h = Harness::start(true);
    let sent = h.ack(100 * MS, 0, &[(1, 2)]);
    assert_eq!(h.sender.ca_state(), CaState::Disorder);
    assert!(sent.retransmitted.is_empty());
    h.ack(100 * MS, 0, &[(1, 3)]);
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Disorder, 0));

    let cwnd_at_detection = h.sender.cwnd_pkts();
    let high_data = h.sender.board.snd_nxt();
    let sent = h.ack(100 * MS, 0, &[(1, 4)]);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(h.events(), 1);
    // Fast retransmit of the hole, at once (RFC 5681 §3.2 step 2), and nothing else: the
    // halved window is full.
    assert_eq!(sent.retransmitted, [0]);
    assert!(sent.new.is_empty());
    assert_eq!(h.sender.ssthresh_pkts(), cwnd_at_detection / 2.0);
    assert_eq!(h.sender.cwnd_pkts(), h.sender.ssthresh_pkts());
    // RFC 6675 §5 step 4.1: RecoveryPoint = HighData.
    assert_eq!(h.sender.recovery_point, high_data);
}

#[test]
fn a_second_hole_in_the_same_window_is_repaired_without_a_second_reduction() {
    // One congestion response per window of data (RFC 6675 §5, RFC 6582 §3.2 step 2).
    let mut h = Harness::start(true);
    h.lose_the_first_segment();
    let ssthresh = h.sender.ssthresh_pkts();
    // Segment 4 was lost too: 5..12 arrive, and 4 has more than three SACKed above it.
    let sent = h.ack(130 * MS, 0, &[(5, 12)]);
    assert_eq!(sent.retransmitted, [4]);
    assert_eq!((h.events(), h.sender.ssthresh_pkts()), (1, ssthresh));
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(h.sender.stats.retransmits, 2);
}

#[test]
fn recovery_ends_when_the_recovery_point_is_cumulatively_acknowledged() {
    // RFC 6675 §5 step (C) and RFC 6582 §3.2 step 4: a partial ACK keeps recovery going, an
    // ACK at or above the recovery point ends it.
    let mut h = Harness::start(true);
    h.lose_the_first_segment();
    let recovery_point = h.sender.recovery_point;
    h.ack(110 * MS, 0, &[(4, 10)]);
    // The retransmission of 0 arrives: everything up to 10 is in, the recovery point is not.
    h.ack(200 * MS, 10, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    h.ack(210 * MS, recovery_point, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!(h.events(), 1);
}

#[test]
fn without_sack_three_duplicate_acks_and_partial_acks_drive_newreno() {
    // RFC 6582 §3.2: the third duplicate ACK retransmits the first unacknowledged segment and
    // halves the window; a partial ACK retransmits the next hole without a new reduction; the
    // ACK of the recovery point ends recovery. Segments 0 and 5 are lost.
    let mut h = Harness::start(false);
    for _ in 0..2 {
        let sent = h.ack(100 * MS, 0, &[]);
        assert!(sent.retransmitted.is_empty());
    }
    assert_eq!(h.sender.ca_state(), CaState::Disorder);
    let cwnd_at_detection = h.sender.cwnd_pkts();
    let sent = h.ack(100 * MS, 0, &[]);
    assert_eq!(sent.retransmitted, [0]);
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Recovery, 1));
    assert_eq!(h.sender.ssthresh_pkts(), cwnd_at_detection / 2.0);
    let ssthresh = h.sender.ssthresh_pkts();
    let recovery_point = h.sender.recovery_point;
    // The duplicate ACKs of 4 and of 6..=9 follow; they take those segments out of the pipe.
    for _ in 0..5 {
        h.ack(100 * MS, 0, &[]);
    }
    assert_eq!(h.events(), 1);

    let sent = h.ack(200 * MS, 5, &[]);
    assert_eq!(sent.retransmitted, [5], "the partial ACK's retransmission");
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Recovery, 1));
    assert_eq!(h.sender.ssthresh_pkts(), ssthresh);

    h.ack(300 * MS, recovery_point, &[]);
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Open, 1));
}

#[test]
fn a_timeout_resends_the_first_segment_from_a_window_of_one_and_backs_off() {
    // Nothing of the first window comes back. Before any RTT sample the timeout is 1 s
    // (RFC 6298 §2.1).
    let mut h = Harness::start(true);
    let (fired_ns, sent) = h.fire_rto();
    assert_eq!(fired_ns, NS_PER_SEC);
    assert_eq!(h.sender.ca_state(), CaState::Loss);
    // RFC 6298 §5.4: retransmit the earliest unacknowledged segment; RFC 5681 §3.1: the loss
    // window is one segment, ssthresh = max(FlightSize / 2, 2).
    assert_eq!(
        sent,
        Sent {
            retransmitted: vec![0],
            new: vec![]
        }
    );
    assert_eq!(h.sender.cwnd_pkts(), 1.0);
    assert_eq!(h.sender.ssthresh_pkts(), INITIAL_WINDOW / 2.0);
    assert_eq!(h.sender.recovery_point, 10);
    // RFC 6298 §5.5–5.6: the timer doubles and restarts: 1 s + 2 s.
    assert_eq!(h.rto_wakes.first(), Some(&(3 * NS_PER_SEC)));

    let (fired_ns, sent) = h.fire_rto();
    assert_eq!(fired_ns, 3 * NS_PER_SEC);
    assert_eq!(sent.retransmitted, [0]);
    assert_eq!(h.rto_wakes.first(), Some(&(7 * NS_PER_SEC)));
    assert_eq!((h.sender.stats.timeouts, h.events()), (2, 0));
    // A timeout is not a fast recovery: none was counted. The second timeout of the same
    // segment computes ssthresh again, from the loss window: max(1 / 2, 2) = 2. (RFC 5681 §3.1
    // and Linux `tcp_enter_loss` hold it at 5 for a segment already resent by the timer; the
    // rfc host does not, the Linux hosts do: `rto_in_recovery`.)
    assert_eq!(h.sender.cwnd_pkts(), 1.0);
    assert_eq!(h.sender.ssthresh_pkts(), 2.0);
}

#[test]
fn after_a_timeout_slow_start_resends_what_was_outstanding_until_it_is_all_acknowledged() {
    // RFC 6675 §5.1: after the timeout every segment not SACKed is lost and goes out again,
    // lost segments before new data; the Loss state lasts until the data outstanding at the
    // timeout is acknowledged.
    let mut h = Harness::start(true);
    h.fire_rto();
    let sent = h.ack(NS_PER_SEC + 100 * MS, 1, &[]);
    assert_eq!(h.sender.cwnd_pkts(), 2.0, "slow start from the loss window");
    assert_eq!(
        sent,
        Sent {
            retransmitted: vec![1, 2],
            new: vec![]
        }
    );
    assert_eq!(h.sender.ca_state(), CaState::Loss);
    h.ack(NS_PER_SEC + 200 * MS, 10, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!(h.events(), 0);
}

#[test]
fn a_lost_fast_retransmission_lowers_the_window_a_second_time() {
    // RFC 5681 §4.3: the loss of a retransmission is two indications of congestion, and cwnd
    // and ssthresh are lowered twice.
    let mut h = Harness::start(true);
    h.lose_the_first_segment();
    let first_ssthresh = h.sender.ssthresh_pkts();
    let (at_130, at_230) = h.lose_a_fast_retransmission();
    assert_eq!(h.events(), 2);
    assert_eq!(h.sender.ssthresh_pkts(), first_ssthresh / 2.0);
    assert_eq!(h.sender.cwnd_pkts(), h.sender.ssthresh_pkts());
    assert_eq!(
        at_230.retransmitted,
        [0],
        "resent at once, as a fast retransmit"
    );
    // A new episode, with its own recovery point: what had been sent before the 230 ms ACK.
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    let sent_before = at_130.new[at_130.new.len() - 1] + 1;
    assert_eq!(h.sender.recovery_point, sent_before);
}

#[test]
fn a_retransmission_sent_before_the_last_reduction_does_not_lower_the_window_again() {
    // The retransmission of 4 (sent at 130 ms) is lost too, and found so at 330 ms, when the
    // second retransmission of 0 (sent at 230 ms) arrives. The reduction at 230 ms already
    // answered for what was in flight then: the window is lowered at most once per round trip.
    let mut h = Harness::start(true);
    h.lose_the_first_segment();
    let (at_130, _) = h.lose_a_fast_retransmission();
    assert_eq!(at_130.retransmitted, [4]);
    let (events, ssthresh) = (h.events(), h.sender.ssthresh_pkts());
    assert_eq!(events, 2);

    let sent = h.ack(330 * MS, 4, &[]);
    assert_eq!(
        sent.retransmitted,
        [4],
        "the lost retransmission goes out again"
    );
    assert_eq!((h.events(), h.sender.ssthresh_pkts()), (events, ssthresh));
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
}

/// What each ACK sends as segments 4, 5, … arrive one by one after the loss of segment 0.
fn new_segments_per_ack_after_a_loss(recovery: Recovery) -> Vec<usize> {
    let mut h = Harness::start_on(true, recovery);
    h.lose_the_first_segment();
    (5..=14)
        .map(|sacked_end| h.ack(100 * MS, 0, &[(1, sacked_end)]).new.len())
        .collect()
}

#[test]
fn prr_spreads_the_reduction_over_the_recovery_where_rfc_6675_pauses() {
    // The window was 12 when segment 0 was found lost, ssthresh 6, and 11 segments are in
    // flight after the fast retransmission. RFC 6675 sends nothing until pipe falls below 6
    // (five ACKs), then one per ACK. PRR (RFC 9937) sends one per two ACKs while pipe is above
    // ssthresh, then follows the ACK clock: the same data, without the pause.
    let rfc = new_segments_per_ack_after_a_loss(Recovery::RFC);
    assert_eq!(rfc, [0, 0, 0, 0, 0, 1, 1, 1, 1, 1]);
    let prr = new_segments_per_ack_after_a_loss(Recovery {
        window_reduction: WindowReduction::Prr,
        ..Recovery::RFC
    });
    assert_eq!(prr, [0, 1, 0, 1, 0, 1, 0, 0, 1, 1]);
}

#[test]
fn on_a_linux_host_a_lost_fast_retransmission_is_sent_again_without_a_second_reduction() {
    // The case of `a_lost_fast_retransmission_lowers_the_window_a_second_time`, on a Linux
    // host: RACK finds the retransmission of 0 lost (with no reordering window in recovery)
    // and it goes out again inside the same recovery; ssthresh stays.
    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.lose_the_first_segment();
    let (ssthresh, recovery_point) = (h.sender.ssthresh_pkts(), h.sender.recovery_point);
    let (_, at_230) = h.lose_a_fast_retransmission();
    assert_eq!(at_230.retransmitted, [0]);
    assert_eq!(h.events(), 1);
    assert_eq!(h.sender.ssthresh_pkts(), ssthresh);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(h.sender.recovery_point, recovery_point, "the same episode");
}
