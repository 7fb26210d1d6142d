//! How the window falls from where it was to ssthresh while fast recovery repairs the losses.
//!
//! The controller decides ssthresh (and sets its cwnd there) when recovery begins; this part
//! of the sender decides how fast the flight gets there, ACK by ACK, as the host does:
//! - `Rfc6675`: at once (RFC 6675 §5 step 4.2): no window for the sender to compute.
//! - `Prr`: Proportional Rate Reduction as Linux runs it (`tcp_cwnd_reduction`, RFC 9937,
//!   which obsoletes RFC 6937): while pipe is above ssthresh, segments go out in proportion
//!   to those delivered, ssthresh/RecoverFS of them; below it, the flight is rebuilt towards
//!   ssthresh at most one segment faster than the ACK clock, and only on an ACK that advanced
//!   snd_una without showing a new loss (slow-start reduction bound), else by the ACK clock
//!   (conservative reduction bound). RecoverFS is Linux's `prior_cwnd`.
//! - `RateHalving`: Linux 2.6's `tcp_cwnd_down`: one segment less every second ACK that
//!   brings news, never below ssthresh, and never more than one segment above pipe.
//!
//! The window ends when recovery does: the controller's cwnd (ssthresh) applies again, as
//! Linux's `tcp_end_cwnd_reduction` sets cwnd = ssthresh.

use super::host::WindowReduction;

#[derive(Debug, Clone)]
pub struct Reduction {
    kind: WindowReduction,
    /// RFC 9937 RecoverFS (Linux `prior_cwnd`): the window when recovery began.
    prior_cwnd_pkts: u64,
    ssthresh_pkts: u64,
    /// RFC 9937 prr_delivered: segments delivered since recovery began.
    delivered_pkts: u64,
    /// RFC 9937 prr_out: segments sent since recovery began.
    sent_pkts: u64,
    /// Rate halving's count of news-bearing ACKs towards the next decrement (Linux
    /// `snd_cwnd_cnt`).
    halving_acks: u64,
    /// The window the last ACK allowed.
    cwnd_pkts: u64,
}

/// What one ACK in recovery brought.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryAck {
    /// Segments newly acknowledged or SACKed (RFC 9937 DeliveredData).
    pub delivered_pkts: u64,
    /// Pipe after the ACK was processed (RFC 6675 §4 SetPipe).
    pub in_flight_pkts: u64,
    pub snd_una_advanced: bool,
    /// The ACK showed a segment lost that was not known lost before.
    pub newly_lost: bool,
}

impl Reduction {
    pub fn new(kind: WindowReduction) -> Self {
        Self {
            kind,
            prior_cwnd_pkts: 0,
            ssthresh_pkts: 0,
            delivered_pkts: 0,
            sent_pkts: 0,
            halving_acks: 0,
            cwnd_pkts: 0,
        }
    }

    /// Recovery begins: the window was `prior_cwnd_pkts`, the controller wants `ssthresh_pkts`.
    pub fn start(&mut self, prior_cwnd_pkts: u64, ssthresh_pkts: u64) {
        self.prior_cwnd_pkts = prior_cwnd_pkts.max(1);
        self.ssthresh_pkts = ssthresh_pkts;
        self.delivered_pkts = 0;
        self.sent_pkts = 0;
        self.halving_acks = 0;
        self.cwnd_pkts = prior_cwnd_pkts;
    }

    /// The window the sender keeps the flight under during recovery; `None` when the
    /// controller's cwnd applies (`Rfc6675`).
    pub fn cwnd_pkts(&self) -> Option<u64> {
        (self.kind != WindowReduction::Rfc6675).then_some(self.cwnd_pkts)
    }

    /// A segment left during recovery.
    pub fn on_send(&mut self) {
        self.sent_pkts += 1;
    }

    /// An ACK during recovery: work out the window it allows.
    pub fn on_ack(&mut self, ack: RecoveryAck) {
        if ack.delivered_pkts == 0 {
            return; // Linux: no news, no change
        }
        match self.kind {
            WindowReduction::Rfc6675 => {}
            WindowReduction::Prr => self.prr(ack),
            WindowReduction::RateHalving => self.halve(ack),
        }
    }

    fn prr(&mut self, ack: RecoveryAck) {
        self.delivered_pkts += ack.delivered_pkts;
        let pipe = ack.in_flight_pkts;
        let send_count = if pipe > self.ssthresh_pkts {
            // RFC 9937 §5: sndcnt = CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out.
            let due = (self.delivered_pkts * self.ssthresh_pkts).div_ceil(self.prior_cwnd_pkts);
            due.saturating_sub(self.sent_pkts)
        } else {
            let owed = self.delivered_pkts.saturating_sub(self.sent_pkts);
            let safe_ack = ack.snd_una_advanced && !ack.newly_lost;
            let limit = owed.max(ack.delivered_pkts) + u64::from(safe_ack);
            limit.min(self.ssthresh_pkts - pipe)
        };
        // The first retransmission leaves whatever the arithmetic says (RFC 9937 §5: fast
        // retransmit on entering recovery).
        let send_count = send_count.max(u64::from(self.sent_pkts == 0));
        self.cwnd_pkts = pipe + send_count;
    }

    fn halve(&mut self, ack: RecoveryAck) {
        self.halving_acks += 1;
        let decrement = self.halving_acks / 2;
        self.halving_acks %= 2;
        if decrement > 0 && self.cwnd_pkts > self.ssthresh_pkts {
            self.cwnd_pkts -= decrement;
        }
        self.cwnd_pkts = self.cwnd_pkts.min(ack.in_flight_pkts + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One segment delivered per ACK, with snd_una held by the hole: what each ACK lets out,
    /// where the sender sends up to the window at once.
    fn run(
        kind: WindowReduction,
        prior: u64,
        ssthresh: u64,
        mut pipe: u64,
        acks: usize,
    ) -> Vec<u64> {
        let mut r = Reduction::new(kind);
        r.start(prior, ssthresh);
        (0..acks)
            .map(|_| {
                pipe -= 1;
                r.on_ack(RecoveryAck {
                    delivered_pkts: 1,
                    in_flight_pkts: pipe,
                    snd_una_advanced: false,
                    newly_lost: false,
                });
                let sent = r.cwnd_pkts().unwrap().saturating_sub(pipe);
                for _ in 0..sent {
                    r.on_send();
                }
                pipe += sent;
                sent
            })
            .collect()
    }

    #[test]
    fn prr_sends_one_segment_for_every_two_delivered_while_halving() {
        // RFC 9937's first example: 20 segments out, one lost, ssthresh 10. The duplicates
        // that began recovery left pipe at 17; each further ACK delivers a segment. PRR sends
        // the fast retransmission, then one segment per two ACKs until pipe reaches ssthresh,
        // then one per ACK (RFC 6675 alone would send nothing for the first 7 ACKs).
        let sent = run(WindowReduction::Prr, 20, 10, 17, 16);
        assert_eq!(sent, [1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 0, 1, 1, 1]);
        let pipe_at_end = 17 - 16 + sent.iter().sum::<u64>();
        assert_eq!(pipe_at_end, 10, "the flight ends at ssthresh");
    }

    #[test]
    fn prr_sends_in_proportion_to_ssthresh_over_recover_fs() {
        // CUBIC's β = 0.7: seven segments for every ten delivered, to the segment.
        let sent = run(WindowReduction::Prr, 100, 70, 96, 50);
        assert_eq!(sent.iter().sum::<u64>(), 35);
        let ten = run(WindowReduction::Prr, 100, 70, 96, 10);
        assert_eq!(ten.iter().sum::<u64>(), 7);
    }

    #[test]
    fn prr_below_ssthresh_rebuilds_by_the_ack_clock_until_snd_una_moves() {
        // Heavy loss took pipe to 4 with ssthresh 10, after the fast retransmission.
        let mut r = Reduction::new(WindowReduction::Prr);
        r.start(20, 10);
        r.on_send();
        let ack = RecoveryAck {
            delivered_pkts: 1,
            in_flight_pkts: 4,
            snd_una_advanced: false,
            newly_lost: false,
        };
        // Conservative bound: an ACK that leaves snd_una where it was lets out what it
        // delivered.
        r.on_ack(ack);
        assert_eq!(r.cwnd_pkts(), Some(5));
        r.on_send();
        r.on_ack(ack);
        assert_eq!(r.cwnd_pkts(), Some(5));
        // Slow-start bound: snd_una moved and nothing new was lost: one segment more.
        r.on_send();
        r.on_ack(RecoveryAck {
            snd_una_advanced: true,
            ..ack
        });
        assert_eq!(r.cwnd_pkts(), Some(6));
        // A new loss on that ACK takes the extra segment back.
        r.on_send();
        r.on_ack(RecoveryAck {
            snd_una_advanced: true,
            newly_lost: true,
            ..ack
        });
        assert_eq!(r.cwnd_pkts(), Some(5));
        // Never beyond ssthresh, however much one ACK delivers.
        r.on_ack(RecoveryAck {
            delivered_pkts: 30,
            snd_una_advanced: true,
            ..ack
        });
        assert_eq!(r.cwnd_pkts(), Some(10));
    }

    #[test]
    fn prr_ignores_an_ack_that_delivers_nothing() {
        let mut r = Reduction::new(WindowReduction::Prr);
        r.start(20, 10);
        r.on_ack(RecoveryAck::default());
        assert_eq!(r.cwnd_pkts(), Some(20));
    }

    #[test]
    fn rate_halving_takes_one_segment_off_every_second_ack_down_to_ssthresh() {
        // Linux 2.6 `tcp_cwnd_down` from cwnd 20 to ssthresh 10, pipe 16 after the duplicates:
        // the window is clamped to pipe + 1 and falls by one every second ACK, so one segment
        // leaves per two ACKs, like PRR here; it never goes below ssthresh.
        let sent = run(WindowReduction::RateHalving, 20, 10, 17, 30);
        assert_eq!(&sent[..6], [1, 0, 1, 0, 1, 0]);
        assert_eq!(sent[20..], [1; 10], "at ssthresh it follows the ACK clock");
    }

    #[test]
    fn the_rfc_6675_sender_leaves_the_window_to_the_controller() {
        let mut r = Reduction::new(WindowReduction::Rfc6675);
        r.start(20, 10);
        r.on_ack(RecoveryAck {
            delivered_pkts: 1,
            in_flight_pkts: 15,
            ..RecoveryAck::default()
        });
        assert_eq!(r.cwnd_pkts(), None);
    }
}
