//! The sender alone, driven by hand: ACKs and timer wake-ups go in at chosen times, packets and
//! wake-ups come out; no engine, no links, no receiver. Reno (AIMD 1, 1/2) sets the window, so
//! each congestion response halves it and shows in `ssthresh`.
//!
//! Every test starts from the same first window: ten segments 0..10 sent at t = 0, a 100 ms
//! path, and the ACKs a receiver would send for the segments the test says arrived.

use std::collections::BTreeSet;

use super::*;
use crate::cc::reno::{self, RenoParams};
use crate::cc::Init;
use crate::packet::SackBlock;
use crate::tcp::ecn::EcnMode;
use crate::tcp::host::WindowReduction;
use crate::time::{NS_PER_MS, NS_PER_SEC};
use tcpeval_netem::Ecn;

const MSS: u32 = 1000;
const INITIAL_WINDOW: f64 = 10.0;
const MS: u64 = NS_PER_MS;

/// What one call into the sender put on the wire.
#[derive(Debug, Default, PartialEq, Eq)]
struct Sent {
    retransmitted: Vec<u64>,
    new: Vec<u64>,
}

struct Harness {
    sender: Sender,
    /// RTO wake-ups the sender asked for and the test has not delivered yet.
    rto_wakes: BTreeSet<u64>,
}

impl Harness {
    /// A bulk sender of the textbook host that has just sent its first window at t = 0.
    fn start(sack: bool) -> Self {
        Self::start_on(sack, Recovery::RFC)
    }

    /// The same on a host with the given loss recovery.
    fn start_on(sack: bool, recovery: Recovery) -> Self {
        Self::start_with(sack, recovery, AppData::bulk(MSS))
    }

    /// A transfer of `segments` segments with SACK, its first window sent at t = 0.
    fn start_transfer(segments: u64, recovery: Recovery) -> Self {
        let mut app = AppData::messages(MSS);
        app.write(segments * u64::from(MSS));
        Self::start_with(true, recovery, app)
    }

    fn start_with(sack: bool, recovery: Recovery, app: AppData) -> Self {
        let cfg = SenderConfig {
            mss_bytes: MSS,
            sack,
            window_pkts: u64::MAX,
            min_rto_ns: 200 * MS,
            pacing_gap_ns: None,
            pacing_rate_bps: None,
            recovery,
            tso: false,
            ecn: EcnSender::new(EcnMode::Off, false),
        };
        let init = Init {
            mss_bytes: MSS,
            initial_cwnd_pkts: INITIAL_WINDOW,
            seed: 1,
        };
        let cc = Box::new(reno::new(RenoParams::default(), &init));
        let mut h = Self {
            sender: Sender::new(0, cfg, app, cc),
            rto_wakes: BTreeSet::new(),
        };
        let sent = h.call(|s, out| s.start(0, out));
        assert_eq!(sent.new, (0..10).collect::<Vec<_>>());
        h
    }

    /// One call into the sender: what it sent, and the RTO wake-up it asked for, noted.
    fn call(&mut self, f: impl FnOnce(&mut Sender, &mut Vec<Packet>) -> Wakeups) -> Sent {
        let first_new = self.sender.board.snd_nxt();
        let mut out = Vec::new();
        let wakeups = f(&mut self.sender, &mut out);
        self.rto_wakes.extend(wakeups.rto_ns);
        let (new, retransmitted) = out.iter().map(|p| p.seq).partition(|&s| s >= first_new);
        Sent { retransmitted, new }
    }

    /// An ACK at `now_ns`: cumulative up to `cum_ack`, with SACK blocks `[start, end)`. It
    /// echoes the clock now, as if the segment that made it had just left: never older than
    /// a retransmission, so that no test undoes by timestamps unless it means to
    /// (`ack_echoing`).
    fn ack(&mut self, now_ns: u64, cum_ack: u64, blocks: &[(u64, u64)]) -> Sent {
        self.ack_echoing(now_ns, tsval(now_ns), cum_ack, blocks)
    }

    /// The same ACK echoing TSval `tsecr` (RFC 7323 §4.3).
    fn ack_echoing(
        &mut self,
        now_ns: u64,
        tsecr: u32,
        cum_ack: u64,
        blocks: &[(u64, u64)],
    ) -> Sent {
        let mut ack = Packet::ack(0, cum_ack, 52);
        ack.timestamp = tsecr;
        for (slot, &(start, end)) in ack.sack.iter_mut().zip(blocks) {
            *slot = SackBlock::relative_to(cum_ack, start, end);
        }
        ack.n_sack = blocks.len() as u8;
        self.call(|s, out| s.on_ack(now_ns, &ack, out))
    }

    /// Deliver the RTO wake-ups in time order until the timer fires; returns when it fired and
    /// what the sender sent then.
    fn fire_rto(&mut self) -> (u64, Sent) {
        let timeouts = self.sender.stats.timeouts;
        while let Some(at_ns) = self.rto_wakes.pop_first() {
            let sent = self.call(|s, out| s.on_rto_wake(at_ns, out));
            if self.sender.stats.timeouts > timeouts {
                return (at_ns, sent);
            }
        }
        panic!("the retransmission timer never fired");
    }

    /// Segments 1, 2 and 3 arrive above a lost segment 0, each SACKed at 100 ms: fast
    /// recovery begins with the third (after two ACKs that grew the window to 12 and sent
    /// 10..14). Returns what the third ACK sent.
    fn lose_the_first_segment(&mut self) -> Sent {
        self.ack(100 * MS, 0, &[(1, 2)]);
        self.ack(100 * MS, 0, &[(1, 3)]);
        self.ack(100 * MS, 0, &[(1, 4)])
    }

    /// After `lose_the_first_segment`, segment 4 turns out lost too and the retransmission of 0
    /// is lost as well. At 130 ms 5..12 are SACKed: 4 is resent, with new data. At 230 ms that
    /// new data (and 12, 13) is SACKed while 0 is still missing: the retransmission of 0, sent
    /// at 100 ms, is lost (RACK, RFC 8985 §6.2: later than the 25 ms reordering window, a
    /// quarter of the 100 ms minimum RTT). Returns what the 130 ms and the 230 ms ACKs sent.
    fn lose_a_fast_retransmission(&mut self) -> (Sent, Sent) {
        let at_130 = self.ack(130 * MS, 0, &[(5, 12)]);
        let new_at_130 = (at_130.new[0], at_130.new[at_130.new.len() - 1] + 1);
        let at_230 = self.ack(230 * MS, 0, &[new_at_130, (12, new_at_130.0)]);
        (at_130, at_230)
    }

    fn events(&self) -> u64 {
        self.sender.stats.congestion_events
    }

    /// A cumulative ACK of `cum_ack` with ECE set, at `now_ns`; the packets it released.
    fn ece_ack(&mut self, now_ns: u64, cum_ack: u64) -> Vec<Packet> {
        let mut ack = Packet::ack(0, cum_ack, 52);
        ack.timestamp = tsval(now_ns);
        ack.ece = true;
        let mut out = Vec::new();
        let wakeups = self.sender.on_ack(now_ns, &ack, &mut out);
        self.rto_wakes.extend(wakeups.rto_ns);
        out
    }
}

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

/// The textbook host with undo and ssthresh kept across a timeout in recovery, so that the
/// window arithmetic stays that of the tests above.
const RFC_WITH_UNDO: Recovery = Recovery {
    undo: true,
    rto_in_recovery: RtoInRecovery::KeepSsthresh,
    ..Recovery::RFC
};

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

mod tso;
