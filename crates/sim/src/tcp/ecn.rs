//! Explicit Congestion Notification at the two ends of a connection: which codepoint data
//! carries, how the receiver feeds CE marks back, and what the sender reads from the feedback.
//!
//! Three feedback schemes, chosen by `flow.ecn` and the stack:
//! - **classic** (RFC 3168 §6.1): the receiver sets ECE on every ACK from the first CE until a
//!   segment with CWR arrives; the sender reduces once per window and sets CWR on its next new
//!   segment. One bit per round trip: the sender learns *that* there was congestion.
//! - **DCTCP's echo** (RFC 8257 §3.2), for `dctcp` over classic ECN: ECE on an ACK says the
//!   segments it acknowledges were CE-marked; a delayed ACK is cut short when the CE state
//!   changes, so each ACK covers segments of one state and the sender can count marked bytes.
//! - **accurate** (AccECN, RFC 9768 §3.2): for `l4s`, every ACK carries the 3-bit ACE field,
//!   the count of CE-marked packets received modulo 8; the sender recovers the count from its
//!   increments.

use serde::{Deserialize, Serialize};
use tcpeval_netem::Ecn;

/// `flow.ecn`: what the flow's hosts negotiate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EcnMode {
    /// Not-ECT: queues drop.
    Off,
    /// ECT(0) with RFC 3168 feedback (DCTCP's echo for `dctcp`).
    Classic,
    /// ECT(1), the L4S identifier (RFC 9331), with accurate feedback (RFC 9768).
    L4s,
}

/// How the receiver reports CE marks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Feedback {
    None,
    Classic,
    Dctcp,
    Accurate,
}

impl EcnMode {
    /// The codepoint of the flow's data packets (RFC 3168 §5, RFC 9331 §4.1).
    pub fn codepoint(self) -> Ecn {
        match self {
            EcnMode::Off => Ecn::NotEct,
            EcnMode::Classic => Ecn::Ect0,
            EcnMode::L4s => Ecn::Ect1,
        }
    }

    /// The feedback the hosts use; `per_packet_echo`: the stack asks for DCTCP's echo.
    pub fn feedback(self, per_packet_echo: bool) -> Feedback {
        match self {
            EcnMode::Off => Feedback::None,
            EcnMode::Classic if per_packet_echo => Feedback::Dctcp,
            EcnMode::Classic => Feedback::Classic,
            EcnMode::L4s => Feedback::Accurate,
        }
    }
}

/// RFC 9768 §3.2.2.4: the receiver's CE packet counter starts at 5, so that a zeroed ACE
/// field is not mistaken for a count.
const CEP_INITIAL: u32 = 5;
/// RFC 9768 §3.2.2.5.2: an ACK at least every this many CE marks, so that the 3-bit ACE field
/// cannot wrap between two ACKs.
const CE_MARKS_PER_ACK: u32 = 2;

/// The receiver's half: it watches the codepoint of every data segment and stamps the echo on
/// every ACK.
#[derive(Debug, Clone)]
pub struct EcnReceiver {
    feedback: Feedback,
    /// Classic: ECE is set until a CWR arrives (RFC 3168 §6.1.3).
    ece_latched: bool,
    /// DCTCP and accurate: whether the last data segment was CE (RFC 8257 §3.2's DCTCP.CE).
    ce_state: bool,
    /// Accurate: CE-marked packets received (RFC 9768's r.cep), and those since the last ACK.
    cep: u32,
    ce_since_ack: u32,
    /// CE-marked data segments received.
    pub ce_received: u64,
}

impl EcnReceiver {
    pub fn new(feedback: Feedback) -> Self {
        Self {
            feedback,
            ece_latched: false,
            ce_state: false,
            cep: CEP_INITIAL,
            ce_since_ack: 0,
            ce_received: 0,
        }
    }

    /// RFC 8257 §3.2: a segment of `ecn` changes DCTCP's CE state, so an ACK delayed for the
    /// segments before it must go first, echoing their state.
    pub fn flushes_delayed_ack(&self, ecn: Ecn) -> bool {
        self.feedback == Feedback::Dctcp && (ecn == Ecn::Ce) != self.ce_state
    }

    /// A data segment of codepoint `ecn` (with CWR set: `cwr`) arrived; true when it must be
    /// acknowledged at once.
    pub fn on_segment(&mut self, ecn: Ecn, cwr: bool) -> bool {
        let ce = ecn == Ecn::Ce;
        self.ce_received += u64::from(ce);
        match self.feedback {
            Feedback::None => false,
            Feedback::Classic => {
                // §6.1.3: CWR ends the echo; a CE on the same segment starts a new one. The
                // first CE is acknowledged at once, as Linux does (a mark is as urgent as a loss).
                if cwr {
                    self.ece_latched = false;
                }
                let first = ce && !self.ece_latched;
                self.ece_latched |= ce;
                first
            }
            Feedback::Dctcp => {
                // §3.2: a change of CE state is acknowledged at once.
                let changed = ce != self.ce_state;
                self.ce_state = ce;
                changed
            }
            Feedback::Accurate => {
                // RFC 9768 §3.2.2.5: change-triggered and increment-triggered ACKs.
                let changed = ce != self.ce_state;
                self.ce_state = ce;
                self.cep += u32::from(ce);
                self.ce_since_ack += u32::from(ce);
                changed || self.ce_since_ack >= CE_MARKS_PER_ACK
            }
        }
    }

    /// Stamp the echo on an outgoing ACK.
    pub fn stamp(&mut self, ack: &mut crate::packet::Packet) {
        match self.feedback {
            Feedback::None => {}
            Feedback::Classic => ack.ece = self.ece_latched,
            Feedback::Dctcp => ack.ece = self.ce_state,
            Feedback::Accurate => {
                ack.ace = (self.cep % 8) as u8;
                self.ce_since_ack = 0;
            }
        }
    }
}

/// What one ACK's echo tells the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Echo {
    /// Packets of those newly acknowledged that were CE-marked (as well as the feedback tells).
    pub ce_pkts: u32,
    /// Congestion was signalled: the sender reduces, once per window.
    pub congestion: bool,
}

/// The sender's half: the codepoint of its segments and what it reads from the ACKs.
#[derive(Debug, Clone)]
pub struct EcnSender {
    /// The codepoint of new segments and of retransmissions, worked out once: every segment
    /// reads one.
    new_codepoint: Ecn,
    retransmission_codepoint: Ecn,
    feedback: Feedback,
    /// Accurate: the CE count as the sender has reconstructed it (RFC 9768's d.cep).
    cep: u32,
    /// Classic: set CWR on the next new segment (RFC 3168 §6.1.2).
    cwr_due: bool,
}

impl EcnSender {
    pub fn new(mode: EcnMode, per_packet_echo: bool) -> Self {
        let feedback = mode.feedback(per_packet_echo);
        Self {
            new_codepoint: mode.codepoint(),
            retransmission_codepoint: if feedback == Feedback::Classic {
                Ecn::NotEct
            } else {
                mode.codepoint()
            },
            feedback,
            cep: CEP_INITIAL,
            cwr_due: false,
        }
    }

    /// The codepoint of a segment. RFC 3168 §6.1.5 forbids ECT on retransmissions under classic
    /// feedback (Linux keeps it for stacks that need ECN, `tcp_ca_needs_ecn`: DCTCP's echo);
    /// L4S senders send every packet ECT(1) (RFC 9331 §4.1).
    pub fn codepoint(&self, retransmission: bool) -> Ecn {
        if retransmission {
            self.retransmission_codepoint
        } else {
            self.new_codepoint
        }
    }

    /// Whether a new segment carries CWR, which it then clears.
    pub fn take_cwr(&mut self) -> bool {
        std::mem::take(&mut self.cwr_due)
    }

    /// The sender reduced its window for an echo: tell the receiver with CWR (classic).
    pub fn on_reduced(&mut self) {
        self.cwr_due = self.feedback == Feedback::Classic;
    }

    /// Read an ACK's echo; `acked` packets were newly acknowledged by it.
    pub fn on_ack(&mut self, ack: &crate::packet::Packet, acked: u32) -> Echo {
        match self.feedback {
            Feedback::None => Echo::default(),
            Feedback::Classic | Feedback::Dctcp => Echo {
                ce_pkts: if ack.ece { acked } else { 0 },
                congestion: ack.ece,
            },
            Feedback::Accurate => {
                // RFC 9768 §3.2.2.5: the increment of ACE modulo 8 since the last ACK.
                let delta = (u32::from(ack.ace) + 8 - self.cep % 8) % 8;
                self.cep += delta;
                Echo {
                    ce_pkts: delta,
                    congestion: delta > 0,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::Packet;

    fn ack_from(r: &mut EcnReceiver) -> Packet {
        let mut ack = Packet::ack(0, 0, 52);
        r.stamp(&mut ack);
        ack
    }

    #[test]
    fn classic_echo_holds_until_cwr_and_a_reduction_sends_cwr_once() {
        // RFC 3168 §6.1.3: ECE on every ACK from the CE until a CWR segment arrives.
        let mut r = EcnReceiver::new(Feedback::Classic);
        assert!(
            r.on_segment(Ecn::Ce, false),
            "the first CE is acknowledged at once"
        );
        assert!(!r.on_segment(Ecn::Ect0, false));
        assert!(ack_from(&mut r).ece && ack_from(&mut r).ece);
        r.on_segment(Ecn::Ect0, true);
        assert!(!ack_from(&mut r).ece);
        // A CWR segment that is itself CE starts a new echo.
        r.on_segment(Ecn::Ce, true);
        assert!(ack_from(&mut r).ece);
        // §6.1.2: the sender's CWR goes on the next new segment only.
        let mut s = EcnSender::new(EcnMode::Classic, false);
        let echo = s.on_ack(&ack_from(&mut r), 3);
        assert_eq!(
            echo,
            Echo {
                ce_pkts: 3,
                congestion: true
            }
        );
        s.on_reduced();
        assert!(s.take_cwr() && !s.take_cwr());
    }

    #[test]
    fn classic_retransmissions_are_not_ect_and_l4s_ones_are() {
        // RFC 3168 §6.1.5; RFC 9331 §4.1.
        let classic = EcnSender::new(EcnMode::Classic, false);
        assert_eq!(classic.codepoint(false), Ecn::Ect0);
        assert_eq!(classic.codepoint(true), Ecn::NotEct);
        assert_eq!(
            EcnSender::new(EcnMode::Classic, true).codepoint(true),
            Ecn::Ect0
        );
        assert_eq!(
            EcnSender::new(EcnMode::L4s, false).codepoint(true),
            Ecn::Ect1
        );
        assert_eq!(
            EcnSender::new(EcnMode::Off, false).codepoint(false),
            Ecn::NotEct
        );
    }

    #[test]
    fn dctcp_echo_flushes_the_delayed_ack_on_a_change_of_state() {
        // RFC 8257 §3.2: each ACK echoes the CE state of the segments it covers; a change of
        // state sends the delayed ACK first (old state) and then acknowledges at once.
        let mut r = EcnReceiver::new(Feedback::Dctcp);
        assert!(!r.flushes_delayed_ack(Ecn::Ect0));
        assert!(!r.on_segment(Ecn::Ect0, false));
        assert!(r.flushes_delayed_ack(Ecn::Ce));
        assert!(
            !ack_from(&mut r).ece,
            "the flushed ACK carries the old state"
        );
        assert!(r.on_segment(Ecn::Ce, false));
        assert!(ack_from(&mut r).ece);
        assert!(
            !r.on_segment(Ecn::Ce, false),
            "no change: the delayed ACK may wait"
        );
        assert!(r.flushes_delayed_ack(Ecn::Ect0) && r.on_segment(Ecn::Ect0, false));
        assert!(!ack_from(&mut r).ece);
        assert_eq!(r.ce_received, 2);
    }

    #[test]
    fn accurate_feedback_counts_marks_through_the_wrap_of_ace() {
        // RFC 9768 §3.2.2: ACE is r.cep mod 8, r.cep starting at 5; the sender adds the
        // increment mod 8. Marks across the wrap (5 → 7 → 1 → 3) are all counted.
        let mut r = EcnReceiver::new(Feedback::Accurate);
        let mut s = EcnSender::new(EcnMode::L4s, false);
        let mut counted = 0;
        for _ in 0..4 {
            r.on_segment(Ecn::Ce, false);
            r.on_segment(Ecn::Ce, false);
            let ack = ack_from(&mut r);
            let echo = s.on_ack(&ack, 2);
            assert!(echo.congestion);
            counted += echo.ce_pkts;
        }
        assert_eq!((counted, r.cep, s.cep), (8, 13, 13));
        assert_eq!(ack_from(&mut r).ace, 13 % 8);
        let none = s.on_ack(&ack_from(&mut r), 2);
        assert_eq!(none, Echo::default());
    }

    #[test]
    fn accurate_feedback_acks_on_a_change_and_every_second_mark() {
        // RFC 9768 §3.2.2.5.1–2: change-triggered and increment-triggered ACKs.
        let mut r = EcnReceiver::new(Feedback::Accurate);
        assert!(!r.on_segment(Ecn::Ect1, false));
        assert!(r.on_segment(Ecn::Ce, false), "a change of state");
        ack_from(&mut r);
        assert!(!r.on_segment(Ecn::Ce, false));
        assert!(
            r.on_segment(Ecn::Ce, false),
            "the second mark since the last ACK"
        );
    }
}
