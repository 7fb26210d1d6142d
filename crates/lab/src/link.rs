//! One direction of the emulated path, sans-IO: pure functions of (time, packet) that decide a
//! frame's fate and when it may leave. The I/O loop feeds it kernel receive timestamps and the
//! tests a simulated clock.
//!
//! Order as in the simulator's link (`crates/sim/src/net/link.rs`): induced losses (`drop_at`,
//! the simulator's `sim.rs` decides them before its link) → a path-MTU black hole, if any →
//! random loss → the token-bucket policer, if any → the queue discipline and the hard limit →
//! a transmitter at `rate_bps` → the propagation delay of the packet's endpoint, plus, for the
//! share a reordering link holds back, its reordering delay (the simulator's detour, drawn
//! from netem's `Reorder` as it leaves the transmitter). Netem's disciplines come in two kinds, driven as
//! the simulator drives them:
//! - *arrival* disciplines (drop-tail, RED) judge a packet as it arrives (`on_arrival`: pass,
//!   mark or drop, before the hard limit); its departure is then known at once (the analytic
//!   FIFO: it starts at max(its arrival, the previous departure)), so it goes straight into its
//!   delay line;
//! - *scheduled* disciplines (CoDel, and any other `Scheduled`) hold the packets themselves and
//!   decide as one leaves: the link keeps a virtual transmitter that `advance` runs up to the
//!   present, asking the discipline for the next packet each time it frees. What a discipline
//!   discards (at enqueue or dequeue) hands its buffer back to the caller (`pop_freed`).
//!
//! A packet marked on the way (CE instead of a drop, ECN-capable packets only) is counted
//! (`aqm_marks`) and leaves with `ce` set: the I/O loop rewrites its IP header before sending it.

use std::collections::VecDeque;

use tcpeval_netem::black_hole::MtuBlackHole;
use tcpeval_netem::loss::LossModel;
use tcpeval_netem::policer::Policer;
use tcpeval_netem::queue::{Aqm, Arrival, Cause, Discard, Limit, Verdict};
use tcpeval_netem::reorder::Reorder;
use tcpeval_netem::{Ecn, Frame};

use crate::config::{DirectionConfig, Endpoint};
use crate::delay::{DelayLines, InFlight};
use crate::induced::InducedDrops;
use crate::stats::{DirReport, DirStats};

/// A frame as the link sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pkt {
    /// The frame buffer holding it.
    pub id: u32,
    /// The IP packet's length (the frame without its Ethernet header), as the simulator counts.
    pub size_bytes: u32,
    /// Index into the config's endpoints; `None` when unmatched.
    pub endpoint: Option<u16>,
    /// Its ECN codepoint, as read from the IP header; CE once a discipline marked it.
    pub ecn: Ecn,
    /// A hash of its 5-tuple (`Received::flow_key`).
    pub flow_key: u64,
    /// A TCP segment with payload (`Received::carries_tcp_data`), which induced losses may drop.
    pub tcp_data: bool,
}

impl Frame for Pkt {
    fn size_bytes(&self) -> u32 {
        self.size_bytes
    }

    fn ecn(&self) -> Ecn {
        self.ecn
    }

    fn mark_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }

    fn flow_key(&self) -> u64 {
        self.flow_key
    }
}

/// Why a frame was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    Induced,
    Random,
    Policer,
    BlackHole,
    Queue,
    Aqm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Accepted,
    /// The caller frees the frame's buffer.
    Dropped(Drop),
}

/// A scheduled discipline's packet in (virtual) transmission.
#[derive(Debug, Clone, Copy)]
struct OnTx {
    end_ns: u64,
    pkt: Pkt,
    back_to_back: bool,
}

/// Transmission time of `bytes` at `rate_bps`, rounded up, as the simulator computes it.
pub fn tx_time_ns(bytes: u32, rate_bps: u64) -> u64 {
    (u64::from(bytes) * 8 * 1_000_000_000).div_ceil(rate_bps)
}

#[derive(Debug)]
pub struct Link {
    rate_bps: Option<u64>,
    limit: Limit,
    aqm: Aqm<Pkt>,
    loss: LossModel,
    policer: Option<Policer>,
    black_hole: Option<MtuBlackHole>,
    reorder: Option<Reorder>,
    /// How much later a held-back packet is released.
    held_back_ns: u64,
    induced: InducedDrops,
    /// The latest time processed; an arrival stamped earlier (read late) is moved up to it so
    /// virtual time never runs backwards.
    clock_ns: u64,
    /// When the last transmission started so far ends (its departure).
    busy_until_ns: u64,
    transmitted_any: bool,
    next_seq: u64,
    /// Arrival disciplines: (departure, size) of the packets queued or in transmission.
    tx_fifo: VecDeque<(u64, u32)>,
    /// Packets (bytes) queued or in transmission.
    queued_pkts: u64,
    queued_bytes: u64,
    on_tx: Option<OnTx>,
    /// What a scheduled discipline discarded in one call (reused buffer).
    discarded: Vec<Discard<Pkt>>,
    /// Buffers of frames a scheduled discipline discarded, for the caller to free.
    freed: Vec<u32>,
    delay: DelayLines,
    pub stats: DirStats,
}

impl Link {
    /// `delays_ns[i]`: endpoint `i`'s delay in this direction; `capacity_pkts`: the most
    /// frames the emulator can hold (its buffer pool).
    pub fn new(config: &DirectionConfig, delays_ns: &[u64], capacity_pkts: usize) -> Self {
        let held_back_ns = config.reorder.map(|r| r.delay_ns);
        Self {
            rate_bps: config.rate_bps,
            limit: config.limit(),
            aqm: config.aqm(),
            loss: config.loss(),
            policer: config.policer(),
            black_hole: config.black_hole(),
            reorder: config.reorder(),
            held_back_ns: held_back_ns.unwrap_or(0),
            induced: InducedDrops::default(),
            clock_ns: 0,
            busy_until_ns: 0,
            transmitted_any: false,
            next_seq: 0,
            tx_fifo: VecDeque::with_capacity(capacity_pkts),
            queued_pkts: 0,
            queued_bytes: 0,
            on_tx: None,
            discarded: Vec::with_capacity(capacity_pkts.min(4096)),
            freed: Vec::with_capacity(capacity_pkts.min(4096)),
            delay: DelayLines::new(delays_ns, held_back_ns, capacity_pkts),
            stats: DirStats::new(delays_ns.len(), capacity_pkts),
        }
    }

    /// Drop the data segments `drops` picks, from now on (the forward direction's, once the
    /// emulator's clock has started).
    pub fn induce(&mut self, drops: InducedDrops) {
        self.induced = drops;
    }

    /// A frame arrives at `arrival_ns`.
    pub fn offer(&mut self, arrival_ns: u64, pkt: Pkt) -> Offer {
        let now_ns = arrival_ns.max(self.clock_ns);
        self.advance(now_ns);
        let c = &mut self.stats.counters;
        c.arrived_pkts += 1;
        c.arrived_bytes += u64::from(pkt.size_bytes);
        c.unmatched_pkts += u64::from(pkt.endpoint.is_none());
        if pkt.tcp_data && self.induced.take(pkt.endpoint, now_ns) {
            c.induced_drops += 1;
            return Offer::Dropped(Drop::Induced);
        }
        if self.black_hole.is_some_and(|h| h.swallows(pkt.size_bytes)) {
            c.black_hole_drops += 1;
            return Offer::Dropped(Drop::BlackHole);
        }
        if self.loss.drop_next() {
            c.random_drops += 1;
            return Offer::Dropped(Drop::Random);
        }
        if let Some(policer) = &mut self.policer {
            if !policer.conforms(now_ns, pkt.size_bytes) {
                c.policer_drops += 1;
                return Offer::Dropped(Drop::Policer);
            }
        }
        let Some(rate_bps) = self.rate_bps else {
            self.depart(pkt, now_ns, false); // no bottleneck: straight into the delay line
            return Offer::Accepted;
        };
        let offered = match self.aqm {
            Aqm::Arrival(_) => self.offer_arrival(now_ns, pkt, rate_bps),
            Aqm::Scheduled(_) => self.offer_scheduled(now_ns, pkt, rate_bps),
        };
        let c = &mut self.stats.counters;
        c.max_queue_pkts = c.max_queue_pkts.max(self.queued_pkts);
        c.max_queue_bytes = c.max_queue_bytes.max(self.queued_bytes);
        offered
    }

    /// An arrival discipline's verdict, then the hard limit; an accepted packet's departure
    /// is known now.
    fn offer_arrival(&mut self, now_ns: u64, mut pkt: Pkt, rate_bps: u64) -> Offer {
        let Aqm::Arrival(aqm) = &mut self.aqm else {
            unreachable!("called for arrival disciplines")
        };
        let packet_time_ns = tx_time_ns(pkt.size_bytes, rate_bps);
        let verdict = aqm.on_arrival(&Arrival {
            now_ns,
            backlog_pkts: self.queued_pkts,
            backlog_bytes: self.queued_bytes,
            busy_until_ns: self.busy_until_ns,
            packet_time_ns,
            ecn: pkt.ecn,
        });
        let c = &mut self.stats.counters;
        if verdict == Verdict::Drop {
            c.aqm_drops += 1;
            return Offer::Dropped(Drop::Aqm);
        }
        if !self
            .limit
            .admits(self.queued_pkts, self.queued_bytes, pkt.size_bytes)
        {
            c.queue_drops += 1;
            return Offer::Dropped(Drop::Queue);
        }
        if verdict == Verdict::Mark {
            pkt.mark_ce();
            c.aqm_marks += 1;
        }
        self.queued_pkts += 1;
        self.queued_bytes += u64::from(pkt.size_bytes);
        let back_to_back = self.transmitted_any && now_ns <= self.busy_until_ns;
        let end_ns = self.busy_until_ns.max(now_ns) + packet_time_ns;
        self.busy_until_ns = end_ns;
        self.transmitted_any = true;
        self.tx_fifo.push_back((end_ns, pkt.size_bytes));
        self.depart(pkt, end_ns, back_to_back);
        Offer::Accepted
    }

    /// A scheduled discipline takes the packet (or refuses it, or discards others to make
    /// room); an idle transmitter starts at once.
    fn offer_scheduled(&mut self, now_ns: u64, pkt: Pkt, rate_bps: u64) -> Offer {
        let over_limit = !self
            .limit
            .admits(self.queued_pkts, self.queued_bytes, pkt.size_bytes);
        let Aqm::Scheduled(queue) = &mut self.aqm else {
            unreachable!("called for scheduled disciplines")
        };
        let refused = queue.enqueue(now_ns, pkt, over_limit, &mut self.discarded);
        if let Some(cause) = refused {
            self.take_discarded();
            return Offer::Dropped(self.count_drop(cause));
        }
        // Queued before the discards are taken off: the discipline may have made room by
        // discarding the arrival itself (its buffer is then freed like the others').
        self.queued_pkts += 1;
        self.queued_bytes += u64::from(pkt.size_bytes);
        self.take_discarded();
        if self.on_tx.is_none() {
            self.start_tx(now_ns, rate_bps);
        }
        Offer::Accepted
    }

    fn count_drop(&mut self, cause: Cause) -> Drop {
        let c = &mut self.stats.counters;
        match cause {
            Cause::Overflow => {
                c.queue_drops += 1;
                Drop::Queue
            }
            Cause::Aqm => {
                c.aqm_drops += 1;
                Drop::Aqm
            }
        }
    }

    /// Take what the scheduled discipline discarded off the backlog, count it by cause and
    /// hand its buffers back.
    fn take_discarded(&mut self) {
        while let Some(d) = self.discarded.pop() {
            self.queued_pkts -= 1;
            self.queued_bytes -= u64::from(d.pkt.size_bytes);
            self.count_drop(d.cause);
            self.freed.push(d.pkt.id);
        }
    }

    /// Scheduled disciplines: the transmitter, idle at `now_ns`, takes the next packet the
    /// discipline lets through.
    fn start_tx(&mut self, now_ns: u64, rate_bps: u64) {
        let Aqm::Scheduled(queue) = &mut self.aqm else {
            return;
        };
        let next = queue.dequeue(now_ns, &mut self.discarded);
        self.take_discarded();
        let Some(out) = next else { return };
        self.stats.counters.aqm_marks += u64::from(out.marked);
        let back_to_back = self.transmitted_any && now_ns == self.busy_until_ns;
        let end_ns = now_ns + tx_time_ns(out.pkt.size_bytes, rate_bps);
        self.busy_until_ns = end_ns;
        self.transmitted_any = true;
        self.on_tx = Some(OnTx {
            end_ns,
            pkt: out.pkt,
            back_to_back,
        });
    }

    /// The packet left the bottleneck at `departure_ns`: into its endpoint's delay line, or
    /// the held-back one.
    fn depart(&mut self, pkt: Pkt, departure_ns: u64, back_to_back: bool) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let meter = &mut self.stats.backlogged;
        meter.on_depart(seq, back_to_back, pkt.size_bytes);
        let held = self.reorder.as_mut().is_some_and(Reorder::holds_next);
        self.stats.counters.reordered_pkts += u64::from(held);
        self.delay.push(InFlight {
            id: pkt.id,
            size_bytes: pkt.size_bytes,
            endpoint: pkt.endpoint,
            ce: pkt.ecn == Ecn::Ce,
            held,
            seq,
            departure_ns,
            release_ns: 0,
        });
    }

    /// Run the bottleneck up to `now_ns`: transmissions that ended leave the queue.
    pub fn advance(&mut self, now_ns: u64) {
        let now_ns = now_ns.max(self.clock_ns);
        self.clock_ns = now_ns;
        while let Some(&(end_ns, size)) = self.tx_fifo.front() {
            if end_ns > now_ns {
                break;
            }
            self.tx_fifo.pop_front();
            self.queued_pkts -= 1;
            self.queued_bytes -= u64::from(size);
        }
        let Some(rate_bps) = self.rate_bps else {
            return;
        };
        // Scheduled: each transmission end dequeues the next packet at that (virtual) instant.
        while let Some(tx) = self.on_tx {
            if tx.end_ns > now_ns {
                break;
            }
            self.on_tx = None;
            self.queued_pkts -= 1;
            self.queued_bytes -= u64::from(tx.pkt.size_bytes);
            self.depart(tx.pkt, tx.end_ns, tx.back_to_back);
            self.start_tx(tx.end_ns, rate_bps);
        }
    }

    /// A buffer the discipline discarded; the caller frees it.
    pub fn pop_freed(&mut self) -> Option<u32> {
        self.freed.pop()
    }

    /// The next frame due out by `now_ns` (call `advance` first).
    pub fn pop_due(&mut self, now_ns: u64) -> Option<InFlight> {
        self.delay.pop_due(now_ns)
    }

    /// The frame went out on the far interface at `actual_ns`.
    pub fn record_sent(&mut self, p: &InFlight, actual_ns: u64) {
        let s = &mut self.stats;
        s.counters.sent_pkts += 1;
        s.counters.sent_bytes += u64::from(p.size_bytes);
        s.counters.sent_ce_pkts += u64::from(p.ce);
        s.lateness.record(actual_ns.saturating_sub(p.release_ns));
        // The propagation delay judged is the endpoint's: a held-back packet's detour is not.
        let detour_ns = if p.held { self.held_back_ns } else { 0 };
        if let Some(e) = p.endpoint {
            let added_ns = actual_ns.saturating_sub(p.departure_ns + detour_ns);
            s.added_delay[usize::from(e)].record(added_ns);
        }
        let delay_ns = p.release_ns - p.departure_ns;
        s.backlogged
            .on_sent(p.seq, actual_ns.saturating_sub(delay_ns));
    }

    pub fn record_tx_error(&mut self) {
        self.stats.counters.tx_errors += 1;
    }

    /// Packets and bytes queued or in transmission (as of the last `advance`).
    pub fn queue(&self) -> (u64, u64) {
        (self.queued_pkts, self.queued_bytes)
    }

    /// Frames held: queued plus propagating.
    pub fn held_pkts(&self) -> u64 {
        self.queued_pkts + self.delay.len() as u64
    }

    /// What this direction measured, for STATS.json.
    pub fn report(&self, endpoints: &[Endpoint], forward: bool) -> DirReport {
        self.stats
            .report(endpoints, forward, self.held_pkts(), &self.induced)
    }
}

#[cfg(test)]
mod tests;
