//! FQ-CoDel, Flow Queue CoDel (RFC 8290): packets hashed by flow into buckets, each bucket a
//! CoDel queue of its own (RFC 8289, our [`Codel`]), served by a deficit round robin that
//! keeps two lists of active queues, "new" and "old", so that a flow that has not built a
//! queue is served before those that have (§1.3, §4).
//!
//! Where the RFC leaves a detail open we follow Linux's `sch_fq_codel`, which the RFC takes as
//! the reference for default behaviour (§1): the overflow drop takes up to `drop_batch_pkts`
//! packets at once, stopping once half of the fattest queue's bytes are gone, and an emptied
//! new queue is moved to the old list only when that list is not empty (with no old queue
//! there is nothing to starve, §4.2). The code is our own.

use std::collections::VecDeque;

use super::{Cause, Codel, CodelParams, Dequeued, Discard};
use crate::Frame;

/// FQ-CoDel's settings, as `tc fq_codel` names them (the packet limit is the link's own).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FqCodelParams {
    /// Hash buckets, each a queue (§5.2.5).
    pub flows: u32,
    /// Bytes a queue may send per round of the scheduler (§5.2.4).
    pub quantum_bytes: u32,
    /// CoDel's target, for every queue (§5.2.2).
    pub target_ns: u64,
    /// CoDel's interval, for every queue (§5.2.1).
    pub interval_ns: u64,
    /// Mark ECN-capable packets instead of dropping them (§5.2.6).
    pub ecn: bool,
    /// Mark every ECN-capable packet that waited longer than this (§5.2.7).
    pub ce_threshold_ns: Option<u64>,
    /// At most this many packets go in one overflow drop (Linux's `drop_batch`).
    pub drop_batch_pkts: u32,
}

impl Default for FqCodelParams {
    /// Linux's defaults: 1024 queues (§5.2.5), a quantum of an Ethernet frame, 1514 bytes
    /// (§5.2.4), target 5 ms and interval 100 ms (§5.2.1–5.2.2), ECN on (§5.2.6), no CE
    /// threshold (§5.2.7), overflow drops in batches of 64.
    fn default() -> Self {
        Self {
            flows: 1024,
            quantum_bytes: 1514,
            target_ns: 5_000_000,
            interval_ns: 100_000_000,
            ecn: true,
            ce_threshold_ns: None,
            drop_batch_pkts: 64,
        }
    }
}

/// One hash bucket: its packets and CoDel state, and its place in the scheduler.
#[derive(Debug, Clone)]
struct FlowQueue<P> {
    codel: Codel<P>,
    /// Bytes it may still send this round; may go negative by less than a packet (§3).
    deficit: i64,
    /// On the list of new or of old queues (§4: "active").
    active: bool,
}

/// A scheduled discipline: it holds the packets and the link asks it for the next one.
#[derive(Debug, Clone)]
pub struct FqCodel<P> {
    params: FqCodelParams,
    /// Perturbs the flow hash, as the RFC's random value chosen at start does (§4.1); from
    /// the seed, so runs repeat.
    perturbation: u64,
    /// Every bucket, allocated once: a queue keeps its CoDel state for its whole life, busy or
    /// idle (§1.3), and an empty `VecDeque` holds no memory until used.
    queues: Vec<FlowQueue<P>>,
    /// Indices into `queues` of the active queues, in round-robin order (§4, §5.1).
    new_queues: VecDeque<u32>,
    old_queues: VecDeque<u32>,
    /// Packets and bytes over all queues, kept as they change so the link's reads are cheap.
    pkts: usize,
    bytes: u64,
}

/// splitmix64's finaliser: a bijection on u64 whose every output bit depends on every input
/// bit, so nearby flow keys land in unrelated buckets.
fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl<P: Frame> FqCodel<P> {
    /// `seed` chooses the hash perturbation (§4.1): the same seed puts the same flows together.
    pub fn new(params: FqCodelParams, seed: u64) -> Self {
        assert!(params.flows > 0, "fq_codel needs at least one queue");
        // A zero quantum would never let a queue's deficit turn positive.
        assert!(
            params.quantum_bytes > 0,
            "fq_codel needs a positive quantum"
        );
        let codel = CodelParams {
            target_ns: params.target_ns,
            interval_ns: params.interval_ns,
            ecn: params.ecn,
            ce_threshold_ns: params.ce_threshold_ns,
        };
        Self {
            params,
            // Mixed (with an odd offset so seed 0 is not the identity) so that small seeds
            // give unrelated bucket maps.
            perturbation: mix64(seed.wrapping_add(0x9e37_79b9_7f4a_7c15)),
            // Built one by one: a packet type need not be `Clone`.
            queues: (0..params.flows)
                .map(|_| FlowQueue {
                    codel: Codel::new(codel),
                    deficit: 0,
                    active: false,
                })
                .collect(),
            new_queues: VecDeque::new(),
            old_queues: VecDeque::new(),
            pkts: 0,
            bytes: 0,
        }
    }

    pub fn params(&self) -> &FqCodelParams {
        &self.params
    }

    pub fn len(&self) -> usize {
        self.pkts
    }

    pub fn is_empty(&self) -> bool {
        self.pkts == 0
    }

    /// Bytes waiting in all queues.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Every packet waiting, queue by queue. Only active queues can hold packets: a queue
    /// leaves the lists only once empty (§4.2).
    pub fn packets(&self) -> impl Iterator<Item = &P> {
        self.new_queues
            .iter()
            .chain(&self.old_queues)
            .flat_map(|&i| self.queues[i as usize].codel.packets())
    }

    /// §4.1: the bucket of a flow, its perturbed hash scaled onto `0..flows` (a multiply and
    /// shift rather than a modulo, as Linux's `reciprocal_scale`: unbiased for any count).
    fn bucket(&self, flow_key: u64) -> u32 {
        let hash = mix64(flow_key ^ self.perturbation);
        ((u128::from(hash) * u128::from(self.params.flows)) >> 64) as u32
    }

    /// A packet arrives at `now_ns`; `over_limit`: the link's hard limit does not admit it.
    /// Returns `Some(Overflow)` only if the arrival itself was then dropped (it is not put on
    /// `discards`); the other packets dropped to make room go onto `discards`.
    pub fn enqueue(
        &mut self,
        now_ns: u64,
        pkt: P,
        over_limit: bool,
        discards: &mut Vec<Discard<P>>,
    ) -> Option<Cause> {
        // §4.1: classify, timestamp and add to the tail of the queue (CoDel keeps the time).
        let idx = self.bucket(pkt.flow_key());
        let size = u64::from(pkt.size_bytes());
        let q = &mut self.queues[idx as usize];
        let refused = q.codel.enqueue(now_ns, pkt, false);
        debug_assert!(refused.is_none(), "CoDel refuses only over the limit");
        self.pkts += 1;
        self.bytes += size;
        // §4.1: a queue not on either list becomes active at the end of the new list, with a
        // full quantum; an active queue stays where it is.
        if !q.active {
            q.active = true;
            q.deficit = i64::from(self.params.quantum_bytes);
            self.new_queues.push_back(idx);
        }
        if !over_limit {
            return None;
        }
        // §4.1: over the limit, drop from the head of the queue with the most bytes, the
        // arrival having been counted in; usually a packet other than the arrival.
        let fattest = self.fattest_queue();
        let first_dropped = discards.len();
        self.drop_from_head(fattest, discards);
        // The arrival is at its queue's tail, so it went iff the batch emptied its queue; it
        // was then the last one dropped.
        if fattest == idx && self.queues[idx as usize].codel.is_empty() {
            debug_assert!(discards.len() > first_dropped);
            discards.pop();
            return Some(Cause::Overflow);
        }
        None
    }

    /// The non-empty queue with the most bytes; the lowest index among equals, as Linux's
    /// scan. Only active queues can hold packets, so only they are looked at.
    fn fattest_queue(&self) -> u32 {
        let mut best: Option<(u64, u32)> = None;
        for &i in self.new_queues.iter().chain(&self.old_queues) {
            let codel = &self.queues[i as usize].codel;
            if codel.is_empty() {
                continue;
            }
            let better = match best {
                None => true,
                Some((bytes, j)) => codel.bytes() > bytes || (codel.bytes() == bytes && i < j),
            };
            if better {
                best = Some((codel.bytes(), i));
            }
        }
        best.expect("the arrival's queue holds a packet").1
    }

    /// Linux's `fq_codel_drop`: drop from the head of queue `idx` at least one packet and at
    /// most `drop_batch_pkts`, stopping once half its bytes are gone: one search for the
    /// fattest queue then pays for several drops. CoDel's state is left alone: these drops
    /// are the buffer's, not the AQM's. The queue stays on its list even if emptied; the
    /// scheduler retires it in turn (§4.2).
    fn drop_from_head(&mut self, idx: u32, discards: &mut Vec<Discard<P>>) {
        let codel = &mut self.queues[idx as usize].codel;
        let half = codel.bytes() / 2;
        let batch = self.params.drop_batch_pkts.max(1);
        let (mut pkts, mut bytes) = (0u32, 0u64);
        while pkts < batch && (pkts == 0 || bytes < half) {
            let Some((arrival_ns, pkt)) = codel.take_head() else {
                break;
            };
            pkts += 1;
            bytes += u64::from(pkt.size_bytes());
            discards.push(Discard {
                arrival_ns,
                pkt,
                cause: Cause::Overflow,
            });
        }
        self.pkts -= pkts as usize;
        self.bytes -= bytes;
    }

    /// The next packet to transmit at `now_ns`; what CoDel drops on the way goes onto
    /// `discards` (cause `Aqm`). `None` when every queue is empty.
    pub fn dequeue(&mut self, now_ns: u64, discards: &mut Vec<Discard<P>>) -> Option<Dequeued<P>> {
        loop {
            // §4.2: the head of the new list first; the old list only when no new queue waits.
            let (idx, from_new) = match (self.new_queues.front(), self.old_queues.front()) {
                (Some(&i), _) => (i, true),
                (None, Some(&i)) => (i, false),
                (None, None) => return None,
            };
            let quantum = i64::from(self.params.quantum_bytes);
            let q = &mut self.queues[idx as usize];
            // §4.2: a queue that has spent its quantum gets another and goes to the end of the
            // old list; the scheduler looks again. Linux turns at zero too, hence `<=`.
            if q.deficit <= 0 {
                q.deficit += quantum;
                self.pop_front(from_new);
                self.old_queues.push_back(idx);
                continue;
            }
            // §4.2: CoDel runs on the chosen queue and may drop from its head on the way.
            let (pkts_before, bytes_before) = (q.codel.len(), q.codel.bytes());
            let out = q.codel.dequeue(now_ns, discards);
            self.pkts -= pkts_before - q.codel.len();
            self.bytes -= bytes_before - q.codel.bytes();
            if let Some(d) = out {
                // §4.2: only the packet sent is charged to the deficit; the queue keeps its
                // place at the head of its list while its deficit lasts.
                q.deficit -= i64::from(d.pkt.size_bytes());
                return Some(d);
            }
            self.retire_empty(idx, from_new);
        }
    }

    fn pop_front(&mut self, from_new: bool) {
        let list = if from_new {
            &mut self.new_queues
        } else {
            &mut self.old_queues
        };
        list.pop_front();
    }

    /// §4.2: queue `idx`, at the head of its list, turned out empty. A new queue goes to the
    /// end of the old list, so that a flow sending at just the right rate cannot come back as
    /// new forever and starve the old queues; an old one leaves the lists, to come back as
    /// new with its next packet. With no old queue there is none to starve, and Linux retires
    /// the new queue at once: so do we.
    fn retire_empty(&mut self, idx: u32, from_new: bool) {
        self.pop_front(from_new);
        if from_new && !self.old_queues.is_empty() {
            self.old_queues.push_back(idx);
        } else {
            self.queues[idx as usize].active = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{TestPkt, MS};
    use crate::Ecn;

    fn pkt(seq: u64, flow: u64) -> TestPkt {
        TestPkt::new(seq).of_flow(flow)
    }

    fn fq(params: FqCodelParams) -> FqCodel<TestPkt> {
        FqCodel::new(params, 42)
    }

    /// The running counts agree with the packets held.
    fn assert_counts(q: &FqCodel<TestPkt>) {
        let held: Vec<&TestPkt> = q.packets().collect();
        assert_eq!(q.len(), held.len());
        assert_eq!(
            q.bytes(),
            held.iter().map(|p| u64::from(p.size_bytes)).sum::<u64>()
        );
        assert_eq!(q.is_empty(), held.is_empty());
    }

    /// The flows given land in different buckets under seed 42, so the tests below exercise
    /// the scheduler rather than a hash collision.
    fn assert_apart(q: &FqCodel<TestPkt>, flows: &[u64]) {
        let mut buckets: Vec<u32> = flows.iter().map(|&f| q.bucket(f)).collect();
        buckets.sort_unstable();
        buckets.dedup();
        assert_eq!(buckets.len(), flows.len(), "flows {flows:?} collide");
    }

    fn enqueue_ok(q: &mut FqCodel<TestPkt>, now_ns: u64, p: TestPkt) {
        let mut discards = Vec::new();
        assert_eq!(q.enqueue(now_ns, p, false, &mut discards), None);
        assert!(discards.is_empty());
    }

    fn next(q: &mut FqCodel<TestPkt>, now_ns: u64) -> TestPkt {
        let mut discards = Vec::new();
        let out = q.dequeue(now_ns, &mut discards).expect("a packet waits");
        assert!(discards.is_empty(), "nothing is dropped here");
        out.pkt
    }

    #[test]
    fn a_sparse_flow_overtakes_a_standing_queue() {
        // RFC 8290 §4.2 (and §1.3): the new list is served first, so a flow that sends one
        // packet now and then is served at once, ahead of a bulk flow's standing queue.
        let mut q = fq(FqCodelParams::default());
        assert_apart(&q, &[1, 2]);
        for seq in 0..20 {
            enqueue_ok(&mut q, 0, pkt(seq, 1));
        }
        // The bulk flow spends its first quantum and moves to the old list.
        for seq in 0..3 {
            assert_eq!(next(&mut q, MS).seq, seq);
        }
        enqueue_ok(&mut q, 2 * MS, pkt(100, 2));
        // The sparse packet leaves next, ahead of the 17 bulk packets queued before it.
        assert_eq!(next(&mut q, 2 * MS).flow, 2);
        assert_eq!(q.len(), 17);
        assert!(q.packets().all(|p| p.flow == 1));
        assert_counts(&q);
    }

    #[test]
    fn an_emptied_new_queue_passes_through_the_old_list() {
        // RFC 8290 §4.2: a new queue found empty goes to the END of the old list, so a packet
        // arriving for it soon after waits its turn there instead of being new again.
        let mut q = fq(FqCodelParams::default());
        assert_apart(&q, &[1, 2]);
        for seq in 0..10 {
            enqueue_ok(&mut q, 0, pkt(seq, 1).sized(500));
        }
        // Flow 1 sends 4 × 500 B on its first quantum (1514), then, on the old list with
        // 1514 − 486 = 1028 B of credit, one more: 528 B left.
        for seq in 0..5 {
            assert_eq!(next(&mut q, 0).seq, seq);
        }
        enqueue_ok(&mut q, 0, pkt(100, 2).sized(500));
        assert_eq!(next(&mut q, 0).seq, 100);
        // Flow 2 is empty: it goes behind flow 1 on the old list, flow 1 sends (28 B left).
        assert_eq!(next(&mut q, 0).seq, 5);
        // Flow 2's next packet finds it on the old list: flow 1 spends its credit first.
        enqueue_ok(&mut q, 0, pkt(101, 2).sized(500));
        assert_eq!(next(&mut q, 0).seq, 6);
        assert_eq!(next(&mut q, 0).seq, 101);
        assert_counts(&q);
    }

    #[test]
    fn backlogged_flows_get_equal_bytes_whatever_their_packet_sizes() {
        // RFC 8290 §3: the deficit round robin shares bytes, not packets: flows of 1500 B and
        // of 500 B packets send the same bytes, within a quantum. A packet round robin would
        // give the first three times the bytes.
        let params = FqCodelParams::default();
        let mut q = fq(params);
        assert_apart(&q, &[1, 2]);
        for seq in 0..400 {
            enqueue_ok(&mut q, 0, pkt(seq, 1).sized(1500));
            enqueue_ok(&mut q, 0, pkt(seq, 2).sized(500));
        }
        let quantum = u64::from(params.quantum_bytes);
        let (mut sent, mut last_flow, mut rounds) = ([0u64; 3], 0, 0);
        for _ in 0..500 {
            // Dequeued at their arrival time: no sojourn, so CoDel stays out of it.
            let p = next(&mut q, 0);
            if p.flow == 1 && last_flow == 2 {
                // A round ends when flow 1's turn comes again: both flows have had as many
                // turns, and each has sent its quanta less its deficit, under a packet.
                assert!(sent[1].abs_diff(sent[2]) <= quantum, "{sent:?}");
                rounds += 1;
            }
            sent[p.flow as usize] += u64::from(p.size_bytes);
            last_flow = p.flow;
            // Mid-round the flow served is at most its quantum plus a packet ahead.
            assert!(sent[1].abs_diff(sent[2]) <= quantum + 1500, "{sent:?}");
        }
        assert!(
            rounds > 100 && sent[2] > 100_000,
            "{rounds} rounds, {sent:?}"
        );
        assert_counts(&q);
    }

    /// A heavy flow (1) arriving at the link rate behind a 20-packet burst, so its sojourn
    /// stands near 20 ms, and a light flow (2) sending one packet every 10 ms; the link sends
    /// one packet a ms, two when the light packet came. Returns the packets CoDel dropped and
    /// those it let through marked, per flow.
    fn heavy_and_light(ecn: bool, codepoint: Ecn) -> ([usize; 3], [usize; 3]) {
        let params = FqCodelParams {
            ecn,
            ..FqCodelParams::default()
        };
        let mut q = fq(params);
        assert_apart(&q, &[1, 2]);
        let (mut dropped, mut marked, mut discards) = ([0; 3], [0; 3], Vec::new());
        for seq in 0..20 {
            enqueue_ok(&mut q, 0, pkt(seq, 1).with_ecn(codepoint));
        }
        for ms in 0..400 {
            let now = ms * MS;
            enqueue_ok(&mut q, now, pkt(100 + ms, 1).with_ecn(codepoint));
            let light = ms % 10 == 0;
            if light {
                enqueue_ok(&mut q, now, pkt(1000 + ms, 2).with_ecn(codepoint));
            }
            for _ in 0..1 + usize::from(light) {
                let out = q.dequeue(now, &mut discards).expect("a packet waits");
                if out.marked {
                    assert_eq!(out.pkt.ecn, Ecn::Ce);
                    marked[out.pkt.flow as usize] += 1;
                }
            }
        }
        for d in &discards {
            assert_eq!(d.cause, Cause::Aqm);
            dropped[d.pkt.flow as usize] += 1;
        }
        assert_counts(&q);
        (dropped, marked)
    }

    #[test]
    fn codel_signals_only_the_flow_that_keeps_a_standing_queue() {
        // RFC 8290 §1.3 and §4.2: each queue has its own CoDel state, so the heavy flow's
        // standing queue is dropped (Not-ECT) or marked (ECN-capable, §5.2.6) while the light
        // flow, served as new each time, sees neither.
        let (dropped, marked) = heavy_and_light(true, Ecn::NotEct);
        assert!(dropped[1] > 0, "the heavy flow is dropped: {dropped:?}");
        assert_eq!((dropped[2], marked), (0, [0; 3]));
        let (dropped, marked) = heavy_and_light(true, Ecn::Ect0);
        assert!(marked[1] > 0, "the heavy flow is marked: {marked:?}");
        assert_eq!((marked[2], dropped), (0, [0; 3]));
        // With ECN off, an ECN-capable heavy flow is dropped instead.
        let (dropped, marked) = heavy_and_light(false, Ecn::Ect0);
        assert!(dropped[1] > 0 && dropped[2] == 0 && marked == [0; 3]);
    }

    #[test]
    fn overflow_drops_half_the_fattest_queue_from_its_head() {
        // RFC 8290 §4.1: over the limit, packets go from the HEAD of the queue with the most
        // bytes; Linux drops until half its bytes are gone. Flow 1 holds 10 × 1500 B, flow 2
        // 2 × 1500 B; flow 2's arrival over the limit costs flow 1 its 5 oldest packets.
        let mut q = fq(FqCodelParams::default());
        assert_apart(&q, &[1, 2]);
        for seq in 0..10 {
            enqueue_ok(&mut q, seq, pkt(seq, 1));
        }
        enqueue_ok(&mut q, 10, pkt(100, 2));
        enqueue_ok(&mut q, 11, pkt(101, 2));
        let mut discards = Vec::new();
        assert_eq!(q.enqueue(12, pkt(102, 2), true, &mut discards), None);
        let dropped: Vec<(u64, u64, u64)> = discards
            .iter()
            .map(|d| (d.pkt.flow, d.pkt.seq, d.arrival_ns))
            .collect();
        assert_eq!(dropped, (0..5).map(|s| (1, s, s)).collect::<Vec<_>>());
        assert!(discards.iter().all(|d| d.cause == Cause::Overflow));
        // The small flow kept all three packets, the arrival included.
        assert_eq!(q.packets().filter(|p| p.flow == 2).count(), 3);
        assert_eq!((q.len(), q.bytes()), (8, 8 * 1500));
        assert_counts(&q);
    }

    #[test]
    fn an_overflow_batch_is_capped_and_the_arrival_can_be_its_own_victim() {
        // The batch stops at drop_batch_pkts even short of half the bytes.
        let params = FqCodelParams {
            drop_batch_pkts: 2,
            ..FqCodelParams::default()
        };
        let mut q = fq(params);
        assert_apart(&q, &[1, 2, 3]);
        for seq in 0..10 {
            enqueue_ok(&mut q, 0, pkt(seq, 1));
        }
        let mut discards = Vec::new();
        assert_eq!(q.enqueue(0, pkt(100, 2), true, &mut discards), None);
        assert_eq!(
            discards.iter().map(|d| d.pkt.seq).collect::<Vec<_>>(),
            [0, 1]
        );
        assert_counts(&q);
        // A jumbo arriving in a flow of its own is the fattest queue: it is dropped itself,
        // reported through the return value and not among the discards.
        discards.clear();
        let jumbo = pkt(200, 3).sized(20_000);
        assert_eq!(
            q.enqueue(0, jumbo, true, &mut discards),
            Some(Cause::Overflow)
        );
        assert!(discards.is_empty());
        assert_eq!((q.len(), q.bytes()), (9, 9 * 1500));
        assert_counts(&q);
        // Its emptied queue, left on the new list, is retired on the way: the rest leave.
        let mut left = 0;
        while let Some(out) = q.dequeue(0, &mut discards) {
            assert_ne!(out.pkt.flow, 3);
            left += 1;
        }
        assert_eq!((left, discards.len()), (9, 0));
        assert!(q.is_empty() && q.new_queues.is_empty() && q.old_queues.is_empty());
    }

    #[test]
    fn the_seed_alone_decides_the_buckets() {
        // RFC 8290 §4.1: the hash is perturbed by a value chosen at start; here it comes from
        // the seed, so the same seed gives the same buckets and another seed other ones.
        let params = FqCodelParams::default();
        let (a, b) = (fq(params), fq(params));
        let c = FqCodel::<TestPkt>::new(params, 43);
        let keys = 0..1000u64;
        assert!(keys.clone().all(|k| a.bucket(k) == b.bucket(k)));
        assert!(keys.clone().any(|k| a.bucket(k) != c.bucket(k)));
        // Every bucket in range, for a count that is not a power of two, and well spread:
        // 1000 keys over 7 buckets, each near 143.
        let seven = FqCodel::<TestPkt>::new(FqCodelParams { flows: 7, ..params }, 5);
        let mut per_bucket = [0u32; 7];
        for k in keys {
            per_bucket[seven.bucket(k) as usize] += 1;
        }
        assert!(
            per_bucket.iter().all(|&n| (100..190).contains(&n)),
            "{per_bucket:?}"
        );
    }

    #[test]
    fn with_one_bucket_all_flows_share_one_fifo() {
        // RFC 8290 §1.3: with a single queue FQ-CoDel is CoDel alone: arrival order is kept
        // across flows and packet sizes.
        let mut q = fq(FqCodelParams {
            flows: 1,
            ..FqCodelParams::default()
        });
        for seq in 0..30 {
            enqueue_ok(
                &mut q,
                0,
                pkt(seq, seq % 4).sized(100 + 100 * (seq % 3) as u32),
            );
        }
        let order: Vec<u64> = (0..30).map(|_| next(&mut q, 0).seq).collect();
        assert_eq!(order, (0..30).collect::<Vec<_>>());
        assert!(q.is_empty());
    }

    #[test]
    fn ce_threshold_marks_the_capable_packets_that_waited_longer() {
        // RFC 8290 §5.2.7: with a CE threshold, every ECT packet whose sojourn exceeds it
        // leaves marked, though CoDel's target is not reached. Flows 1 (ECT(1)) and 3
        // (Not-ECT) each send a packet a ms and stand at a sojourn of about 3 ms, above the
        // 1 ms threshold and below the 5 ms target; flow 2 (ECT(1)) sends one packet every
        // 10 ms, which leaves as it comes, and the link sends two packets a ms, three when
        // flow 2's came.
        let mut q = fq(FqCodelParams {
            ce_threshold_ns: Some(MS),
            ..FqCodelParams::default()
        });
        assert_apart(&q, &[1, 2, 3]);
        let (mut marked, mut sent, mut discards) = ([0; 4], [0; 4], Vec::new());
        for ms in 0..200 {
            let now = ms * MS;
            enqueue_ok(&mut q, now, pkt(ms, 1).with_ecn(Ecn::Ect1));
            enqueue_ok(&mut q, now, pkt(ms, 3));
            let light = ms % 10 == 5;
            if light {
                enqueue_ok(&mut q, now, pkt(1000 + ms, 2).with_ecn(Ecn::Ect1));
            }
            if ms < 3 {
                continue;
            }
            for _ in 0..2 + usize::from(light) {
                let out = q.dequeue(now, &mut discards).expect("a packet waits");
                sent[out.pkt.flow as usize] += 1;
                if out.marked {
                    assert_eq!(out.pkt.ecn, Ecn::Ce);
                    marked[out.pkt.flow as usize] += 1;
                }
            }
        }
        assert!(discards.is_empty(), "below target CoDel drops nothing");
        assert!(sent[1] > 150 && sent[3] > 150, "{sent:?}");
        assert_eq!(marked, [0, sent[1], 0, 0]);
        assert_eq!(sent[2], 20);
        assert_counts(&q);
    }
}
