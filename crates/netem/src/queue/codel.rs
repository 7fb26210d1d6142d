//! CoDel, Controlled Delay (RFC 8289): an explicit FIFO whose head may be dropped as it leaves.
//!
//! CoDel measures each packet's sojourn time at dequeue (§3.2). Once the sojourn time has stayed
//! at or above `target` for a whole `interval` it enters the dropping state (§3.3), drops one
//! packet, and then drops at times spaced by the control law `interval/sqrt(count)` (§3.3, §5.5)
//! until a dequeued packet's sojourn falls below target. Re-entering soon after leaving resumes
//! from the previous drop rate rather than from one (§5.6, the `count − lastcount` rule).
//! The structure follows the RFC's §5 pseudocode; the code is our own.

use std::collections::VecDeque;

use super::{Cause, Dequeued, Discard};
use crate::Frame;

/// CoDel's settings, as `tc codel` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CodelParams {
    pub target_ns: u64,
    pub interval_ns: u64,
    /// Mark ECN-capable packets instead of dropping them (RFC 8289 §5: "ECN marking may be
    /// used instead of dropping"; `tc codel ecn`).
    pub ecn: bool,
    /// Mark every ECN-capable packet whose sojourn exceeds this, whatever the control law
    /// says (`tc codel ce_threshold`: a shallow step marker for DCTCP and L4S senders).
    pub ce_threshold_ns: Option<u64>,
}

impl CodelParams {
    /// Dropping CoDel at `target_ns` and `interval_ns`.
    pub fn dropping(target_ns: u64, interval_ns: u64) -> Self {
        Self {
            target_ns,
            interval_ns,
            ecn: false,
            ce_threshold_ns: None,
        }
    }
}

#[derive(Debug, Clone)]
pub struct Codel<P> {
    params: CodelParams,
    /// Waiting packets with their arrival time.
    queue: VecDeque<(u64, P)>,
    queue_bytes: u64,
    /// The largest packet seen: with no more than this queued the link cannot be the cause of
    /// delay, so CoDel does not drop (§5.4, `maxpacket`).
    max_packet_bytes: u64,
    /// When the sojourn time will have been above target for a whole interval.
    first_above_ns: Option<u64>,
    drop_next_ns: u64,
    count: u32,
    last_count: u32,
    dropping: bool,
}

/// A dequeued packet and whether CoDel would allow dropping it.
struct Head<P> {
    pkt: Option<(u64, P)>,
    ok_to_drop: bool,
}

impl<P: Frame> Codel<P> {
    /// RFC 8289 §4.2–4.3 recommend `target` 5 ms and `interval` 100 ms for the Internet.
    pub fn new(params: CodelParams) -> Self {
        Self {
            params,
            queue: VecDeque::new(),
            queue_bytes: 0,
            max_packet_bytes: 0,
            first_above_ns: None,
            drop_next_ns: 0,
            count: 0,
            last_count: 0,
            dropping: false,
        }
    }

    pub fn params(&self) -> &CodelParams {
        &self.params
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Bytes waiting.
    pub fn bytes(&self) -> u64 {
        self.queue_bytes
    }

    /// Waiting packets, oldest first.
    pub fn packets(&self) -> impl Iterator<Item = &P> {
        self.queue.iter().map(|(_, p)| p)
    }

    /// Take the oldest waiting packet out, with its arrival time, without CoDel judging it: the
    /// control-law state stays as it was. For a scheduler that discards from this queue's head
    /// for its own reasons (FQ-CoDel's overflow, RFC 8290 §4.1), which must not look to CoDel
    /// like a dequeue below target and end its dropping state.
    pub fn take_head(&mut self) -> Option<(u64, P)> {
        let (arrival_ns, pkt) = self.queue.pop_front()?;
        self.queue_bytes -= u64::from(pkt.size_bytes());
        Some((arrival_ns, pkt))
    }

    /// A packet arrives at `now_ns`. With `over_limit` (the link's hard limit is reached) it
    /// is refused: CoDel's buffer is a tail-drop FIFO behind the control law.
    pub fn enqueue(&mut self, now_ns: u64, pkt: P, over_limit: bool) -> Option<Cause> {
        if over_limit {
            return Some(Cause::Overflow);
        }
        let size = u64::from(pkt.size_bytes());
        self.max_packet_bytes = self.max_packet_bytes.max(size);
        self.queue_bytes += size;
        self.queue.push_back((now_ns, pkt));
        None
    }

    /// Take the next packet to transmit at `now_ns`, pushing the ones CoDel drops on the way
    /// onto `discards`. `None` when the queue is (or became) empty.
    pub fn dequeue(&mut self, now_ns: u64, discards: &mut Vec<Discard<P>>) -> Option<Dequeued<P>> {
        let mut r = self.do_dequeue(now_ns);
        if r.pkt.is_none() {
            self.dropping = false;
            return None;
        }
        let mut marked = false;
        if self.dropping {
            if !r.ok_to_drop {
                self.dropping = false; // sojourn back below target: leave the dropping state
            }
            while self.dropping && now_ns >= self.drop_next_ns {
                self.count += 1;
                if self.try_mark(&mut r) {
                    // A mark takes the place of this drop; the next signal follows the law.
                    marked = true;
                    self.drop_next_ns = self.control_law(self.drop_next_ns);
                    break;
                }
                Self::discard(&mut r, discards);
                r = self.do_dequeue(now_ns);
                if r.ok_to_drop {
                    self.drop_next_ns = self.control_law(self.drop_next_ns);
                } else {
                    self.dropping = false;
                }
            }
        } else if r.ok_to_drop {
            if self.try_mark(&mut r) {
                marked = true;
            } else {
                Self::discard(&mut r, discards);
                r = self.do_dequeue(now_ns);
            }
            self.dropping = true;
            self.enter_count(now_ns);
            self.drop_next_ns = self.control_law(now_ns);
        }
        let (arrival_ns, mut pkt) = r.pkt?;
        marked |= self.ce_threshold_marks(now_ns - arrival_ns, &mut pkt);
        Some(Dequeued {
            arrival_ns,
            pkt,
            marked,
        })
    }

    /// Mark the head instead of dropping it, if CoDel marks and the packet can take it.
    fn try_mark(&self, r: &mut Head<P>) -> bool {
        match &mut r.pkt {
            Some((_, p)) if self.params.ecn && p.ecn().is_capable() => {
                p.mark_ce();
                true
            }
            _ => false,
        }
    }

    fn discard(r: &mut Head<P>, discards: &mut Vec<Discard<P>>) {
        discards.extend(r.pkt.take().map(|(arrival_ns, pkt)| Discard {
            arrival_ns,
            pkt,
            cause: Cause::Aqm,
        }));
    }

    /// `ce_threshold`: a packet that waited longer than the threshold leaves marked.
    fn ce_threshold_marks(&self, sojourn_ns: u64, pkt: &mut P) -> bool {
        let above = self.params.ce_threshold_ns.is_some_and(|t| sojourn_ns > t);
        if above && pkt.ecn().is_capable() {
            pkt.mark_ce();
        }
        above && pkt.ecn().is_capable()
    }

    /// §5.6: if the last dropping state ended recently, start from the drop rate it reached.
    fn enter_count(&mut self, now_ns: u64) {
        let delta = self.count.saturating_sub(self.last_count);
        let recent = now_ns.saturating_sub(self.drop_next_ns) < 16 * self.params.interval_ns;
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.last_count = self.count;
    }

    /// §5.4: pop the head and track how long the sojourn time has been above target.
    fn do_dequeue(&mut self, now_ns: u64) -> Head<P> {
        let Some((arrival_ns, pkt)) = self.queue.pop_front() else {
            self.first_above_ns = None;
            return Head {
                pkt: None,
                ok_to_drop: false,
            };
        };
        self.queue_bytes -= u64::from(pkt.size_bytes());
        let sojourn_ns = now_ns - arrival_ns;
        let mut ok_to_drop = false;
        if sojourn_ns < self.params.target_ns || self.queue_bytes <= self.max_packet_bytes {
            self.first_above_ns = None;
        } else {
            match self.first_above_ns {
                None => self.first_above_ns = Some(now_ns + self.params.interval_ns),
                Some(t) => ok_to_drop = now_ns >= t,
            }
        }
        Head {
            pkt: Some((arrival_ns, pkt)),
            ok_to_drop,
        }
    }

    /// §5.5: the next drop `interval/sqrt(count)` after `t_ns`.
    fn control_law(&self, t_ns: u64) -> u64 {
        t_ns + (self.params.interval_ns as f64 / f64::from(self.count).sqrt()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestPkt, MS};
    use crate::Ecn;

    fn pkt(seq: u64) -> TestPkt {
        TestPkt::new(seq)
    }

    fn dropping() -> Codel<TestPkt> {
        Codel::new(CodelParams::dropping(5 * MS, 100 * MS))
    }

    /// Packets arrive one per ms from 0 and, from `first_dequeue_ms` on, one leaves per ms:
    /// a standing sojourn of `first_dequeue_ms`. The times (ms) of the dequeues at which CoDel
    /// dropped or marked.
    fn signals(c: &mut Codel<TestPkt>, first_dequeue_ms: u64, ecn: Ecn) -> (Vec<u64>, Vec<u64>) {
        let (mut drops, mut marks, mut discards) = (Vec::new(), Vec::new(), Vec::new());
        for i in 0..300 {
            assert_eq!(c.enqueue(i * MS, pkt(i).with_ecn(ecn), false), None);
            if i >= first_dequeue_ms {
                let before = discards.len();
                let out = c.dequeue(i * MS, &mut discards).expect("a packet waits");
                if discards.len() > before {
                    drops.push(i);
                }
                if out.marked {
                    assert_eq!(out.pkt.ecn, Ecn::Ce);
                    marks.push(i);
                }
            }
        }
        (drops, marks)
    }

    #[test]
    fn a_short_standing_queue_is_never_dropped() {
        // Sojourn 4 ms < target 5 ms, sustained: nothing is dropped.
        let (drops, marks) = signals(&mut dropping(), 4, Ecn::NotEct);
        assert!(drops.is_empty() && marks.is_empty());
    }

    #[test]
    fn drops_start_one_interval_after_the_sojourn_exceeds_target() {
        // Sojourn 10 ms from t = 10 ms on, one dequeue per ms: above target first seen at
        // 10 ms, so the first drop comes at the dequeue at 110 ms; the next after one
        // interval/sqrt(1) = 100 ms (210 ms), then 100/sqrt(2) = 70.7 ms later (281 ms).
        let mut c = dropping();
        assert_eq!(
            signals(&mut c, 10, Ecn::NotEct),
            (vec![110, 210, 281], vec![])
        );
        assert_eq!(c.count, 3);
    }

    #[test]
    fn with_ecn_the_same_signals_are_marks_and_not_ect_is_still_dropped() {
        // RFC 8289 §5 lets CoDel mark instead of drop: the same control law, the same times.
        let params = CodelParams {
            ecn: true,
            ..CodelParams::dropping(5 * MS, 100 * MS)
        };
        for ecn in [Ecn::Ect0, Ecn::Ect1] {
            let mut c = Codel::new(params);
            assert_eq!(signals(&mut c, 10, ecn), (vec![], vec![110, 210, 281]));
        }
        let mut c = Codel::new(params);
        assert_eq!(
            signals(&mut c, 10, Ecn::NotEct),
            (vec![110, 210, 281], vec![])
        );
    }

    #[test]
    fn ce_threshold_marks_every_capable_packet_that_waited_longer() {
        // A 2 ms threshold under a 4 ms sojourn (below target): every ECT packet is marked,
        // a Not-ECT one passes untouched and nothing is dropped.
        let params = CodelParams {
            ce_threshold_ns: Some(2 * MS),
            ..CodelParams::dropping(5 * MS, 100 * MS)
        };
        let (drops, marks) = signals(&mut Codel::new(params), 4, Ecn::Ect1);
        assert!(drops.is_empty());
        assert_eq!(marks, (4..300).collect::<Vec<_>>());
        let (drops, marks) = signals(&mut Codel::new(params), 4, Ecn::NotEct);
        assert!(drops.is_empty() && marks.is_empty());
    }

    #[test]
    fn over_the_limit_the_arrival_is_refused_as_overflow() {
        let mut c = dropping();
        assert_eq!(c.enqueue(7, pkt(1), true), Some(Cause::Overflow));
        assert!(c.is_empty());
    }

    #[test]
    fn taking_the_head_leaves_the_control_law_alone() {
        // The 10 ms standing queue of the test above, with the head taken out at 150 ms, in
        // the dropping state: the sojourn stays above target, so the drops keep their times
        // (a dequeue of that packet at sojourn 0 would have ended the dropping state instead).
        let mut c = dropping();
        let (mut drops, mut discards) = (Vec::new(), Vec::new());
        for i in 0..300 {
            c.enqueue(i * MS, pkt(i), false);
            if i == 150 {
                // 0..=150 arrived; 140 dequeues and the drop at 110 took 0..=140 out.
                let (arrival_ns, taken) = c.take_head().expect("a packet waits");
                assert_eq!((arrival_ns, taken.seq), (141 * MS, 141));
            }
            if i >= 10 {
                let before = discards.len();
                c.dequeue(i * MS, &mut discards).expect("a packet waits");
                if discards.len() > before {
                    drops.push(i);
                }
            }
        }
        assert_eq!(drops, vec![110, 210, 281]);
        assert_eq!(c.bytes(), c.len() as u64 * 1500);
    }

    #[test]
    fn the_control_law_shrinks_with_count() {
        let mut c = dropping();
        c.count = 4;
        assert_eq!(c.control_law(0), 50 * MS);
    }
}
