//! CoDel, Controlled Delay (RFC 8289): an explicit FIFO whose head may be dropped as it leaves.
//!
//! CoDel measures each packet's sojourn time at dequeue (§3.2). Once the sojourn time has stayed
//! at or above `target` for a whole `interval` it enters the dropping state (§3.3), drops one
//! packet, and then drops at times spaced by the control law `interval/sqrt(count)` (§3.3, §5.5)
//! until a dequeued packet's sojourn falls below target. Re-entering soon after leaving resumes
//! from the previous drop rate rather than from one (§5.6, the `count − lastcount` rule).
//! The structure follows the RFC's §5 pseudocode; the code is our own.

use std::collections::VecDeque;

use crate::Frame;

#[derive(Debug, Clone)]
pub struct Codel<P> {
    target_ns: u64,
    interval_ns: u64,
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
struct Dequeued<P> {
    pkt: Option<(u64, P)>,
    ok_to_drop: bool,
}

impl<P: Frame> Codel<P> {
    /// RFC 8289 §4.2–4.3 recommend `target` 5 ms and `interval` 100 ms for the Internet.
    pub fn new(target_ns: u64, interval_ns: u64) -> Self {
        Self {
            target_ns,
            interval_ns,
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

    pub fn target_ns(&self) -> u64 {
        self.target_ns
    }

    pub fn interval_ns(&self) -> u64 {
        self.interval_ns
    }

    pub fn len(&self) -> usize {
        self.queue.len()
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// Waiting packets, oldest first.
    pub fn packets(&self) -> impl Iterator<Item = &P> {
        self.queue.iter().map(|(_, p)| p)
    }

    pub fn enqueue(&mut self, now_ns: u64, pkt: P) {
        let size = u64::from(pkt.size_bytes());
        self.max_packet_bytes = self.max_packet_bytes.max(size);
        self.queue_bytes += size;
        self.queue.push_back((now_ns, pkt));
    }

    /// Take the next packet to transmit at `now_ns` (with its arrival time), pushing the ones
    /// CoDel drops on the way onto `dropped`. `None` when the queue is (or became) empty.
    pub fn dequeue(&mut self, now_ns: u64, dropped: &mut Vec<(u64, P)>) -> Option<(u64, P)> {
        let mut r = self.do_dequeue(now_ns);
        if r.pkt.is_none() {
            self.dropping = false;
            return None;
        }
        if self.dropping {
            if !r.ok_to_drop {
                self.dropping = false; // sojourn back below target: leave the dropping state
            }
            while self.dropping && now_ns >= self.drop_next_ns {
                dropped.extend(r.pkt);
                self.count += 1;
                r = self.do_dequeue(now_ns);
                if r.ok_to_drop {
                    self.drop_next_ns = self.control_law(self.drop_next_ns);
                } else {
                    self.dropping = false;
                }
            }
        } else if r.ok_to_drop {
            dropped.extend(r.pkt);
            r = self.do_dequeue(now_ns);
            self.dropping = true;
            self.enter_count(now_ns);
            self.drop_next_ns = self.control_law(now_ns);
        }
        r.pkt
    }

    /// §5.6: if the last dropping state ended recently, start from the drop rate it reached.
    fn enter_count(&mut self, now_ns: u64) {
        let delta = self.count.saturating_sub(self.last_count);
        let recent = now_ns.saturating_sub(self.drop_next_ns) < 16 * self.interval_ns;
        self.count = if delta > 1 && recent { delta } else { 1 };
        self.last_count = self.count;
    }

    /// §5.4: pop the head and track how long the sojourn time has been above target.
    fn do_dequeue(&mut self, now_ns: u64) -> Dequeued<P> {
        let Some((arrival_ns, pkt)) = self.queue.pop_front() else {
            self.first_above_ns = None;
            return Dequeued {
                pkt: None,
                ok_to_drop: false,
            };
        };
        self.queue_bytes -= u64::from(pkt.size_bytes());
        let sojourn_ns = now_ns - arrival_ns;
        let mut ok_to_drop = false;
        if sojourn_ns < self.target_ns || self.queue_bytes <= self.max_packet_bytes {
            self.first_above_ns = None;
        } else {
            match self.first_above_ns {
                None => self.first_above_ns = Some(now_ns + self.interval_ns),
                Some(t) => ok_to_drop = now_ns >= t,
            }
        }
        Dequeued {
            pkt: Some((arrival_ns, pkt)),
            ok_to_drop,
        }
    }

    /// §5.5: the next drop `interval/sqrt(count)` after `t_ns`.
    fn control_law(&self, t_ns: u64) -> u64 {
        t_ns + (self.interval_ns as f64 / f64::from(self.count).sqrt()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    /// A 1500-byte packet, numbered.
    #[derive(Debug, Clone, PartialEq)]
    struct Numbered(u64);

    impl Frame for Numbered {
        fn size_bytes(&self) -> u32 {
            1500
        }
    }

    fn pkt(seq: u64) -> Numbered {
        Numbered(seq)
    }

    #[test]
    fn a_short_standing_queue_is_never_dropped() {
        // Sojourn 4 ms < target 5 ms, sustained for a second: nothing is dropped.
        let mut c = Codel::new(5 * MS, 100 * MS);
        let mut dropped = Vec::new();
        for i in 0..1000 {
            c.enqueue(i * MS, pkt(i));
            if i >= 4 {
                assert!(c.dequeue(i * MS, &mut dropped).is_some());
            }
        }
        assert!(dropped.is_empty());
    }

    #[test]
    fn drops_start_one_interval_after_the_sojourn_exceeds_target() {
        // Sojourn 10 ms from t = 10 ms on, one dequeue per ms: above target first seen at
        // 10 ms, so the first drop comes at the dequeue at 110 ms; the next after one
        // interval/sqrt(1) = 100 ms (210 ms), then 100/sqrt(2) = 70.7 ms later (281 ms).
        let mut c = Codel::new(5 * MS, 100 * MS);
        let mut dropped = Vec::new();
        let mut drop_times = Vec::new();
        for i in 0..300 {
            c.enqueue(i * MS, pkt(i));
            if i >= 10 {
                let before = dropped.len();
                c.dequeue(i * MS, &mut dropped);
                if dropped.len() > before {
                    drop_times.push(i);
                }
            }
        }
        assert_eq!(drop_times, vec![110, 210, 281]);
        assert_eq!(dropped.len(), 3);
        assert_eq!(c.count, 3);
    }

    #[test]
    fn the_control_law_shrinks_with_count() {
        let mut c = Codel::<Numbered>::new(5 * MS, 100 * MS);
        c.count = 4;
        assert_eq!(c.control_law(0), 50 * MS);
    }
}
