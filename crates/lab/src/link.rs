//! One direction of the emulated path, sans-IO: pure functions of (time, packet) that decide a
//! frame's fate and when it may leave. The I/O loop feeds it kernel receive timestamps and the
//! tests a simulated clock.
//!
//! Order as in the simulator's link (`crates/sim/src/net/link.rs`): random loss → the token-bucket
//! policer, if any → RED and the hard limit at arrival → a FIFO served at `rate_bps` (a packet
//! starts at max(its arrival, the previous departure); CoDel decides as a packet leaves the queue)
//! → the propagation delay of the packet's endpoint. For drop-tail and RED the departure is known
//! at arrival (the analytic FIFO), so the packet goes straight into its delay line; CoDel keeps an
//! explicit queue and a virtual transmitter that `advance` runs up to the present.

use std::collections::VecDeque;

use tcpeval_netem::loss::LossModel;
use tcpeval_netem::policer::Policer;
use tcpeval_netem::queue::{Aqm, Limit};
use tcpeval_netem::Frame;

use crate::config::DirectionConfig;
use crate::delay::{DelayLines, InFlight};
use crate::stats::DirStats;

/// A frame as the link sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pkt {
    /// The frame buffer holding it.
    pub id: u32,
    /// The IP packet's length (the frame without its Ethernet header), as the simulator counts.
    pub size_bytes: u32,
    /// Index into the config's endpoints; `None` when unmatched.
    pub endpoint: Option<u16>,
}

impl Frame for Pkt {
    fn size_bytes(&self) -> u32 {
        self.size_bytes
    }
}

/// Why a frame was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    Random,
    Policer,
    Queue,
    Aqm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Accepted,
    /// The caller frees the frame's buffer.
    Dropped(Drop),
}

/// CoDel's packet in (virtual) transmission.
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
    /// The latest time processed; an arrival stamped earlier (read late) is moved up to it so
    /// virtual time never runs backwards.
    clock_ns: u64,
    /// When the last transmission started so far ends (its departure).
    busy_until_ns: u64,
    transmitted_any: bool,
    next_seq: u64,
    /// Drop-tail/RED: (departure, size) of the packets queued or in transmission.
    tx_fifo: VecDeque<(u64, u32)>,
    /// Packets (bytes) queued or in transmission.
    queued_pkts: u64,
    queued_bytes: u64,
    on_tx: Option<OnTx>,
    /// CoDel's drops at dequeue (reused buffer).
    codel_dropped: Vec<(u64, Pkt)>,
    /// Buffers of frames CoDel dropped, for the caller to free.
    freed: Vec<u32>,
    delay: DelayLines,
    pub stats: DirStats,
}

impl Link {
    /// `delays_ns[i]`: endpoint `i`'s delay in this direction; `capacity_pkts`: the most
    /// frames the emulator can hold (its buffer pool).
    pub fn new(config: &DirectionConfig, delays_ns: &[u64], capacity_pkts: usize) -> Self {
        Self {
            rate_bps: config.rate_bps,
            limit: config.limit(),
            aqm: config.aqm(),
            loss: config.loss(),
            policer: config.policer(),
            clock_ns: 0,
            busy_until_ns: 0,
            transmitted_any: false,
            next_seq: 0,
            tx_fifo: VecDeque::with_capacity(capacity_pkts),
            queued_pkts: 0,
            queued_bytes: 0,
            on_tx: None,
            codel_dropped: Vec::with_capacity(capacity_pkts.min(4096)),
            freed: Vec::with_capacity(capacity_pkts.min(4096)),
            delay: DelayLines::new(delays_ns, capacity_pkts),
            stats: DirStats::new(delays_ns.len(), capacity_pkts),
        }
    }

    /// A frame arrives at `arrival_ns`.
    pub fn offer(&mut self, arrival_ns: u64, pkt: Pkt) -> Offer {
        let now_ns = arrival_ns.max(self.clock_ns);
        self.advance(now_ns);
        let c = &mut self.stats.counters;
        c.arrived_pkts += 1;
        c.arrived_bytes += u64::from(pkt.size_bytes);
        c.unmatched_pkts += u64::from(pkt.endpoint.is_none());
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
        if let Some(drop) = self.admission_drop(now_ns, pkt, rate_bps) {
            return Offer::Dropped(drop);
        }
        self.queued_pkts += 1;
        self.queued_bytes += u64::from(pkt.size_bytes);
        let c = &mut self.stats.counters;
        c.max_queue_pkts = c.max_queue_pkts.max(self.queued_pkts);
        c.max_queue_bytes = c.max_queue_bytes.max(self.queued_bytes);
        if let Aqm::Codel(codel) = &mut self.aqm {
            codel.enqueue(now_ns, pkt);
            if self.on_tx.is_none() {
                self.start_tx(now_ns, rate_bps);
            }
        } else {
            self.serve_analytic(now_ns, pkt, rate_bps);
        }
        Offer::Accepted
    }

    /// RED (at arrival), then the hard limit; counts the drop.
    fn admission_drop(&mut self, now_ns: u64, pkt: Pkt, rate_bps: u64) -> Option<Drop> {
        if let Aqm::Red(red) = &mut self.aqm {
            // An empty link has been idle since its last transmission ended.
            let idle_since_ns = (self.queued_pkts == 0).then_some(self.busy_until_ns);
            let packet_time_ns = tx_time_ns(pkt.size_bytes, rate_bps);
            if red.drops_arrival(now_ns, self.queued_pkts, idle_since_ns, packet_time_ns) {
                self.stats.counters.aqm_drops += 1;
                return Some(Drop::Aqm);
            }
        }
        if !self
            .limit
            .admits(self.queued_pkts, self.queued_bytes, pkt.size_bytes)
        {
            self.stats.counters.queue_drops += 1;
            return Some(Drop::Queue);
        }
        None
    }

    /// Drop-tail/RED: the departure is known now.
    fn serve_analytic(&mut self, now_ns: u64, pkt: Pkt, rate_bps: u64) {
        let back_to_back = self.transmitted_any && now_ns <= self.busy_until_ns;
        let start_ns = self.busy_until_ns.max(now_ns);
        let end_ns = start_ns + tx_time_ns(pkt.size_bytes, rate_bps);
        self.busy_until_ns = end_ns;
        self.transmitted_any = true;
        self.tx_fifo.push_back((end_ns, pkt.size_bytes));
        self.depart(pkt, end_ns, back_to_back);
    }

    /// CoDel: the transmitter, idle at `now_ns`, takes the next packet CoDel lets through.
    fn start_tx(&mut self, now_ns: u64, rate_bps: u64) {
        let Aqm::Codel(codel) = &mut self.aqm else {
            return;
        };
        let next = codel.dequeue(now_ns, &mut self.codel_dropped);
        for (_, p) in self.codel_dropped.drain(..) {
            self.queued_pkts -= 1;
            self.queued_bytes -= u64::from(p.size_bytes);
            self.stats.counters.aqm_drops += 1;
            self.freed.push(p.id);
        }
        let Some((_, pkt)) = next else { return };
        let back_to_back = self.transmitted_any && now_ns == self.busy_until_ns;
        let end_ns = now_ns + tx_time_ns(pkt.size_bytes, rate_bps);
        self.busy_until_ns = end_ns;
        self.transmitted_any = true;
        self.on_tx = Some(OnTx {
            end_ns,
            pkt,
            back_to_back,
        });
    }

    /// The packet left the bottleneck at `departure_ns`: into its endpoint's delay line.
    fn depart(&mut self, pkt: Pkt, departure_ns: u64, back_to_back: bool) {
        let seq = self.next_seq;
        self.next_seq += 1;
        let meter = &mut self.stats.backlogged;
        meter.on_depart(seq, back_to_back, pkt.size_bytes);
        self.delay.push(InFlight {
            id: pkt.id,
            size_bytes: pkt.size_bytes,
            endpoint: pkt.endpoint,
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
        // CoDel: each transmission end dequeues the next packet at that (virtual) instant.
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

    /// A buffer CoDel dropped; the caller frees it.
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
        s.lateness.record(actual_ns.saturating_sub(p.release_ns));
        if let Some(e) = p.endpoint {
            s.added_delay[usize::from(e)].record(actual_ns.saturating_sub(p.departure_ns));
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
}

#[cfg(test)]
mod tests;
