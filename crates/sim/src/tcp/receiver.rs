//! The receiver: in-order delivery to the application, out-of-order segments kept as ranges,
//! SACK blocks (RFC 2018), delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2) and, optionally,
//! Linux's SACK compression while a hole is open and D-SACK reports of duplicates (RFC 2883).

use std::collections::VecDeque;

use super::ecn::{EcnReceiver, Feedback};
use super::scoreboard::DUP_THRESH;
use super::sink::Sink;
use super::timestamps::Echo;
use crate::packet::{Packet, SackBlock, MAX_SACK_BLOCKS};

/// What the receiver wants after a segment arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reply {
    /// Send an ACK now.
    AckNow,
    /// Hold the ACK; send it at this deadline unless another segment comes first.
    Delay(u64),
}

#[derive(Debug, Clone)]
pub struct Receiver {
    rcv_nxt: u64,
    /// Received segments above `rcv_nxt`, as merged ranges `[start, end)`, sorted; a deque
    /// because in-order arrivals consume them from the front.
    out_of_order: VecDeque<(u64, u64)>,
    /// The blocks reported last, most recent first (RFC 2018 §4).
    reported: Vec<(u64, u64)>,
    sack: bool,
    /// Report duplicate segments (RFC 2883 D-SACK; Linux `tcp_dsack`).
    dsack: bool,
    /// A duplicate not yet reported: the first block of the next ACK.
    duplicate: Option<(u64, u64)>,
    delayed_ack: bool,
    delack_timeout_ns: u64,
    /// The TSval the next ACK echoes (RFC 7323 §4.3).
    echo: Echo,
    /// In-order segments received since the last ACK.
    unacked_segments: u32,
    /// An application reading at a limited rate (a disk); `None` reads everything at once.
    sink: Option<Sink>,
    /// `None`: an ACK for every segment while a hole is open (RFC 5681 §4.2).
    compression: Option<SackCompression>,
    /// Drop every n-th data packet arriving (`drop_every`), before it is received.
    drop_every: Option<u64>,
    /// Segments received (those dropped on purpose not included).
    pub segments_received: u64,
    /// Data packets dropped on purpose (`drop_every`).
    pub drops: u64,
    pub acks_sent: u64,
    /// What it echoes of the CE marks it receives.
    pub ecn: EcnReceiver,
}

/// Linux's SACK compression (4.18 on, `tcp_comp_sack_*`; from 5.11 only after DupThresh
/// duplicate ACKs): while a hole is open, the first three ACKs for a given `rcv_nxt` go out at
/// once, so that the sender's loss detection is not slowed (RFC 6675 §5), and then one ACK
/// covers whatever arrives within `delay_ns`, or at most `MAX_HELD` + 1 segments.
#[derive(Debug, Clone)]
struct SackCompression {
    delay_ns: u64,
    /// ACKs held back since the last one sent.
    held: u32,
    /// When the held ACK goes out.
    deadline_ns: Option<u64>,
    /// The `rcv_nxt` the duplicate ACKs sent at once were for, and how many.
    dupacks_for: u64,
    dupacks_sent: u64,
}

/// Linux `tcp_comp_sack_nr`: ACKs held back at most.
const MAX_HELD: u32 = 44;

impl SackCompression {
    fn hold(&mut self, now_ns: u64, rcv_nxt: u64) -> Reply {
        if self.held >= MAX_HELD {
            return Reply::AckNow;
        }
        if self.dupacks_for != rcv_nxt {
            self.dupacks_for = rcv_nxt;
            self.dupacks_sent = 0;
        }
        if self.dupacks_sent < DUP_THRESH {
            self.dupacks_sent += 1;
            return Reply::AckNow;
        }
        self.held += 1;
        Reply::Delay(*self.deadline_ns.get_or_insert(now_ns + self.delay_ns))
    }

    fn on_ack_sent(&mut self) {
        self.held = 0;
        self.deadline_ns = None;
    }
}

impl Receiver {
    pub fn new(sack: bool, delayed_ack: bool, delack_timeout_ns: u64) -> Self {
        Self {
            rcv_nxt: 0,
            out_of_order: VecDeque::new(),
            reported: Vec::with_capacity(MAX_SACK_BLOCKS + 1),
            sack,
            dsack: false,
            duplicate: None,
            delayed_ack,
            delack_timeout_ns,
            echo: Echo::default(),
            unacked_segments: 0,
            sink: None,
            compression: None,
            drop_every: None,
            segments_received: 0,
            drops: 0,
            acks_sent: 0,
            ecn: EcnReceiver::new(Feedback::None),
        }
    }

    pub fn with_periodic_drop(mut self, drop_every: Option<u64>) -> Self {
        self.drop_every = drop_every;
        self
    }

    /// Whether the periodic drop (`drop_every`) takes the data packet arriving now. Kept here
    /// rather than with the flow's settings: every arrival reads it, and the receiver's state is
    /// what an arrival reads anyway (with thousands of flows, each line of a flow's state read
    /// per packet is a cache miss).
    pub fn take_periodic_drop(&mut self) -> bool {
        let Some(every) = self.drop_every else {
            return false;
        };
        let arrived = self.segments_received + self.drops + 1;
        let drop = arrived % every == 0;
        self.drops += u64::from(drop);
        drop
    }

    pub fn with_sink(mut self, sink: Option<Sink>) -> Self {
        self.sink = sink;
        self
    }

    /// Hold SACKs for up to `delay_ns` while a hole is open (see `SackCompression`).
    pub fn with_sack_compression(mut self, delay_ns: Option<u64>) -> Self {
        self.compression = delay_ns
            .filter(|_| self.sack)
            .map(|delay_ns| SackCompression {
                delay_ns,
                held: 0,
                deadline_ns: None,
                dupacks_for: 0,
                dupacks_sent: 0,
            });
        self
    }

    pub fn with_ecn(mut self, ecn: EcnReceiver) -> Self {
        self.ecn = ecn;
        self
    }

    /// Report each duplicate segment in the first SACK block of the next ACK (RFC 2883).
    pub fn with_dsack(mut self, dsack: bool) -> Self {
        self.dsack = dsack && self.sack;
        self
    }

    /// Segments delivered in order to the application.
    pub fn rcv_nxt(&self) -> u64 {
        self.rcv_nxt
    }

    /// Segment `seq`, stamped `tsval`, arrived at `now_ns`.
    pub fn on_segment(&mut self, now_ns: u64, seq: u64, tsval: u32) -> Reply {
        self.segments_received += 1;
        self.echo.on_segment(seq, tsval);
        if let Some(sink) = &mut self.sink {
            sink.read_until(now_ns, self.rcv_nxt);
        }
        if seq < self.rcv_nxt || (self.dsack && self.holds(seq)) {
            // A duplicate: tell the sender at once (RFC 5681 §4.2), and which (RFC 2883 §4).
            self.note_duplicate(seq);
            return Reply::AckNow;
        }
        let filled_gap = !self.out_of_order.is_empty();
        let in_order = seq == self.rcv_nxt;
        if in_order {
            self.rcv_nxt += 1;
            self.absorb_in_order();
        } else {
            self.insert_out_of_order(seq);
        }
        // RFC 5681 §4.2: ACK at once a segment out of order or one that fills (part of) a gap;
        // otherwise at least every second full-sized segment, or when the timer runs out.
        if !self.out_of_order.is_empty() {
            return match &mut self.compression {
                Some(c) => c.hold(now_ns, self.rcv_nxt),
                None => Reply::AckNow,
            };
        }
        if !self.delayed_ack || filled_gap {
            return Reply::AckNow;
        }
        self.unacked_segments += 1;
        if self.unacked_segments >= 2 {
            Reply::AckNow
        } else {
            Reply::Delay(now_ns + self.delack_timeout_ns)
        }
    }

    /// Build the ACK for everything received so far, with the window the buffer has room for.
    pub fn make_ack(&mut self, now_ns: u64, pkt: &mut Packet) {
        self.acks_sent += 1;
        self.unacked_segments = 0;
        if let Some(c) = &mut self.compression {
            c.on_ack_sent();
        }
        pkt.seq = self.rcv_nxt;
        pkt.timestamp = self.echo.on_ack_sent(self.rcv_nxt);
        self.ecn.stamp(pkt);
        pkt.n_sack = 0;
        if let Some(sink) = &mut self.sink {
            sink.read_until(now_ns, self.rcv_nxt);
            pkt.window = sink.window(self.rcv_nxt).min(u64::from(u32::MAX - 1)) as u32;
        }
        if !self.sack {
            return;
        }
        let rcv_nxt = self.rcv_nxt;
        self.reported.retain(|b| b.1 > rcv_nxt);
        // RFC 2883 §4: a duplicate is reported once, in the first block, followed by the
        // out-of-order block that holds it, if any.
        let duplicate = self.duplicate.take();
        let holding = duplicate.and_then(|(s, _)| self.range_holding(s));
        // RFC 2018 §4: as many distinct blocks as fit; after the recent ones, the highest others.
        let others = self
            .out_of_order
            .iter()
            .rev()
            .filter(|r| !self.reported.contains(r));
        let ordinary = self
            .reported
            .iter()
            .chain(others)
            .copied()
            .filter(|&b| Some(b) != holding);
        let blocks = duplicate.into_iter().chain(holding).chain(ordinary);
        for (s, e) in blocks.take(MAX_SACK_BLOCKS) {
            pkt.sack[usize::from(pkt.n_sack)] = SackBlock::relative_to(rcv_nxt, s, e);
            pkt.n_sack += 1;
        }
    }

    /// Remember duplicate `seq` for the next ACK; one next to the duplicate already waiting
    /// extends it (Linux `tcp_dsack_extend`), another replaces it.
    fn note_duplicate(&mut self, seq: u64) {
        if !self.dsack {
            return;
        }
        self.duplicate = match self.duplicate {
            Some((s, e)) if s <= seq + 1 && seq <= e => Some((s.min(seq), e.max(seq + 1))),
            _ => Some((seq, seq + 1)),
        };
    }

    /// Whether segment `seq`, above `rcv_nxt`, is held already.
    fn holds(&self, seq: u64) -> bool {
        self.range_holding(seq).is_some()
    }

    /// The out-of-order range holding segment `seq`.
    fn range_holding(&self, seq: u64) -> Option<(u64, u64)> {
        // Arrivals mostly lie above every range: answer those without a search.
        if self.out_of_order.back().is_none_or(|r| r.1 <= seq) {
            return None;
        }
        let i = self.out_of_order.partition_point(|r| r.1 <= seq);
        self.out_of_order.get(i).copied().filter(|&(s, _)| s <= seq)
    }

    /// When a window update is due: the application will have read enough to reopen a
    /// window that is now below half the buffer (RFC 9293 §3.8.6.2.2 receiver-side silly
    /// window avoidance: announce only substantial openings).
    pub fn window_reopens_at(&self, now_ns: u64) -> Option<u64> {
        self.sink.as_ref()?.reopens_at(now_ns, self.rcv_nxt)
    }

    /// Whether segment `seq`, arriving while a compressed SACK is held, would start a new
    /// block and push one the sender has not heard of out of the reported few. Linux sends the
    /// held ACK first (`tcp_sack_new_ofo_skb`): compression may delay what the sender learns,
    /// never hide it, or the sender would take a repaired hole for lost.
    pub fn held_sack_would_lose_a_block(&self, seq: u64) -> bool {
        self.holds_compressed_sack()
            && seq > self.rcv_nxt
            && self.reported.len() == MAX_SACK_BLOCKS
            && !self.reported.iter().any(|&(s, e)| s <= seq + 1 && seq <= e)
    }

    /// Whether an ACK is being held back.
    pub fn ack_pending(&self) -> bool {
        self.unacked_segments > 0 || self.holds_compressed_sack()
    }

    fn holds_compressed_sack(&self) -> bool {
        self.compression.as_ref().is_some_and(|c| c.held > 0)
    }

    fn absorb_in_order(&mut self) {
        if let Some(&(s, e)) = self.out_of_order.front() {
            if s <= self.rcv_nxt {
                self.rcv_nxt = self.rcv_nxt.max(e);
                self.out_of_order.pop_front();
            }
        }
    }

    fn insert_out_of_order(&mut self, seq: u64) {
        let ranges = &mut self.out_of_order;
        // Arrivals mostly extend the highest range: look there first.
        let i = match ranges.back() {
            Some(&(_, e)) if e <= seq => ranges.len(),
            _ => ranges.partition_point(|r| r.1 <= seq),
        };
        let block = match ranges.get(i) {
            Some(&(s, e)) if s <= seq && seq < e => (s, e), // already held
            _ => {
                let joins_prev = i > 0 && ranges[i - 1].1 == seq;
                let joins_next = ranges.get(i).is_some_and(|r| r.0 == seq + 1);
                match (joins_prev, joins_next) {
                    (true, true) => {
                        ranges[i - 1].1 = ranges[i].1;
                        ranges.remove(i);
                        ranges[i - 1]
                    }
                    (true, false) => {
                        ranges[i - 1].1 = seq + 1;
                        ranges[i - 1]
                    }
                    (false, true) => {
                        ranges[i].0 = seq;
                        ranges[i]
                    }
                    (false, false) => {
                        ranges.insert(i, (seq, seq + 1));
                        (seq, seq + 1)
                    }
                }
            }
        };
        self.report_first(block);
    }

    /// RFC 2018 §4: the first block holds the newest segment; the others repeat the most
    /// recently reported blocks that it does not cover.
    fn report_first(&mut self, block: (u64, u64)) {
        if let Some(first) = self.reported.first_mut() {
            if first.0 == block.0 && first.1 + 1 == block.1 {
                // The usual case: the newest segment extends the block reported first, and the
                // others lie below it.
                first.1 = block.1;
                return;
            }
        }
        self.reported.retain(|b| b.1 < block.0 || b.0 > block.1);
        self.reported.insert(0, block);
        self.reported.truncate(MAX_SACK_BLOCKS);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blocks(r: &mut Receiver) -> (u64, Vec<(u64, u64)>) {
        let mut p = Packet::ack(0, 0, 52);
        r.make_ack(0, &mut p);
        (p.seq, p.sack_blocks().collect())
    }

    #[test]
    fn delayed_acks_cover_every_second_segment() {
        let mut r = Receiver::new(true, true, 40);
        assert_eq!(r.on_segment(0, 0, 0), Reply::Delay(40));
        assert_eq!(r.on_segment(1, 1, 0), Reply::AckNow);
        blocks(&mut r);
        assert_eq!(r.on_segment(2, 2, 0), Reply::Delay(42));
        assert!(r.ack_pending());
    }

    #[test]
    fn a_hole_is_reported_with_the_newest_block_first() {
        let mut r = Receiver::new(true, true, 40);
        r.on_segment(0, 0, 0);
        assert_eq!(r.on_segment(0, 2, 0), Reply::AckNow);
        r.on_segment(0, 3, 0);
        assert_eq!(blocks(&mut r), (1, vec![(2, 4)]));
        r.on_segment(0, 6, 0);
        assert_eq!(blocks(&mut r), (1, vec![(6, 7), (2, 4)]));
        // The retransmission fills the first hole: ACK at once, up to the next hole.
        assert_eq!(r.on_segment(0, 1, 0), Reply::AckNow);
        assert_eq!(blocks(&mut r), (4, vec![(6, 7)]));
    }

    #[test]
    fn at_most_three_blocks_most_recent_first() {
        let mut r = Receiver::new(true, false, 40);
        for seq in [2, 4, 6, 8, 5] {
            r.on_segment(0, seq, 0);
        }
        assert_eq!(blocks(&mut r), (0, vec![(4, 7), (8, 9), (2, 3)]));
    }

    #[test]
    fn losing_the_very_first_segment_is_an_ordinary_hole() {
        let mut r = Receiver::new(true, true, 40);
        assert_eq!(r.on_segment(0, 1, 0), Reply::AckNow);
        assert_eq!(blocks(&mut r), (0, vec![(1, 2)]));
    }

    #[test]
    fn without_sack_only_the_cumulative_ack_is_sent() {
        let mut r = Receiver::new(false, false, 40);
        r.on_segment(0, 0, 0);
        r.on_segment(0, 2, 0);
        assert_eq!(blocks(&mut r), (1, vec![]));
    }

    /// A segment arrives and, as the simulation does, an ACK goes out when one is asked for.
    fn arrive(r: &mut Receiver, now_ns: u64, seq: u64) -> Reply {
        let reply = r.on_segment(now_ns, seq, 0);
        if reply == Reply::AckNow {
            blocks(r);
        }
        reply
    }

    #[test]
    fn with_a_hole_open_three_acks_go_at_once_then_one_per_delay() {
        let mut r = Receiver::new(true, true, 40).with_sack_compression(Some(1_000));
        r.on_segment(0, 0, 0);
        let replies: Vec<_> = (2..8).map(|seq| arrive(&mut r, 100 + seq, seq)).collect();
        // The deadline is set by the first held ACK and not pushed back by later segments.
        let held = Reply::Delay(1_105);
        assert_eq!(
            replies,
            [
                Reply::AckNow,
                Reply::AckNow,
                Reply::AckNow,
                held,
                held,
                held
            ]
        );
        assert!(r.ack_pending());
        assert_eq!(blocks(&mut r), (1, vec![(2, 8)]));
        assert!(!r.ack_pending());
        // rcv_nxt is unchanged: the next segment is held again, with a new deadline.
        assert_eq!(r.on_segment(2_000, 8, 0), Reply::Delay(3_000));
    }

    #[test]
    fn a_retransmission_that_moves_rcv_nxt_is_acked_at_once_and_restarts_the_count() {
        let mut r = Receiver::new(true, true, 40).with_sack_compression(Some(1_000));
        for seq in [1, 2, 3, 4, 6, 7, 8, 9] {
            arrive(&mut r, 0, seq);
        }
        // Fills the first hole; the second (5) is still open.
        assert_eq!(arrive(&mut r, 10, 0), Reply::AckNow);
        assert_eq!(arrive(&mut r, 10, 10), Reply::AckNow);
        assert_eq!(arrive(&mut r, 10, 11), Reply::AckNow);
        assert_eq!(arrive(&mut r, 10, 12), Reply::Delay(1_010));
        // Fills the last hole: the gap is closed, ACK at once (RFC 5681 §4.2).
        assert_eq!(arrive(&mut r, 20, 5), Reply::AckNow);
        assert_eq!(blocks(&mut r), (13, vec![]));
    }

    #[test]
    fn at_most_44_acks_are_held() {
        let mut r = Receiver::new(true, false, 40).with_sack_compression(Some(1_000));
        let acks_now = (1..=200)
            .filter(|&seq| arrive(&mut r, 0, seq) == Reply::AckNow)
            .count();
        // 3 duplicate ACKs at once, then one ACK per 45 segments: 197 / 45 = 4.
        assert_eq!(acks_now, 3 + 4);
    }

    #[test]
    fn a_held_ack_goes_out_before_a_new_block_would_push_an_unreported_one_out() {
        let mut r = Receiver::new(true, false, 40).with_sack_compression(Some(1_000));
        // Three duplicate ACKs at once, then held: blocks (2,3), (4,5), (6,8), newest first.
        for seq in [2, 4, 6, 7] {
            arrive(&mut r, 0, seq);
        }
        assert!(r.ack_pending());
        assert!(
            !r.held_sack_would_lose_a_block(8),
            "extends the newest block"
        );
        assert!(!r.held_sack_would_lose_a_block(3), "joins two blocks");
        assert!(!r.held_sack_would_lose_a_block(0), "moves rcv_nxt");
        assert!(
            r.held_sack_would_lose_a_block(10),
            "a fourth block: (2,3) would go unreported"
        );
        blocks(&mut r);
        assert!(!r.held_sack_would_lose_a_block(10), "nothing is held");
    }

    #[test]
    fn a_duplicate_is_reported_once_in_the_first_block() {
        // RFC 2883 §4.1.1: a duplicate below the cumulative ACK is the first block.
        let mut r = Receiver::new(true, false, 40).with_dsack(true);
        for seq in [0, 1, 2, 4] {
            arrive(&mut r, 0, seq);
        }
        assert_eq!(r.on_segment(0, 1, 0), Reply::AckNow);
        assert_eq!(blocks(&mut r), (3, vec![(1, 2), (4, 5)]));
        assert_eq!(blocks(&mut r), (3, vec![(4, 5)]), "reported once");
        // §4.1.3: a duplicate above it, followed by the block that holds it.
        for seq in [5, 6, 8] {
            arrive(&mut r, 0, seq);
        }
        assert_eq!(r.on_segment(0, 5, 0), Reply::AckNow);
        assert_eq!(blocks(&mut r), (3, vec![(5, 6), (4, 7), (8, 9)]));
    }

    #[test]
    fn without_d_sack_a_duplicate_changes_no_block() {
        let mut r = Receiver::new(true, false, 40);
        for seq in [0, 2, 3, 0, 2] {
            arrive(&mut r, 0, seq);
        }
        assert_eq!(blocks(&mut r), (1, vec![(2, 4)]));
    }

    #[test]
    fn without_sack_there_is_nothing_to_compress() {
        let mut r = Receiver::new(false, true, 40).with_sack_compression(Some(1_000));
        assert!((1..10).all(|seq| r.on_segment(0, seq, 0) == Reply::AckNow));
    }
}
