//! The TCP sender: what to send and when, loss detection and recovery, the retransmission
//! timer, and the calls into the congestion controller.
//!
//! Recovery follows RFC 6675 with SACK (the sender keeps `pipe < cwnd`, retransmitting lost
//! segments first) and RFC 6582 NewReno without it (three duplicate ACKs or a partial ACK
//! mark the first unacknowledged segment lost; duplicate ACKs stand in for SACKed segments in
//! `pipe`, as in Linux). Either way the controller is told once per window (`on_congestion`)
//! and sets cwnd = ssthresh; the window is not inflated. The host's switches (`host.rs`) say
//! the rest: whether a hole is lost after three SACKed segments above it (RFC 6675) or after
//! one sent later (RACK, RFC 8985); how the flight falls to ssthresh (at once, PRR or rate
//! halving: `reduction.rs`); and whether a retransmission found lost (RACK, RFC 8985 §6.2)
//! lowers the window a second time (RFC 5681 §4.3) or is simply sent again, as Linux does;
//! and whether a tail loss probe (RFC 8985 §7) goes out before the retransmission timer (and,
//! with RACK, its reordering timer, §6.3: a hole not yet taken for lost is after RACK.rtt plus
//! the reordering window, even if no ACK comes); whether
//! a reduction proved spurious by D-SACKs (RFC 3708), F-RTO (RFC 5682) or timestamps (Eifel,
//! RFC 3522) is undone (`undo.rs`), and whether a timeout during recovery lowers ssthresh again.
//! Timeouts follow RFC 6298 (see `rtt.rs`).

use super::appdata::{AppData, Availability};
use super::ecn::EcnSender;
use super::host::{LossDetection, LostRetransmission, Recovery, RtoInRecovery};
use super::pacer::Pacer;
use super::rate::RateSampler;
use super::reduction::{RecoveryAck, Reduction};
use super::rtt::RttEstimator;
use super::scoreboard::{LostRetransmissions, Scoreboard, Segment, DUP_THRESH};
use super::timestamps::tsval;
use super::tso::{self, Frame, Outlook};
use super::undo::{dsack_block, Episode};
use crate::cc::{Ack, CaState, CongestionControl, CongestionEvent, Path, Signal};
use crate::engine::{FlowId, Timer, TimerAction};
use crate::packet::Packet;
use crate::prefetch::prefetch;
use crate::scenario::HEADER_BYTES;
use crate::time::NS_PER_MS;

/// RFC 8985 §7.2 WCDelAckT: the longest a receiver may hold the ACK of a lone segment, added
/// to the probe timeout when only one segment is out.
const WORST_CASE_DELAYED_ACK_NS: u64 = 200 * NS_PER_MS;

/// How long after its deadline RACK's reordering timer fires: Linux adds two jiffies
/// (`TCP_TIMEOUT_MIN`) so that every suspect is past its own when it does; 8 ms at the HZ of
/// 250 of the kernels the lab runs (2 ms at HZ 1000).
const REORDERING_TIMER_SLACK_NS: u64 = 8 * NS_PER_MS;

/// What the retransmission timer's slot is set for (Linux `icsk_pending`): the timer itself, or
/// in its place a tail loss probe (RFC 8985 §7) or RACK's reordering timer (§6.3), each of
/// which gives the slot back to the retransmission timer once it has fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RtoSlot {
    Retransmission,
    LossProbe,
    Reordering,
}

#[derive(Debug, Clone)]
pub struct SenderConfig {
    pub mss_bytes: u32,
    pub sack: bool,
    /// Socket-buffer limit on segments outstanding; `u64::MAX` when unlimited.
    pub window_pkts: u64,
    pub min_rto_ns: u64,
    /// Packets leave at least this far apart (the "kernel delay" studies: a blocking delay
    /// per packet in the transmit path).
    pub pacing_gap_ns: Option<u64>,
    /// A cap on the sending rate, payload bits/s (a host or `fq` rate limit).
    pub pacing_rate_bps: Option<u64>,
    pub recovery: Recovery,
    /// Segments leave in TSO/GSO frames, a small one held back for a larger (`tso.rs`).
    pub tso: bool,
    /// The codepoint of its segments and how it reads the receiver's echo.
    pub ecn: EcnSender,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data packets transmitted, retransmissions included.
    pub packets_sent: u64,
    pub retransmits: u64,
    pub timeouts: u64,
    /// Window reductions for inferred loss (fast recoveries) or ECN echoes.
    pub congestion_events: u64,
    /// Of those, reductions for ECN echoes (RFC 3168 §6.1.2).
    pub ecn_reductions: u64,
    /// ACKs that carried ECE (classic and DCTCP feedback) or a new CE count (accurate).
    pub ece_acks: u64,
    /// Reductions undone as spurious (D-SACK, F-RTO or timestamps).
    pub undos: u64,
    /// When everything the application had written was last cumulatively acknowledged.
    pub all_acked_ns: Option<u64>,
}

/// Wake-ups the caller must schedule after a call into the sender.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wakeups {
    pub rto_ns: Option<u64>,
    /// The pacing gate opens, or the source produces the next segment.
    pub send_ns: Option<u64>,
}

/// What one ACK delivered.
#[derive(Debug, Default)]
struct Deliveries {
    /// Packets newly acknowledged or SACKed.
    acked: u64,
    /// Send time of the newest of them.
    newest_sent_ns: Option<u64>,
    /// Send time of the newest of them never retransmitted (Karn: the RTT sample).
    newest_clean_sent_ns: Option<u64>,
    /// Send time of the oldest of them never retransmitted (F-RTO's test).
    oldest_clean_sent_ns: Option<u64>,
}

/// A tail loss probe awaiting its answer (RFC 8985 §7.4; Linux `tlp_high_seq`, `tlp_retrans`).
#[derive(Debug, Clone, Copy)]
struct LossProbe {
    /// snd_nxt when the probe left (RFC 8985 TLPRxtOut's end).
    high_seq: u64,
    /// The probe resent a segment rather than sending a new one.
    retransmitted: bool,
}

/// Where the next segment comes from.
enum Next {
    Retransmit(u64),
    New,
}

#[derive(Debug)]
pub struct Sender {
    flow: FlowId,
    cfg: SenderConfig,
    cc: Box<dyn CongestionControl>,
    board: Scoreboard,
    rtt: RttEstimator,
    rate: RateSampler,
    ca_state: CaState,
    /// RFC 6582 `recover` / RFC 6675 RecoveryPoint: snd_nxt when the episode began.
    recovery_point: u64,
    /// When the window was last reduced (recovery entered, or the timer fired).
    reduced_at_ns: u64,
    /// How the flight falls to ssthresh during fast recovery.
    reduction: Reduction,
    /// The controller sets cwnd during recovery itself (BBR): no reduction of the sender's.
    cc_owns_recovery: bool,
    /// The last reduction, kept to undo it or to replay it (`undo.rs`); only when the host
    /// undoes or keeps ssthresh across a timeout, and never for BBR, whose window the episode
    /// does not set (Linux `bbr_undo_cwnd` keeps cwnd).
    episode: Option<Episode>,
    /// snd_una at the last timeout: a timeout with no progress since is a repeat.
    timeout_una: u64,
    /// F-RTO (RFC 5682) watches the timeout at this time for original data acknowledged.
    frto_since_ns: Option<u64>,
    /// The retransmission timer, or in its place a probe's or the reordering timer:
    /// `rto_slot` says which.
    rto: Timer,
    rto_slot: RtoSlot,
    /// When the retransmission timer fires, whether or not a probe is due first.
    rto_due_ns: u64,
    /// RACK.xmit_ts (RFC 8985 §6.1): the latest send time of a segment delivered so far.
    rack_sent_ns: u64,
    /// RACK.rtt: the round trip of that segment, measured when it was delivered.
    rack_rtt_ns: u64,
    /// The probe out, until the ACKs settle what it found (RFC 8985 §7.4).
    loss_probe: Option<LossProbe>,
    /// Wakes the sender when pacing or the data source holds it back.
    send_timer: Timer,
    pacer: Pacer,
    /// The TSO frame being sent; `None` when the host sends segment by segment.
    tso: Option<Frame>,
    /// The controller's window and the pacing rate in force, read after every call into the
    /// controller (`cc_changed`): the send loop consults them once per packet.
    cwnd_pkts: u64,
    pacing_rate_bps: Option<u64>,
    /// The last attempt to send stopped at cwnd (not at the window or for lack of data).
    cwnd_limited: bool,
    /// Recovery has just begun: the first lost segment goes out whatever pipe says.
    fast_retransmit_due: bool,
    /// What the application has handed over.
    app: AppData,
    /// The receive window last advertised, segments (RFC 9293 §3.8.6).
    rwnd_pkts: u64,
    /// The application still hands data to TCP.
    app_open: bool,
    last_send_ns: u64,
    wakeups: Wakeups,
    pub stats: SenderStats,
}

impl Sender {
    /// Prefetch what the next ACK reaches through pointers: the controller and the records at
    /// both ends of the ring (`Scoreboard::prefetch_ends`). Call it once the sender's own lines
    /// are cached, or it waits for them.
    pub fn prefetch_indirect(&self) {
        prefetch(&*self.cc);
        self.board.prefetch_ends();
    }

    pub fn new(
        flow: FlowId,
        cfg: SenderConfig,
        app: AppData,
        cc: Box<dyn CongestionControl>,
    ) -> Self {
        let rtt = RttEstimator::new(cfg.min_rto_ns);
        let pacer = Pacer::new(cfg.mss_bytes, cfg.pacing_gap_ns, cfg.pacing_rate_bps);
        let reduction = Reduction::new(cfg.recovery.window_reduction);
        let cc_owns_recovery = cc.owns_recovery();
        let tso = cfg.tso.then(Frame::default);
        let mut sender = Self {
            flow,
            cfg,
            cc,
            board: Scoreboard::default(),
            rtt,
            rate: RateSampler::default(),
            ca_state: CaState::Open,
            recovery_point: 0,
            reduced_at_ns: 0,
            reduction,
            cc_owns_recovery,
            episode: None,
            timeout_una: 0,
            frto_since_ns: None,
            rto: Timer::default(),
            rto_slot: RtoSlot::Retransmission,
            rto_due_ns: 0,
            rack_sent_ns: 0,
            rack_rtt_ns: 0,
            loss_probe: None,
            send_timer: Timer::default(),
            pacer,
            tso,
            cwnd_pkts: 0,
            pacing_rate_bps: None,
            cwnd_limited: false,
            fast_retransmit_due: false,
            app,
            rwnd_pkts: u64::MAX,
            app_open: false,
            last_send_ns: 0,
            wakeups: Wakeups::default(),
            stats: SenderStats::default(),
        };
        sender.cc_changed();
        sender
    }

    /// Read what the controller decides after a call into it.
    fn cc_changed(&mut self) {
        self.cwnd_pkts = self.cc.cwnd().max(1.0) as u64;
        self.pacing_rate_bps = self.pacer.rate_bps(self.cc.pacing_rate_bps());
    }

    /// The application starts handing data to TCP.
    pub fn start(&mut self, now_ns: u64, out: &mut Vec<Packet>) -> Wakeups {
        self.app_open = true;
        self.send(now_ns, out);
        self.take_wakeups()
    }

    /// The application stops handing data to TCP; what is outstanding is still delivered.
    pub fn stop(&mut self) {
        self.app_open = false;
    }

    /// The application writes a message of `bytes`. Returns the segment its data ends at.
    pub fn write(&mut self, now_ns: u64, bytes: u64, out: &mut Vec<Packet>) -> (u64, Wakeups) {
        let end = self.app.write(bytes);
        self.send(now_ns, out);
        (end, self.take_wakeups())
    }

    pub fn on_ack(&mut self, now_ns: u64, ack: &Packet, out: &mut Vec<Packet>) -> Wakeups {
        let prior_una = self.board.snd_una();
        let prior_in_flight = self.board.in_flight();
        self.rwnd_pkts = if ack.window == u32::MAX {
            u64::MAX
        } else {
            u64::from(ack.window)
        };
        let cum_ack = ack.seq.min(self.board.snd_nxt());
        let progressed = cum_ack > prior_una;
        let delivered = self.take_deliveries(now_ns, ack, cum_ack);
        let dsack = dsack_block(ack);
        if let (Some(episode), Some(duplicate)) = (&mut self.episode, dsack) {
            episode.on_dsack(duplicate);
        }
        let rack_advanced = self.advance_rack(now_ns, delivered.newest_sent_ns);
        if let Some(probe) = self.loss_probe {
            let pure_dupack = !progressed && delivered.acked == 0;
            self.settle_probe(now_ns, probe, cum_ack, dsack, pure_dupack);
        }
        let mut acked = delivered.acked;
        if !self.cfg.sack {
            acked += self.count_dupacks(cum_ack - prior_una);
        }
        let echo = self.cfg.ecn.on_ack(ack, acked as u32);
        self.stats.ece_acks += u64::from(echo.congestion);
        let rtt_ns = delivered.newest_clean_sent_ns.map(|sent| now_ns - sent);
        if let Some(r) = rtt_ns {
            self.rtt.on_sample(r);
        }
        let mut lost = self.mark_losses(progressed);
        let lost_retx = match delivered.newest_sent_ns {
            Some(newest_ns) => self
                .board
                .mark_lost_retransmissions(newest_ns, self.reordering_window_ns()),
            None => LostRetransmissions::default(),
        };
        lost += lost_retx.count;
        self.try_undo(&delivered, progressed.then_some(ack.timestamp));
        self.update_ca_state(now_ns, prior_in_flight);
        if echo.congestion && matches!(self.ca_state, CaState::Open | CaState::Disorder) {
            self.enter_cwr(now_ns, prior_in_flight);
        }
        let reordering_timer = rack_advanced && self.arm_reordering_timer();
        if self.cfg.recovery.lost_retransmission == LostRetransmission::Reduce
            && self.lost_a_retransmission_since_the_cut(lost_retx)
        {
            self.enter_recovery(now_ns, prior_in_flight);
        }
        let info = Ack {
            now_ns,
            acked: acked as u32,
            lost: lost as u32,
            ce_pkts: echo.ce_pkts,
            rtt_ns,
            prior_in_flight: prior_in_flight as u32,
            in_flight: self.board.in_flight() as u32,
            round_start: false,
            ca_state: self.ca_state,
            cwnd_limited: self.cwnd_limited,
            rate: None,
        };
        self.inform_controller(info);
        if self.in_window_reduction() {
            self.reduction.on_ack(RecoveryAck {
                delivered_pkts: acked,
                in_flight_pkts: self.board.in_flight(),
                snd_una_advanced: progressed,
                newly_lost: lost > 0,
            });
        }
        if progressed {
            if !reordering_timer {
                self.restart_rto(now_ns); // RFC 6298 §5.2–5.3
            }
            if self.app.end_segment() == Some(cum_ack) {
                self.stats.all_acked_ns = Some(now_ns);
            }
        }
        self.send(now_ns, out);
        self.take_wakeups()
    }

    /// Close the ACK's rate sample and give the controller what the ACK told (Linux
    /// `tcp_cong_control`), when it acknowledged anything.
    fn inform_controller(&mut self, mut info: Ack) {
        let sample = self.rate.finish_ack(info.now_ns, self.rtt.min_rtt_ns());
        if info.acked == 0 {
            return;
        }
        info.round_start = sample.round_start;
        info.rate = sample.rate;
        let path = self.path();
        self.cc.on_ack(&info, &path);
        self.cc_changed();
    }

    pub fn on_rto_wake(&mut self, now_ns: u64, out: &mut Vec<Packet>) -> Wakeups {
        match self.rto.on_wake(now_ns) {
            TimerAction::Fire => {
                match std::mem::replace(&mut self.rto_slot, RtoSlot::Retransmission) {
                    RtoSlot::Retransmission => self.on_timeout(now_ns, out),
                    RtoSlot::LossProbe => self.probe(now_ns, out),
                    RtoSlot::Reordering => self.on_reordering_timeout(now_ns, out),
                }
            }
            TimerAction::Schedule(t) => self.wakeups.rto_ns = Some(t),
            TimerAction::Nothing => {}
        }
        self.take_wakeups()
    }

    pub fn on_send_wake(&mut self, now_ns: u64, out: &mut Vec<Packet>) -> Wakeups {
        match self.send_timer.on_wake(now_ns) {
            TimerAction::Fire => self.send(now_ns, out),
            TimerAction::Schedule(t) => self.wakeups.send_ns = Some(t),
            TimerAction::Nothing => {}
        }
        self.take_wakeups()
    }

    /// Apply the cumulative ACK and the SACK blocks to the scoreboard. Returns the packets
    /// newly delivered and the send time of the newest of them never retransmitted (Karn).
    fn take_deliveries(&mut self, now_ns: u64, ack: &Packet, cum_ack: u64) -> Deliveries {
        let mut d = Deliveries::default();
        let rate = &mut self.rate;
        let mut note = |s: &Segment| {
            d.acked += 1;
            rate.on_delivered(now_ns, &s.tx());
            d.newest_sent_ns = d.newest_sent_ns.max(Some(s.sent_ns()));
            if !s.ever_retransmitted() {
                d.newest_clean_sent_ns = d.newest_clean_sent_ns.max(Some(s.sent_ns()));
                let oldest = d.oldest_clean_sent_ns.unwrap_or(s.sent_ns());
                d.oldest_clean_sent_ns = Some(oldest.min(s.sent_ns()));
            }
        };
        self.board.ack_cumulative(cum_ack, &mut note);
        if self.cfg.sack {
            self.board.sack_blocks(ack, &mut note);
        }
        d
    }

    /// Without SACK: an ACK that moves nothing is a duplicate and stands for one segment
    /// received. Returns the packets it counts for.
    fn count_dupacks(&mut self, newly_acked: u64) -> u64 {
        if newly_acked > 0 {
            self.board.on_reno_ack(newly_acked);
            0
        } else if self.board.packets_out() > 0 {
            self.board.on_dupack();
            1
        } else {
            0
        }
    }

    /// Mark what this ACK shows lost. Returns how many segments were newly marked.
    fn mark_losses(&mut self, progressed: bool) -> u64 {
        if self.cfg.sack {
            return match self.cfg.recovery.loss_detection {
                LossDetection::Dupthresh => self.board.mark_lost_by_sack(),
                LossDetection::Rack => self.mark_losses_by_rack(),
            };
        }
        let partial_ack = progressed
            && self.ca_state == CaState::Recovery
            && self.board.snd_una() < self.recovery_point;
        let dupthresh_reached = matches!(self.ca_state, CaState::Open | CaState::Disorder)
            && self.board.sacked_out() >= DUP_THRESH;
        if partial_ack || dupthresh_reached {
            self.board.mark_head_lost() // RFC 6582 §3.2 steps 2 and 3 (partial ACK)
        } else {
            0
        }
    }

    /// RACK (RFC 8985 §6.2): segments sent a reordering window before the latest one delivered
    /// are lost; with no window, so is every hole below a SACKed segment sent in the same
    /// instant (Linux breaks such ties by sequence, `tcp_rack_sent_after`).
    fn mark_losses_by_rack(&mut self) -> u64 {
        let reo_wnd_ns = self.reordering_window_ns();
        let by_time = self
            .board
            .mark_lost_sent_before(self.rack_sent_ns, reo_wnd_ns);
        if reo_wnd_ns == 0 {
            by_time + self.board.mark_lost_below_highest_sacked()
        } else {
            by_time
        }
    }

    /// RFC 8985 §6.2 step 2: RACK follows the latest-sent segment delivered, and the round trip
    /// it took. Returns whether this ACK delivered a segment sent no earlier than any before it
    /// (Linux breaks ties by sequence; of segments sent in one instant, the higher are
    /// delivered by the later ACKs).
    fn advance_rack(&mut self, now_ns: u64, newest_sent_ns: Option<u64>) -> bool {
        match newest_sent_ns {
            Some(sent_ns) if sent_ns >= self.rack_sent_ns => {
                self.rack_sent_ns = sent_ns;
                self.rack_rtt_ns = now_ns - sent_ns;
                true
            }
            _ => false,
        }
    }

    /// RFC 8985 §6.2 step 5: holes sent before the newest segment delivered, but less than a
    /// reordering window before it, are suspects, lost once RACK.rtt plus the window has passed
    /// since they were sent. One timer waits for the newest of them (Linux
    /// `tcp_rack_detect_loss`: the latest deadline, so one expiry settles them all), in the
    /// retransmission timer's slot. Only while holes are still suspects, in Disorder (nothing is
    /// lost yet) with a reordering window. Returns whether it was armed.
    fn arm_reordering_timer(&mut self) -> bool {
        let reo_wnd_ns = self.reordering_window_ns();
        let applies = self.cfg.sack
            && self.cfg.recovery.loss_detection == LossDetection::Rack
            && self.ca_state == CaState::Disorder
            && reo_wnd_ns > 0;
        if !applies {
            return false; // before the scoreboard is read: this runs on most ACKs
        }
        let suspect_sent_ns = self
            .board
            .newest_hole_sent_ns()
            .filter(|&sent_ns| sent_ns <= self.rack_sent_ns);
        let Some(sent_ns) = suspect_sent_ns else {
            return false;
        };
        self.rto_slot = RtoSlot::Reordering;
        self.set_timer(sent_ns + self.rack_rtt_ns + reo_wnd_ns + REORDERING_TIMER_SLACK_NS);
        true
    }

    /// RFC 8985 §6.3: the reordering timer fired with no ACK since. The suspects whose time is
    /// up are lost and recovery begins (Linux `tcp_rack_reo_timeout`). The retransmission
    /// timer takes its slot back: as it was if nothing was lost, else an RTO from now, as the
    /// first hole is resent.
    fn on_reordering_timeout(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        let prior_in_flight = self.board.in_flight();
        let waited_ns = self.rack_rtt_ns + self.reordering_window_ns();
        let lost = self
            .board
            .mark_lost_holes_sent_by(now_ns.saturating_sub(waited_ns));
        if lost == 0 {
            self.arm_rto(self.rto_due_ns.max(now_ns));
            return;
        }
        if matches!(self.ca_state, CaState::Open | CaState::Disorder) {
            self.enter_recovery(now_ns, prior_in_flight);
        }
        self.arm_rto(now_ns + self.rtt.rto_ns());
        self.send(now_ns, out);
    }

    /// Linux `tcp_rack_reo_wnd` on a path that has shown no reordering: RACK waits no time
    /// for reordering once recovery has begun or DupThresh segments are SACKed.
    fn rack_without_reordering_window(&self) -> bool {
        self.cfg.recovery.loss_detection == LossDetection::Rack
            && (matches!(self.ca_state, CaState::Recovery | CaState::Loss)
                || self.board.sacked_out() >= DUP_THRESH)
    }

    /// How much later than a retransmission a delivered segment must have been sent for the
    /// retransmission to count as lost: a quarter of the minimum RTT (RFC 8985 §6.2), or
    /// none where RACK waits no time.
    fn reordering_window_ns(&self) -> u64 {
        if self.rack_without_reordering_window() {
            0
        } else {
            self.rtt.min_rtt_ns() / 4
        }
    }

    fn update_ca_state(&mut self, now_ns: u64, prior_in_flight: u64) {
        let snd_una = self.board.snd_una();
        // CWR is held until something above the recovery point is acknowledged: the segment
        // that carried CWR to the receiver starts there, and an ACK sent before it arrived
        // still echoes the old marks (Linux `tcp_fastretrans_alert`, `TCP_CA_CWR`).
        let recovered = match self.ca_state {
            CaState::Recovery | CaState::Loss => snd_una >= self.recovery_point,
            CaState::Cwr => snd_una > self.recovery_point,
            CaState::Open | CaState::Disorder => false,
        };
        if recovered {
            self.ca_state = CaState::Open;
            if !self.cfg.sack {
                self.board.reset_dupacks();
            }
            let path = self.path();
            self.cc.on_recovery_exit(now_ns, &path);
            self.cc_changed();
        }
        let loss_found = self.board.lost_out() > 0 && !self.only_the_probe_is_lost();
        match self.ca_state {
            CaState::Open | CaState::Disorder if loss_found => {
                self.enter_recovery(now_ns, prior_in_flight);
            }
            CaState::Open | CaState::Disorder if self.board.sacked_out() > 0 => {
                self.ca_state = CaState::Disorder;
            }
            CaState::Open | CaState::Disorder => self.ca_state = CaState::Open,
            CaState::Cwr if loss_found => self.recover_within_cwr(),
            _ => {}
        }
    }

    /// RFC 3168 §6.1.2: CE echoed back is a congestion signal answered as a loss would be, at
    /// most once per window of data, with nothing to retransmit: the window falls (PRR, as
    /// Linux's `tcp_enter_cwr`) to what the controller sets, and the next new segment says so
    /// with CWR. An ECN reduction is never undone (Linux clears `undo_marker`).
    fn enter_cwr(&mut self, now_ns: u64, in_flight: u64) {
        self.ca_state = CaState::Cwr;
        self.recovery_point = self.board.snd_nxt();
        self.episode = None;
        let prior_cwnd_pkts = self.cwnd_pkts;
        self.reduce_window(now_ns, in_flight, 0, Signal::Ecn);
        self.reduction.start(prior_cwnd_pkts, self.cwnd_pkts);
        self.cfg.ecn.on_reduced();
    }

    /// A loss found while the window already falls for an echo: recovery, without a second
    /// reduction for the same window (Linux `tcp_enter_recovery` within a cwnd reduction).
    fn recover_within_cwr(&mut self) {
        self.ca_state = CaState::Recovery;
        self.loss_probe = None;
        self.recovery_point = self.board.snd_nxt();
        self.fast_retransmit_due = true;
    }

    /// The window falls towards the controller's by the sender's reduction (PRR, rate halving).
    fn in_window_reduction(&self) -> bool {
        matches!(self.ca_state, CaState::Recovery | CaState::Cwr)
    }

    /// RFC 5681 §4.3: "the loss of a retransmission should be taken as two indications of
    /// congestion and, therefore, cwnd (and ssthresh) MUST be lowered twice". Only a
    /// retransmission sent after the last reduction counts, so the window is lowered at most
    /// once per round trip: one sent before it was already paid for by that reduction.
    fn lost_a_retransmission_since_the_cut(&self, lost: LostRetransmissions) -> bool {
        matches!(self.ca_state, CaState::Recovery | CaState::Loss)
            && lost
                .newest_sent_ns
                .is_some_and(|sent_ns| sent_ns >= self.reduced_at_ns)
    }

    /// The first loss of a window (RFC 6675 §5 step 4, RFC 6582 §3.2 step 2), or a lost
    /// retransmission (RFC 5681 §4.3): a new episode, with its own recovery point.
    fn enter_recovery(&mut self, now_ns: u64, in_flight: u64) {
        self.ca_state = CaState::Recovery;
        self.loss_probe = None; // Linux `tcp_init_cwnd_reduction`: recovery takes over
        self.recovery_point = self.board.snd_nxt();
        self.fast_retransmit_due = true;
        let prior_cwnd_pkts = self.cwnd_pkts;
        self.begin_episode();
        self.reduce_window(now_ns, in_flight, self.board.lost_out(), Signal::Loss);
        self.reduction.start(prior_cwnd_pkts, self.cwnd_pkts);
    }

    /// A congestion event: the controller reduces its window (and is read again).
    fn reduce_window(&mut self, now_ns: u64, in_flight: u64, lost: u64, signal: Signal) {
        self.stats.congestion_events += 1;
        self.stats.ecn_reductions += u64::from(signal == Signal::Ecn);
        self.reduced_at_ns = now_ns;
        let ev = CongestionEvent {
            now_ns,
            signal,
            in_flight: in_flight as u32,
            lost: lost as u32,
        };
        let path = self.path();
        self.cc.on_congestion(&ev, &path);
        self.cc_changed();
    }

    /// RFC 6298 §5.4–5.6 and RFC 6675 §5.1.
    fn on_timeout(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        if self.board.packets_out() == 0 {
            self.probe_window(now_ns, out);
            return;
        }
        self.stats.timeouts += 1;
        self.loss_probe = None;
        self.rtt.on_timeout();
        if !self.cfg.sack {
            self.board.reset_dupacks();
        }
        let repeated = self.ca_state == CaState::Loss && self.board.snd_una() == self.timeout_una;
        // Linux arms F-RTO from any state before Recovery, CWR included.
        let from_open = matches!(
            self.ca_state,
            CaState::Open | CaState::Disorder | CaState::Cwr
        );
        self.board.mark_all_lost();
        self.reduce_for_timeout(now_ns, repeated);
        // RFC 5682 §3.1 step 1, as Linux arms F-RTO: not on a first timeout during recovery,
        // whose retransmissions already went out (`tcp_enter_loss`).
        let frto = self.cfg.recovery.undo && self.cfg.sack && (from_open || repeated);
        self.frto_since_ns = frto.then_some(now_ns);
        self.timeout_una = self.board.snd_una();
        self.ca_state = CaState::Loss;
        self.recovery_point = self.board.snd_nxt();
        self.reduced_at_ns = now_ns;
        self.arm_rto(now_ns + self.rtt.rto_ns());
        self.send(now_ns, out);
    }

    /// The controller's reduction for a timeout. Linux recomputes ssthresh only from Open or
    /// Disorder, or after progress since the last timeout (`tcp_enter_loss`); otherwise, under
    /// `keep-ssthresh`, the timeout is applied to the controller as it was before the current
    /// episode's reduction, which sets ssthresh as that reduction did, and cwnd to 1.
    fn reduce_for_timeout(&mut self, now_ns: u64, repeated: bool) {
        let keep = self.cfg.recovery.rto_in_recovery == RtoInRecovery::KeepSsthresh
            && (self.ca_state == CaState::Recovery || repeated);
        match &self.episode {
            Some(episode) if keep => self.cc = episode.prior().snapshot(),
            _ => self.begin_episode(),
        }
        let path = self.path();
        self.cc.on_timeout(now_ns, &path);
        self.cc_changed();
    }

    /// A reduction begins: keep the controller as it is, to undo or replay the reduction.
    fn begin_episode(&mut self) {
        let keeps = self.cfg.recovery.undo
            || self.cfg.recovery.rto_in_recovery == RtoInRecovery::KeepSsthresh;
        if keeps && !self.cc_owns_recovery {
            self.episode = Some(Episode::new(
                self.cc.snapshot(),
                self.board.snd_una(),
                self.board.retrans_out(),
                self.board.oldest_retransmission_sent_ns(),
            ));
        }
    }

    /// Undo the last reduction if it proved spurious: every retransmission of the episode
    /// reported as a duplicate (RFC 3708 §3), or, after a timeout, original data sent before
    /// it acknowledged (F-RTO, RFC 5682 §3.1 step 3b in Linux's SACK form, `tcp_process_loss`),
    /// or an ACK that moved snd_una echoing an original (`echo`, its TSecr; Eifel, see
    /// `eifel_undoes`). Within the episode the controller returns to what it was (its window
    /// has not grown since); after it, only if that window is the larger (Linux:
    /// max(cwnd, prior_cwnd)).
    fn try_undo(&mut self, delivered: &Deliveries, echo: Option<u32>) {
        if !self.cfg.recovery.undo {
            return;
        }
        let Some(episode) = &self.episode else {
            return;
        };
        // Most ACKs come in Open, where only D-SACKs can undo: the echo is read only within
        // the episode.
        let in_episode = matches!(self.ca_state, CaState::Recovery | CaState::Loss);
        let spurious_timeout = self.ca_state == CaState::Loss
            && self
                .frto_since_ns
                .zip(delivered.oldest_clean_sent_ns)
                .is_some_and(|(timeout_ns, sent_ns)| sent_ns < timeout_ns);
        let by_timestamps =
            in_episode && echo.is_some_and(|tsecr| self.eifel_undoes(episode, tsecr));
        if !(spurious_timeout || by_timestamps || episode.all_retransmissions_dsacked()) {
            return;
        }
        let prior = self.episode.take().expect("checked above").into_prior();
        if in_episode || prior.cwnd() > self.cc.cwnd() {
            self.cc = prior;
            self.cc_changed();
        }
        if self.ca_state == CaState::Loss || by_timestamps {
            // Linux `tcp_try_undo_loss` and `tcp_try_undo_partial`: what the timeout or the
            // recovery took for lost and has not resent is in flight after all.
            self.board.unmark_lost();
        }
        if in_episode {
            self.ca_state = CaState::Open; // the state update that follows finds the rest
        }
        self.frto_since_ns = None;
        self.stats.undos += 1;
    }

    /// Eifel detection (RFC 3522 §3.2) as Linux applies it to an ACK that moved snd_una and
    /// echoes `tsecr` from before the episode's first retransmission (`tcp_packet_delayed`):
    /// after a timeout, at once (`tcp_try_undo_loss`); in fast recovery, once it reaches the
    /// recovery point (`tcp_try_undo_recovery`), or before, once no retransmission is in
    /// flight (`tcp_try_undo_partial`: an original filled the hole, so the path reorders or
    /// delays rather than drops). With retransmissions in flight Linux waits.
    fn eifel_undoes(&self, episode: &Episode, tsecr: u32) -> bool {
        let state_allows = match self.ca_state {
            CaState::Loss => true,
            CaState::Recovery => {
                self.board.retrans_out() == 0 || self.board.snd_una() >= self.recovery_point
            }
            _ => false,
        };
        self.cfg.recovery.timestamps && state_allows && episode.echoes_an_original(tsecr)
    }

    /// RFC 8985 §7.2: when the ACKs stop while nothing is known lost, a probe after two
    /// smoothed RTTs (plus the longest delayed ACK when one segment is out), unless the
    /// retransmission timer would fire first. One probe at a time; not in recovery.
    fn schedule_probe(&mut self, now_ns: u64) {
        let srtt_ns = self.rtt.srtt_ns();
        let allowed = self.cfg.recovery.tail_loss_probe
            && self.cfg.sack
            && matches!(self.ca_state, CaState::Open | CaState::Cwr)
            && self.loss_probe.is_none()
            && self.board.packets_out() > 0
            && srtt_ns > 0;
        if !allowed {
            return;
        }
        let lone_segment_ns = if self.board.packets_out() == 1 {
            WORST_CASE_DELAYED_ACK_NS
        } else {
            0
        };
        let probe_ns = now_ns + 2 * srtt_ns + lone_segment_ns;
        if probe_ns < self.rto_due_ns {
            self.rto_slot = RtoSlot::LossProbe;
            self.set_timer(probe_ns);
        }
    }

    /// RFC 8985 §7.3: the probe is a new segment if the window lets one out (cwnd aside),
    /// else the highest one not SACKed, sent again; the retransmission timer restarts.
    fn probe(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        // Linux probes in Open and CWR (`tcp_schedule_loss_probe`).
        if !matches!(self.ca_state, CaState::Open | CaState::Cwr) || self.loss_probe.is_some() {
            self.arm_rto(self.rto_due_ns.max(now_ns));
            return;
        }
        let window = self.cfg.window_pkts.min(self.rwnd_pkts);
        let new_data = self.app_open
            && self.app.availability(self.board.snd_nxt(), now_ns) == Availability::Now
            && self.board.packets_out() < window;
        let mut retransmitted = false;
        if new_data {
            self.transmit(now_ns, Next::New, out);
        } else if let Some(seq) = self.board.highest_unsacked() {
            // Resent as lost, as every retransmission in flight is here; that mark alone
            // starts no recovery (`only_the_probe_is_lost`).
            self.board.mark_lost(seq);
            self.transmit(now_ns, Next::Retransmit(seq), out);
            retransmitted = true;
        }
        self.loss_probe = Some(LossProbe {
            high_seq: self.board.snd_nxt(),
            retransmitted,
        });
        self.arm_rto(now_ns + self.rtt.rto_ns());
    }

    /// RFC 8985 §7.4 as Linux runs it (`tcp_process_tlp_ack`), once the ACKs reach the
    /// probe's snd_nxt. A probe of new data, a probe reported as a duplicate (D-SACK: the
    /// original arrived too), or a duplicate ACK with no news (the same, without D-SACK):
    /// nothing was lost. An ACK beyond it that is none of these: the probe repaired a loss,
    /// and the window is reduced once, at once (CWR: `tcp_init_cwnd_reduction`, then
    /// `tcp_end_cwnd_reduction`), with nothing to undo.
    fn settle_probe(
        &mut self,
        now_ns: u64,
        probe: LossProbe,
        cum_ack: u64,
        dsack: Option<(u64, u64)>,
        pure_dupack: bool,
    ) {
        if cum_ack < probe.high_seq {
            return;
        }
        let probe_reported_twice = dsack.is_some_and(|(_, end)| end == probe.high_seq);
        if !probe.retransmitted || probe_reported_twice || pure_dupack {
            self.loss_probe = None;
        } else if cum_ack > probe.high_seq {
            self.loss_probe = None;
            self.reduce_window(now_ns, self.board.in_flight(), 0, Signal::Loss);
        }
    }

    /// Whether the only segment taken for lost is the one a probe resent. The scoreboard
    /// marks it so (a retransmission in flight is of a lost segment), but Linux sends the
    /// probe without taking anything for lost, and leaves it to the ACKs that answer it
    /// (`settle_probe`): the mark alone is no reason to enter recovery.
    fn only_the_probe_is_lost(&self) -> bool {
        self.loss_probe.is_some_and(|p| p.retransmitted)
            && self.board.lost_out() == 1
            && self.board.retrans_out() == 1
    }

    /// The persist timer fired: send one segment past the closed window, so that the ACK it
    /// draws brings the current window (RFC 9293 §3.8.6.1 zero-window probe).
    fn probe_window(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        if self.app_open && self.app.availability(self.board.snd_nxt(), now_ns) == Availability::Now
        {
            self.transmit(now_ns, Next::New, out);
        }
    }

    /// Send what cwnd, the window, the pacing gate and the application allow.
    fn send(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        if std::mem::take(&mut self.fast_retransmit_due) {
            // RFC 6675 §5 step (4.3), RFC 5681 §3.2 step 2: fast retransmit, before pipe
            // has fallen below the reduced cwnd.
            if let Some(seq) = self.board.next_retransmission() {
                self.transmit(now_ns, Next::Retransmit(seq), out);
            }
        }
        self.send_burst(now_ns, out);
        self.pacer.end_burst();
        if let Some(frame) = &mut self.tso {
            frame.end();
        }
        self.schedule_probe(now_ns);
    }

    /// Send packet by packet until cwnd, the window, the pacing gate or the data runs out.
    fn send_burst(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
        let cwnd_pkts = self.send_window_pkts();
        loop {
            if self.board.in_flight() >= cwnd_pkts {
                self.cwnd_limited = true;
                return;
            }
            if let Some(open_ns) = self.pacer.closed_until(now_ns, self.pacing_rate_bps) {
                self.wake_at(open_ns);
                return;
            }
            let frame_done = self.tso.as_ref().is_some_and(Frame::is_done);
            if frame_done {
                if let Some(cwnd_binds) = self.tso_defers(now_ns, cwnd_pkts) {
                    self.cwnd_limited = cwnd_binds;
                    return;
                }
            }
            let Some(next) = self.next_segment(now_ns) else {
                self.cwnd_limited = false;
                return;
            };
            self.transmit(now_ns, next, out);
            if let Some(frame) = &mut self.tso {
                frame.on_send();
            }
        }
    }

    /// At the start of a TSO frame: size it, or hold it back for an ACK due soon that lets a
    /// larger one go (`tso.rs`; Linux `tcp_write_xmit`, never in recovery or after a timeout).
    /// Held back: whether cwnd, rather than the receive window, is what held it.
    fn tso_defers(&mut self, now_ns: u64, cwnd_pkts: u64) -> Option<bool> {
        let mss_bytes = self.cfg.mss_bytes;
        let frame_pkts = tso::frame_pkts(
            self.tso_rate_bps(),
            mss_bytes,
            self.rtt.min_rtt_ns(),
            cwnd_pkts,
        );
        let packets_out = self.board.packets_out();
        let outlook = Outlook {
            now_ns,
            last_send_ns: self.last_send_ns,
            cwnd_pkts,
            in_flight_pkts: self.board.in_flight(),
            rwnd_pkts: self.cfg.window_pkts.min(self.rwnd_pkts),
            packets_out,
            oldest_sent_ns: if packets_out > 0 {
                self.board.segment(self.board.snd_una()).sent_ns()
            } else {
                now_ns
            },
            srtt_ns: self.rtt.srtt_ns(),
        };
        let recovering = matches!(self.ca_state, CaState::Recovery | CaState::Loss);
        if !recovering && outlook.defers(frame_pkts) {
            return Some(outlook.cwnd_binds());
        }
        if let Some(frame) = &mut self.tso {
            frame.start(frame_pkts);
        }
        None
    }

    /// The rate frames are sized by: the controller's pacing rate, or for a controller without
    /// one the rate Linux derives from cwnd and srtt; either capped by the host's limit.
    fn tso_rate_bps(&self) -> Option<u64> {
        if self.cc.pacing_rate_bps().is_some() {
            return self.pacing_rate_bps;
        }
        let rate = tso::kernel_pacing_rate_bps(
            self.cfg.mss_bytes,
            self.cwnd_pkts,
            self.cc.ssthresh(),
            self.board.packets_out(),
            self.rtt.srtt_ns(),
        );
        self.pacer.capped_bps(rate)
    }

    /// RFC 6675 §4 NextSeg: lost segments first, then new data.
    fn next_segment(&mut self, now_ns: u64) -> Option<Next> {
        if let Some(seq) = self.board.next_retransmission() {
            return Some(Next::Retransmit(seq));
        }
        let availability = if self.app_open {
            self.app.availability(self.board.snd_nxt(), now_ns)
        } else {
            Availability::No
        };
        match availability {
            Availability::Now => {
                let window = self.cfg.window_pkts.min(self.rwnd_pkts);
                if self.board.packets_out() == 0 && window == 0 && self.rto.deadline_ns().is_none()
                {
                    // A closed receive window and nothing outstanding: the persist timer
                    // (RFC 9293 §3.8.6.1), so that a lost window update cannot stall us.
                    self.arm_rto(now_ns + self.rtt.rto_ns());
                }
                (self.board.packets_out() < window).then_some(Next::New)
            }
            Availability::At(ready_ns) => {
                self.wake_at(ready_ns);
                self.rate.on_app_limited(self.board.in_flight());
                None
            }
            Availability::No => {
                self.rate.on_app_limited(self.board.in_flight());
                None
            }
        }
    }

    /// The window the flight is kept under: the controller's, or during fast recovery the
    /// sender's own reduction towards it.
    fn send_window_pkts(&self) -> u64 {
        match self.reduction.cwnd_pkts() {
            Some(cwnd_pkts) if self.in_window_reduction() && !self.cc_owns_recovery => cwnd_pkts,
            _ => self.cwnd_pkts,
        }
    }

    fn wake_at(&mut self, deadline_ns: u64) {
        if let TimerAction::Schedule(t) = self.send_timer.set(deadline_ns) {
            self.wakeups.send_ns = Some(t);
        }
    }

    fn transmit(&mut self, now_ns: u64, next: Next, out: &mut Vec<Packet>) {
        let packets_out = self.board.packets_out();
        if packets_out == 0 && self.stats.packets_sent > 0 {
            let idle_ns = now_ns - self.last_send_ns;
            if idle_ns > self.rtt.rto_ns() {
                let path = self.path();
                self.cc.on_idle_restart(now_ns, idle_ns, &path);
                self.cc_changed();
            }
        }
        let tx = self.rate.on_send(now_ns, packets_out);
        let seq = match next {
            Next::Retransmit(seq) => {
                self.board.on_retransmit(seq, tx);
                self.stats.retransmits += 1;
                if let Some(episode) = &mut self.episode {
                    episode.on_retransmit(seq, now_ns);
                }
                seq
            }
            Next::New => self.board.on_send_new(tx),
        };
        let payload_bytes = self.app.payload_bytes(seq);
        let tsval = if self.cfg.recovery.timestamps {
            tsval(now_ns)
        } else {
            0
        };
        let mut pkt = Packet::data(self.flow, seq, HEADER_BYTES + payload_bytes).stamped(tsval);
        let retransmission = matches!(next, Next::Retransmit(_));
        pkt.ecn = self.cfg.ecn.codepoint(retransmission);
        pkt.cwr = !retransmission && self.cfg.ecn.take_cwr();
        out.push(pkt);
        self.stats.packets_sent += 1;
        if self.in_window_reduction() {
            self.reduction.on_send();
        }
        self.last_send_ns = now_ns;
        if self.rto.deadline_ns().is_none() {
            self.arm_rto(now_ns + self.rtt.rto_ns()); // RFC 6298 §5.1
        }
        // The rate read after a restart from idle, which may have changed it.
        self.pacer
            .on_send(now_ns, payload_bytes, self.pacing_rate_bps);
    }

    fn restart_rto(&mut self, now_ns: u64) {
        if self.board.packets_out() == 0 {
            self.rto.clear();
            self.rto_slot = RtoSlot::Retransmission;
        } else {
            self.arm_rto(now_ns + self.rtt.rto_ns());
        }
    }

    fn arm_rto(&mut self, deadline_ns: u64) {
        self.rto_slot = RtoSlot::Retransmission;
        self.rto_due_ns = deadline_ns;
        self.set_timer(deadline_ns);
    }

    fn set_timer(&mut self, deadline_ns: u64) {
        if let TimerAction::Schedule(t) = self.rto.set(deadline_ns) {
            self.wakeups.rto_ns = Some(t);
        }
    }

    fn take_wakeups(&mut self) -> Wakeups {
        std::mem::take(&mut self.wakeups)
    }

    fn path(&self) -> Path {
        Path {
            mss_bytes: self.cfg.mss_bytes,
            srtt_ns: self.rtt.srtt_ns(),
            min_rtt_ns: self.rtt.min_rtt_ns(),
            delivered: self.rate.delivered(),
            round: self.rate.round(),
        }
    }

    // What the recorder samples.

    pub fn cwnd_pkts(&self) -> f64 {
        self.cc.cwnd()
    }

    pub fn ssthresh_pkts(&self) -> f64 {
        self.cc.ssthresh()
    }

    pub fn srtt_ns(&self) -> u64 {
        self.rtt.srtt_ns()
    }

    pub fn in_flight_pkts(&self) -> u64 {
        self.board.in_flight()
    }

    /// The controller, for the recorder to read its state.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.cc.as_ref()
    }

    pub fn pacing_rate_bps_now(&self) -> f64 {
        self.pacing_rate_bps.unwrap_or(0) as f64
    }

    pub fn ca_state(&self) -> CaState {
        self.ca_state
    }
}

#[cfg(test)]
mod tests;
