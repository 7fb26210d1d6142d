//! Undoing a reduction proved spurious: D-SACK (RFC 3708), F-RTO (RFC 5682) and timestamps
//! (Eifel, RFC 3522), within and after recovery and after a timeout.

use super::*;

#[test]
fn a_d_sack_for_the_only_retransmission_undoes_the_reduction_within_recovery() {
    // Segment 0 was delayed, not lost: 1..4 arrive first and 0 is resent (fast retransmit).
    // Then the original arrives (cumulative ACK 4, still short of the recovery point), then the
    // retransmission, which the receiver reports as a duplicate below the cumulative ACK (RFC
    // 2883 §4.1.1). Every retransmission of the episode was unneeded (RFC 3708 §3): cwnd and
    // ssthresh return to their values before the reduction (Linux `tcp_try_undo_dsack`).
    for (recovery, undone) in [(Recovery::RFC, false), (RFC_WITH_UNDO, true)] {
        let mut h = Harness::start(true);
        h.sender.cfg.recovery = recovery;
        let sent = h.lose_the_first_segment();
        assert_eq!(sent.retransmitted, [0]);
        assert_eq!((h.sender.cwnd_pkts(), h.sender.ssthresh_pkts()), (6.0, 6.0));
        h.ack(150 * MS, 4, &[]);
        assert_eq!(h.sender.ca_state(), CaState::Recovery);
        h.ack(160 * MS, 4, &[(0, 1)]);
        let after = (h.sender.cwnd_pkts(), h.sender.ssthresh_pkts());
        if undone {
            assert_eq!(after, (12.0, f64::INFINITY), "the window before the loss");
            assert_eq!(h.sender.ca_state(), CaState::Open);
        } else {
            assert_eq!(
                after,
                (6.0, 6.0),
                "a D-SACK changes nothing on the rfc host"
            );
        }
        assert_eq!(h.sender.stats.undos, u64::from(undone));
    }
}

#[test]
fn a_d_sack_after_recovery_restores_the_larger_prior_window() {
    // The same delayed segment, but its retransmission is reported only once recovery is over
    // (the original's ACK reached the recovery point): Linux still undoes, to the larger of the
    // window now and the window before the reduction.
    let mut h = Harness::start_on(true, RFC_WITH_UNDO);
    h.lose_the_first_segment();
    let recovery_point = h.sender.recovery_point;
    h.ack(150 * MS, recovery_point, &[]);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!(h.sender.ssthresh_pkts(), 6.0);
    assert!(h.sender.cwnd_pkts() < 12.0, "{}", h.sender.cwnd_pkts());
    h.ack(160 * MS, recovery_point, &[(0, 1)]);
    assert_eq!(h.sender.cwnd_pkts(), 12.0);
    assert_eq!(h.sender.ssthresh_pkts(), f64::INFINITY);
    // A second D-SACK has no episode left to undo.
    h.ack(170 * MS, recovery_point, &[(0, 1)]);
    assert_eq!(h.sender.stats.undos, 1);
}

#[test]
fn a_d_sack_for_one_of_two_retransmissions_undoes_nothing() {
    // Segment 4 is lost too (RACK: SACKed data sent after it); 0 was only delayed. Only one of
    // the two retransmissions is reported twice: the episode stands (RFC 3708 §3).
    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.lose_the_first_segment();
    let sent = h.ack(130 * MS, 0, &[(5, 12), (1, 4)]);
    assert_eq!(sent.retransmitted, [4]);
    h.ack(150 * MS, 4, &[(5, 12)]);
    h.ack(160 * MS, 4, &[(0, 1), (5, 12)]);
    assert_eq!(h.sender.stats.undos, 0);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(h.sender.ssthresh_pkts(), 6.0);
}

#[test]
fn f_rto_undoes_a_timeout_after_which_data_sent_before_it_is_acknowledged() {
    // RFC 5682 §3.1 step 3b in Linux's SACK form: the ACKs were only late. After the timer
    // fires (1 s, no RTT sample yet) segment 0 is resent; the ACK that then arrives covers 0
    // and 1, and 1 was never resent: the timeout was spurious. The window returns, and the
    // segments the timeout took for lost are in flight again, not resent.
    let mut h = Harness::start_on(true, RFC_WITH_UNDO);
    let (_, sent) = h.fire_rto();
    assert_eq!(sent.retransmitted, [0]);
    assert_eq!((h.sender.cwnd_pkts(), h.sender.ssthresh_pkts()), (1.0, 5.0));
    let sent = h.ack(NS_PER_SEC + MS, 2, &[]);
    assert_eq!(h.sender.stats.undos, 1);
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!(h.sender.ssthresh_pkts(), f64::INFINITY);
    assert!(h.sender.cwnd_pkts() >= INITIAL_WINDOW);
    assert!(sent.retransmitted.is_empty(), "{sent:?}");
    assert_eq!(h.sender.board.lost_out(), 0);
}

#[test]
fn without_undo_a_late_ack_after_a_timeout_resends_what_the_timeout_took_for_lost() {
    let mut h = Harness::start(true);
    h.fire_rto();
    let sent = h.ack(NS_PER_SEC + MS, 2, &[]);
    assert_eq!(
        sent.retransmitted,
        [2, 3, 4],
        "slow start from 1 by the two acknowledged"
    );
    assert_eq!(h.sender.ssthresh_pkts(), 5.0);
}

#[test]
fn a_timeout_during_recovery_keeps_the_ssthresh_recovery_set() {
    // Linux `tcp_enter_loss`: ssthresh is recomputed only from Open or Disorder (or after
    // progress since the last timeout). The textbook sender computes it again from the window
    // recovery already halved: 6 becomes 3; the Linux hosts keep 6, and cwnd falls to 1 either
    // way. A second timeout without progress keeps it again.
    for (rto_in_recovery, ssthresh) in [
        (RtoInRecovery::Reduce, [3.0, 2.0]),
        (RtoInRecovery::KeepSsthresh, [6.0, 6.0]),
    ] {
        let recovery = Recovery {
            rto_in_recovery,
            ..Recovery::RFC
        };
        let mut h = Harness::start_on(true, recovery);
        h.lose_the_first_segment();
        assert_eq!(h.sender.ssthresh_pkts(), 6.0);
        h.fire_rto();
        assert_eq!(h.sender.ca_state(), CaState::Loss);
        assert_eq!(
            (h.sender.cwnd_pkts(), h.sender.ssthresh_pkts()),
            (1.0, ssthresh[0])
        );
        h.fire_rto();
        assert_eq!(
            (h.sender.cwnd_pkts(), h.sender.ssthresh_pkts()),
            (1.0, ssthresh[1])
        );
    }
}

/// The Linux host without timestamps: undo by D-SACK and F-RTO only.
const LINUX_WITHOUT_TIMESTAMPS: Recovery = Recovery {
    timestamps: false,
    ..Recovery::LINUX
};

#[test]
fn an_ack_echoing_a_segment_sent_before_a_timeout_undoes_it() {
    // Eifel (RFC 3522 §3.2; Linux `tcp_try_undo_loss`): the timer fires at 1 s (no RTT sample
    // yet) and resends 0; the next ACK covers only 0, so F-RTO (which needs never-resent data
    // acknowledged) cannot tell, but it echoes 0's original TSval (0 ms, before the
    // retransmission at 1000 ms): the timeout was spurious. An echo of the retransmission, or
    // no timestamps, leave the timeout standing.
    for (recovery, tsecr, undone) in [
        (Recovery::LINUX, 0, true),
        (Recovery::LINUX, 1000, false),
        (LINUX_WITHOUT_TIMESTAMPS, 0, false),
    ] {
        let mut h = Harness::start_on(true, recovery);
        let (fired_ns, sent) = h.fire_rto();
        assert_eq!((fired_ns, sent.retransmitted), (NS_PER_SEC, vec![0]));
        assert_eq!((h.sender.cwnd_pkts(), h.sender.ssthresh_pkts()), (1.0, 5.0));
        h.ack_echoing(NS_PER_SEC + MS, tsecr, 1, &[]);
        assert_eq!(h.sender.stats.undos, u64::from(undone), "{tsecr}");
        if undone {
            assert_eq!(h.sender.ca_state(), CaState::Open);
            assert_eq!(h.sender.ssthresh_pkts(), f64::INFINITY);
            // The window before the timeout, and slow start's one for the segment acked.
            assert_eq!(h.sender.cwnd_pkts(), INITIAL_WINDOW + 1.0);
            assert_eq!(
                h.sender.board.lost_out(),
                0,
                "1..10 are in flight after all"
            );
        } else {
            assert_eq!(h.sender.ca_state(), CaState::Loss);
            assert_eq!(h.sender.ssthresh_pkts(), 5.0);
        }
    }
}

#[test]
fn timestamps_undo_a_fast_retransmit_the_path_s_reordering_caused_before_any_d_sack() {
    // Segment 0 was delayed behind 1..4, not lost: fast recovery resends it at 100 ms. The
    // original then arrives and the ACK that reaches the recovery point echoes its TSval
    // (0 ms): the retransmission was not needed, and recovery ends undone (Linux
    // `tcp_try_undo_recovery`), where without timestamps the D-SACK of the retransmission
    // would be needed.
    for (recovery, undone) in [(Recovery::LINUX, true), (LINUX_WITHOUT_TIMESTAMPS, false)] {
        let mut h = Harness::start_on(true, recovery);
        let sent = h.lose_the_first_segment();
        assert_eq!(sent.retransmitted, [0]);
        assert_eq!(h.sender.ssthresh_pkts(), 6.0);
        let recovery_point = h.sender.recovery_point;
        h.ack_echoing(150 * MS, 0, recovery_point, &[]);
        assert_eq!(h.sender.ca_state(), CaState::Open);
        assert_eq!(h.sender.stats.undos, u64::from(undone));
        let ssthresh = if undone { f64::INFINITY } else { 6.0 };
        assert_eq!(h.sender.ssthresh_pkts(), ssthresh);
        if undone {
            let cwnd = h.sender.cwnd_pkts();
            assert!(cwnd >= 12.0, "the window before the reduction: {cwnd}");
        }
    }
}

#[test]
fn a_partial_ack_echoing_an_original_undoes_once_no_retransmission_is_in_flight() {
    // Linux `tcp_try_undo_partial`: the late original of 0 moves snd_una to 4, short of the
    // recovery point, echoing its own TSval. With the retransmission of 0 the only one, none
    // is left in flight: the reduction is undone within recovery, cwnd back at 12, and
    // nothing is taken for lost any more. If 4 was lost too and its retransmission is still
    // out, Linux waits.
    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.lose_the_first_segment();
    assert_eq!(h.sender.cwnd_pkts(), 6.0);
    h.ack_echoing(110 * MS, 0, 4, &[]);
    assert_eq!(h.sender.stats.undos, 1);
    // The window before the reduction, and slow start's one for the segment acked.
    assert_eq!(
        (h.sender.cwnd_pkts(), h.sender.ssthresh_pkts()),
        (13.0, f64::INFINITY)
    );
    assert_eq!(h.sender.ca_state(), CaState::Open);
    assert_eq!(h.sender.board.lost_out(), 0);

    let mut h = Harness::start_on(true, Recovery::LINUX);
    h.lose_the_first_segment();
    let sent = h.ack(130 * MS, 0, &[(5, 12), (1, 4)]);
    assert_eq!(sent.retransmitted, [4]);
    h.ack_echoing(150 * MS, 0, 4, &[(5, 12)]);
    assert_eq!(h.sender.stats.undos, 0);
    assert_eq!(h.sender.ca_state(), CaState::Recovery);
    assert_eq!(h.sender.ssthresh_pkts(), 6.0);
}

#[test]
fn without_sack_timestamps_undo_a_fast_retransmit_too() {
    // Eifel needs no SACK (RFC 3522): the third duplicate ACK resends 0 at 100 ms; 0 was
    // only late, and the ACK that its original makes (covering 0..10, short of the recovery
    // point) echoes its TSval. No retransmission is left in flight: the reduction is undone,
    // and the duplicate ACKs it counted are spent by the cumulative ACK, so no new recovery
    // follows.
    let mut h = Harness::start_on(false, Recovery::LINUX);
    for _ in 0..3 {
        h.ack(100 * MS, 0, &[]);
    }
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Recovery, 1));
    assert!(h.sender.recovery_point > 10);
    h.ack_echoing(110 * MS, 0, 10, &[]);
    assert_eq!(h.sender.stats.undos, 1);
    assert_eq!(h.sender.ssthresh_pkts(), f64::INFINITY);
    h.ack(120 * MS, 11, &[]);
    assert_eq!((h.sender.ca_state(), h.events()), (CaState::Open, 1));
}
