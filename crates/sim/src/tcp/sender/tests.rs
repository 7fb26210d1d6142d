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
use crate::tcp::host::{RtoInRecovery, WindowReduction};
use crate::tcp::timestamps::tsval;
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

/// The textbook host with undo and ssthresh kept across a timeout in recovery, so that the
/// window arithmetic stays the textbook host's (undo tests, tail loss probes).
const RFC_WITH_UNDO: Recovery = Recovery {
    undo: true,
    rto_in_recovery: RtoInRecovery::KeepSsthresh,
    ..Recovery::RFC
};

mod rack;
mod recovery;
mod tlp;
mod tso;
mod undo;
