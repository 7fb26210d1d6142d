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
//!
//! Split as Linux splits TCP: this file holds the sender's state and an ACK's two steps (what
//! it tells, then the answer); `rack.rs` loss detection by time (`tcp_recovery.c`), `tlp.rs`
//! the tail loss probe, `recovery.rs` the Recovery/CWR/Loss state machine, timeouts and undo
//! (`tcp_fastretrans_alert`, `tcp_enter_loss`), `output.rs` what goes out when
//! (`tcp_output.c`). The tests are split the same way, beside a shared harness.

use super::appdata::AppData;
use super::ecn::{Echo, EcnSender};
use super::host::{LossDetection, LostRetransmission, Recovery};
use super::pacer::Pacer;
use super::rate::RateSampler;
use super::reduction::{RecoveryAck, Reduction};
use super::rtt::RttEstimator;
use super::scoreboard::{LostRetransmissions, Scoreboard, Segment, DUP_THRESH};
use super::tso::Frame;
use super::undo::{dsack_block, Episode};
use crate::cc::{Ack, CaState, CongestionControl, Path};
use crate::engine::{FlowId, Timer, TimerAction};
use crate::packet::Packet;
use crate::prefetch::prefetch;
use tlp::LossProbe;

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

/// What one ACK told, read before the sender answers it.
struct AckTold {
    prior_in_flight: u64,
    cum_ack: u64,
    /// The cumulative ACK moved forward.
    progressed: bool,
    delivered: Deliveries,
    /// Packets delivered, duplicate ACKs counting as one each without SACK.
    acked: u64,
    echo: Echo,
    rtt_ns: Option<u64>,
    rack_advanced: bool,
    /// Packets found lost: holes, and retransmissions lost again.
    lost: u64,
    lost_retx: LostRetransmissions,
}

impl AckTold {
    /// The ACK as the controller is told it (Linux `rate_sample` and `tcp_cong_control`);
    /// the round and the rate sample are filled in when the rate sample closes.
    fn controller_ack(&self, now_ns: u64, sender: &Sender) -> Ack {
        Ack {
            now_ns,
            acked: self.acked as u32,
            lost: self.lost as u32,
            ce_pkts: self.echo.ce_pkts,
            rtt_ns: self.rtt_ns,
            prior_in_flight: self.prior_in_flight as u32,
            in_flight: sender.board.in_flight() as u32,
            round_start: false,
            ca_state: sender.ca_state,
            cwnd_limited: sender.cwnd_limited,
            rate: None,
        }
    }
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
    /// The path has been seen to reorder: RACK keeps its reordering window from now on
    /// (RFC 8985 §6.2, RACK.reord; Linux `tp->reord_seen`).
    reordering_seen: bool,
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
            reordering_seen: false,
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

    /// An ACK, in two steps as Linux's `tcp_ack` takes it: what it tells (deliveries, RTT,
    /// losses), then the answer to it (undo, state, the controller, the timer, sending).
    pub fn on_ack(&mut self, now_ns: u64, ack: &Packet, out: &mut Vec<Packet>) -> Wakeups {
        let told = self.read_ack(now_ns, ack);
        self.answer_ack(now_ns, ack, told, out);
        self.take_wakeups()
    }

    /// Everything the ACK tells, with the scoreboard, RTT, RACK, the probe and the ECN echo
    /// updated and the losses it reveals marked.
    fn read_ack(&mut self, now_ns: u64, ack: &Packet) -> AckTold {
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
        // RFC 8985 §6.2 step 3: a segment never resent, delivered after one sent later than it,
        // was overtaken on the way.
        self.reordering_seen |= delivered
            .oldest_clean_sent_ns
            .is_some_and(|sent_ns| sent_ns < self.rack_sent_ns);
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
        let lost = self.mark_losses(progressed);
        let lost_retx = match delivered.newest_sent_ns {
            Some(newest_ns) => self
                .board
                .mark_lost_retransmissions(newest_ns, self.reordering_window_ns()),
            None => LostRetransmissions::default(),
        };
        AckTold {
            prior_in_flight,
            cum_ack,
            progressed,
            delivered,
            acked,
            echo,
            rtt_ns,
            rack_advanced,
            lost: lost + lost_retx.count,
            lost_retx,
        }
    }

    /// The sender's answer to what an ACK told: undo or reduce, tell the controller, restart
    /// the timer, send what the window allows.
    fn answer_ack(&mut self, now_ns: u64, ack: &Packet, told: AckTold, out: &mut Vec<Packet>) {
        self.try_undo(&told.delivered, told.progressed.then_some(ack.timestamp));
        self.update_ca_state(now_ns, told.prior_in_flight);
        if told.echo.congestion && matches!(self.ca_state, CaState::Open | CaState::Disorder) {
            self.enter_cwr(now_ns, told.prior_in_flight);
        }
        let reordering_timer = told.rack_advanced && self.arm_reordering_timer();
        if self.cfg.recovery.lost_retransmission == LostRetransmission::Reduce
            && self.lost_a_retransmission_since_the_cut(told.lost_retx)
        {
            self.enter_recovery(now_ns, told.prior_in_flight);
        }
        self.inform_controller(told.controller_ack(now_ns, self));
        if self.in_window_reduction() {
            self.reduction.on_ack(RecoveryAck {
                delivered_pkts: told.acked,
                in_flight_pkts: self.board.in_flight(),
                snd_una_advanced: told.progressed,
                newly_lost: told.lost > 0,
            });
        }
        if told.progressed {
            if !reordering_timer {
                self.restart_rto(now_ns); // RFC 6298 §5.2–5.3
            }
            if self.app.end_segment() == Some(told.cum_ack) {
                self.stats.all_acked_ns = Some(now_ns);
            }
        }
        self.send(now_ns, out);
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

    fn wake_at(&mut self, deadline_ns: u64) {
        if let TimerAction::Schedule(t) = self.send_timer.set(deadline_ns) {
            self.wakeups.send_ns = Some(t);
        }
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

mod output;
mod rack;
mod recovery;
#[cfg(test)]
mod tests;
mod tlp;
