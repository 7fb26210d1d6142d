//! The sender's state machine for window reductions (Linux `tcp_fastretrans_alert`,
//! `tcp_enter_cwr`, `tcp_enter_loss`): entering Recovery, CWR and Loss, each reduction told to
//! the controller once per window, timeouts with RFC 6298 §5 backoff, and undoing a reduction
//! proved spurious (`undo.rs`).

use super::Deliveries;
use super::Sender;
use crate::cc::CaState;
use crate::cc::CongestionEvent;
use crate::cc::Signal;
use crate::packet::Packet;
use crate::tcp::host::RtoInRecovery;
use crate::tcp::scoreboard::LostRetransmissions;
use crate::tcp::undo::Episode;

impl Sender {
    pub(super) fn update_ca_state(&mut self, now_ns: u64, prior_in_flight: u64) {
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
    pub(super) fn enter_cwr(&mut self, now_ns: u64, in_flight: u64) {
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
    pub(super) fn recover_within_cwr(&mut self) {
        self.ca_state = CaState::Recovery;
        self.loss_probe = None;
        self.recovery_point = self.board.snd_nxt();
        self.fast_retransmit_due = true;
    }

    /// The window falls towards the controller's by the sender's reduction (PRR, rate halving).
    pub(super) fn in_window_reduction(&self) -> bool {
        matches!(self.ca_state, CaState::Recovery | CaState::Cwr)
    }

    /// RFC 5681 §4.3: "the loss of a retransmission should be taken as two indications of
    /// congestion and, therefore, cwnd (and ssthresh) MUST be lowered twice". Only a
    /// retransmission sent after the last reduction counts, so the window is lowered at most
    /// once per round trip: one sent before it was already paid for by that reduction.
    pub(super) fn lost_a_retransmission_since_the_cut(&self, lost: LostRetransmissions) -> bool {
        matches!(self.ca_state, CaState::Recovery | CaState::Loss)
            && lost
                .newest_sent_ns
                .is_some_and(|sent_ns| sent_ns >= self.reduced_at_ns)
    }

    /// The first loss of a window (RFC 6675 §5 step 4, RFC 6582 §3.2 step 2), or a lost
    /// retransmission (RFC 5681 §4.3): a new episode, with its own recovery point.
    pub(super) fn enter_recovery(&mut self, now_ns: u64, in_flight: u64) {
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
    pub(super) fn reduce_window(&mut self, now_ns: u64, in_flight: u64, lost: u64, signal: Signal) {
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
    pub(super) fn on_timeout(&mut self, now_ns: u64, out: &mut Vec<Packet>) {
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
    pub(super) fn reduce_for_timeout(&mut self, now_ns: u64, repeated: bool) {
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
    pub(super) fn begin_episode(&mut self) {
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
    pub(super) fn try_undo(&mut self, delivered: &Deliveries, echo: Option<u32>) {
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
    pub(super) fn eifel_undoes(&self, episode: &Episode, tsecr: u32) -> bool {
        let state_allows = match self.ca_state {
            CaState::Loss => true,
            CaState::Recovery => {
                self.board.retrans_out() == 0 || self.board.snd_una() >= self.recovery_point
            }
            _ => false,
        };
        self.cfg.recovery.timestamps && state_allows && episode.echoes_an_original(tsecr)
    }
}
