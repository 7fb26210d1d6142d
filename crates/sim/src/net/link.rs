//! A link: a queue in front of a transmitter of fixed rate, then a propagation delay.
//! At its entry, a path-MTU black hole if the link has one (packets longer than its MTU vanish,
//! RFC 2923 §2.1), random loss and then, if the link has one, a token-bucket policer (an ISP's
//! rate limit: it drops what exceeds its rate before the queue sees it).
//!
//! Because a FIFO link with a fixed delay delivers in order, its packets in flight live in one
//! `VecDeque` and only the head needs an event. For drop-tail and RED, which decide as a packet
//! arrives, the whole queue is analytic (smoltcp's netsim does the same): a packet's departure
//! is known when it arrives, `tx_end = max(now, busy_until) + size/rate`, so enqueueing needs
//! no event at all. CoDel and the other scheduled disciplines decide as a packet leaves the
//! queue, which depends on arrivals not yet seen, so such a link keeps an explicit queue and a
//! transmitter driven by one `LinkTxDone` event per packet (`Offer::AcceptedStartsTx`,
//! `Link::on_tx_done`). A discipline marks CE instead of dropping where it is asked to and the
//! packet is ECN-capable; the link counts the marks.
//! A link without a rate is a pure delay line (an uncongested access or ACK path).
//!
//! A link may be down for given periods (`with_outages`): every packet offered to it then is
//! dropped (counted with the scenario's `induced_drops`), while what it already holds goes on.
//!
//! A link's rate may change at given times (`with_rate_changes`): a transmission takes the
//! rate in force when it starts, so a packet that started before a change finishes at the old
//! rate, and every later one goes at the new (a step is seen within one packet's time).

use std::collections::VecDeque;

use crate::net::loss::LossModel;
use crate::net::policer::Policer;
use crate::net::queue::{Aqm, Arrival, ArrivalAqm, Cause, Discard, Limit, Verdict};
use crate::packet::Packet;
use crate::scenario::RateChange;
use crate::time::tx_time_ns;
use tcpeval_netem::black_hole::MtuBlackHole;
use tcpeval_netem::hist::Histogram;
use tcpeval_netem::Frame;

/// Why a packet did not make it onto the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    /// The queue was full.
    Queue,
    /// The link's random loss process took it.
    Random,
    /// The AQM chose it at arrival.
    Aqm,
    /// The policer found it above its rate.
    Policer,
    /// Longer than the MTU of the link's black hole.
    BlackHole,
    /// The link was down.
    Outage,
}

/// What happened to a packet offered to a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Dropped(Drop),
    /// Accepted; the link was empty, so the caller must schedule its exit event at this time.
    AcceptedAsHead(u64),
    /// Accepted behind other packets; the head's event is already scheduled.
    Accepted,
    /// Links with a scheduled discipline only: accepted by an idle transmitter, which started sending it; the caller
    /// must schedule `Event::LinkTxDone` at this time.
    AcceptedStartsTx(u64),
}

/// What the caller must schedule after a scheduled link's transmission ended (`Link::on_tx_done`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TxDone {
    /// The next transmission ends then: schedule `Event::LinkTxDone`.
    pub next_tx_done_ns: Option<u64>,
    /// The packet just sent is the only one propagating: schedule `Event::LinkExit` then.
    pub exit_head_ns: Option<u64>,
}

#[derive(Debug, Clone, Default)]
pub struct LinkCounters {
    /// Packets accepted into the queue (a scheduled discipline may drop some later).
    pub accepted_pkts: u64,
    pub accepted_bytes: u64,
    pub queue_drops: u64,
    pub random_drops: u64,
    /// Drops chosen by the AQM: RED at arrival, CoDel at dequeue.
    pub aqm_drops: u64,
    /// Packets the AQM set CE on instead of dropping.
    pub aqm_marks: u64,
    /// Drops of packets that exceeded the policer's rate and burst.
    pub policer_drops: u64,
    /// Packets longer than the black hole's MTU.
    pub black_hole_drops: u64,
    /// Drops chosen by the scenario (`drop_at`), counted here because they happen here.
    pub induced_drops: u64,
    /// Sum over accepted packets of the time each spent queued or in transmission (ns);
    /// divided by the run time it is the mean backlog in packets (Little's law). A packet
    /// CoDel drops counts the time it waited.
    pub backlog_ns: u128,
}

#[derive(Debug, Clone)]
pub struct Link {
    pub name: String,
    /// `None` for a pure delay line.
    pub rate_bps: Option<u64>,
    pub delay_ns: u64,
    /// `None` for a pure delay line.
    limit: Option<Limit>,
    aqm: Aqm<Packet>,
    loss: LossModel,
    policer: Option<Policer>,
    black_hole: Option<MtuBlackHole>,
    /// Packets in the queue or on the wire, with the time each reaches the far end (for a
    /// scheduled discipline, only those whose transmission ended).
    in_flight: VecDeque<(u64, Packet)>,
    /// `in_flight[..transmitted]` have left the transmitter (only the propagation remains).
    transmitted: usize,
    /// Packets (bytes) queued or in transmission, as of the last `advance`/`on_tx_done`.
    queued_pkts: u64,
    queued_bytes: u64,
    /// When the transmitter frees (analytic links).
    busy_until_ns: u64,
    /// Scheduled links: the packet in transmission and when its transmission ends.
    on_tx: Option<(u64, Packet)>,
    /// Scheduled links: packets the discipline discarded in the last `offer` or
    /// `on_tx_done`, with their arrival time; reused, so steady state allocates nothing.
    discarded: Vec<Discard<Packet>>,
    discarded_bytes: u64,
    /// The last packet size serialised and its time at this link's rate: nearly every packet
    /// a link carries is the size of the one before, and `perf` put a tenth of `offer` on the
    /// division.
    last_tx: (u32, u64),
    /// The rate from time 0, and its changes in time order, `rate_changes[next_rate_change..]`
    /// still to come; `next_rate_change_ns` is the next one's time (`u64::MAX` for none), so a
    /// link whose rate is fixed pays one comparison a packet.
    first_rate_bps: u64,
    /// The periods `[start, end)` the link is down, in time order, from `next_outage` on still
    /// to come or under way; `next_outage_start_ns` is that one's start (`u64::MAX` for none).
    outages: Vec<[u64; 2]>,
    next_outage: usize,
    next_outage_start_ns: u64,
    rate_changes: Vec<RateChange>,
    next_rate_change: usize,
    next_rate_change_ns: u64,
    pub counters: LinkCounters,
}

impl Link {
    /// A link with a transmitter of `rate_bps`, a queue with the hard `limit` and the discipline
    /// `aqm`, random loss `loss` before the queue, then `delay_ns` of propagation.
    pub fn bottleneck(
        name: &str,
        rate_bps: u64,
        delay_ns: u64,
        limit: Limit,
        aqm: Aqm<Packet>,
        loss: LossModel,
    ) -> Self {
        Self::new(name, Some(rate_bps), delay_ns, Some(limit), aqm, loss)
    }

    pub fn delay_line(name: &str, delay_ns: u64) -> Self {
        Self::new(
            name,
            None,
            delay_ns,
            None,
            Aqm::drop_tail(),
            LossModel::none(),
        )
    }

    fn new(
        name: &str,
        rate_bps: Option<u64>,
        delay_ns: u64,
        limit: Option<Limit>,
        aqm: Aqm<Packet>,
        loss: LossModel,
    ) -> Self {
        Self {
            name: name.to_owned(),
            rate_bps,
            delay_ns,
            limit,
            aqm,
            loss,
            policer: None,
            black_hole: None,
            in_flight: VecDeque::new(),
            transmitted: 0,
            queued_pkts: 0,
            queued_bytes: 0,
            busy_until_ns: 0,
            on_tx: None,
            discarded: Vec::new(),
            discarded_bytes: 0,
            last_tx: (0, 0),
            first_rate_bps: rate_bps.unwrap_or(0),
            outages: Vec::new(),
            next_outage: 0,
            next_outage_start_ns: u64::MAX,
            rate_changes: Vec::new(),
            next_rate_change: 0,
            next_rate_change_ns: u64::MAX,
            counters: LinkCounters::default(),
        }
    }

    /// The link with its rate changing as `changes` say (in time order).
    pub fn with_rate_changes(mut self, changes: &[RateChange]) -> Self {
        self.rate_changes = changes.to_vec();
        self.next_rate_change_ns = changes.first().map_or(u64::MAX, |c| c.at_ns);
        self
    }

    /// The link down for each period `[start, end)` of `outages` (in time order).
    pub fn with_outages(mut self, outages: &[[u64; 2]]) -> Self {
        self.outages = outages.to_vec();
        self.next_outage_start_ns = outages.first().map_or(u64::MAX, |o| o[0]);
        self
    }

    /// Whether the link is down at `now_ns`; time only moves forward.
    #[inline]
    fn is_down(&mut self, now_ns: u64) -> bool {
        now_ns >= self.next_outage_start_ns && self.outage_at(now_ns)
    }

    #[cold]
    fn outage_at(&mut self, now_ns: u64) -> bool {
        while self
            .outages
            .get(self.next_outage)
            .is_some_and(|o| o[1] <= now_ns)
        {
            self.next_outage += 1;
        }
        let next = self.outages.get(self.next_outage);
        self.next_outage_start_ns = next.map_or(u64::MAX, |o| o[0]);
        now_ns >= self.next_outage_start_ns
    }

    /// The rate averaged from 0 to `end_ns` (> 0): what the link could carry in that time.
    pub fn mean_rate_bps(&self, end_ns: u64) -> f64 {
        if self.rate_changes.is_empty() {
            return self.first_rate_bps as f64;
        }
        let mut carried_bits_ns: u128 = 0;
        let (mut from_ns, mut rate_bps) = (0, self.first_rate_bps);
        for change in &self.rate_changes {
            let until_ns = change.at_ns.min(end_ns);
            carried_bits_ns += u128::from(rate_bps) * u128::from(until_ns.saturating_sub(from_ns));
            (from_ns, rate_bps) = (until_ns.max(from_ns), change.rate_bps);
        }
        carried_bits_ns += u128::from(rate_bps) * u128::from(end_ns.saturating_sub(from_ns));
        carried_bits_ns as f64 / end_ns as f64
    }

    /// The rate of a transmission starting at `start_ns`, applying the changes due by then.
    #[inline]
    fn rate_from(&mut self, start_ns: u64, rate_bps: u64) -> u64 {
        if start_ns < self.next_rate_change_ns {
            return rate_bps;
        }
        self.apply_rate_changes(start_ns)
    }

    #[cold]
    fn apply_rate_changes(&mut self, start_ns: u64) -> u64 {
        while let Some(change) = self.rate_changes.get(self.next_rate_change) {
            if change.at_ns > start_ns {
                break;
            }
            self.rate_bps = Some(change.rate_bps);
            self.next_rate_change += 1;
        }
        self.next_rate_change_ns = self
            .rate_changes
            .get(self.next_rate_change)
            .map_or(u64::MAX, |c| c.at_ns);
        self.last_tx = (0, 0);
        self.rate_bps.expect("only links with a rate change rate")
    }

    /// The link with `policer` at its entry, after random loss and before the queue.
    pub fn with_policer(mut self, policer: Policer) -> Self {
        self.policer = Some(policer);
        self
    }

    /// The link dropping, silently, the packets longer than `black_hole`'s MTU.
    pub fn with_black_hole(mut self, black_hole: Option<MtuBlackHole>) -> Self {
        self.black_hole = black_hole;
        self
    }

    pub fn aqm(&self) -> &Aqm<Packet> {
        &self.aqm
    }

    /// The sojourn distributions the discipline keeps, by queue.
    pub fn sojourns(&self) -> impl Iterator<Item = (&'static str, &Histogram)> {
        let kept = match &self.aqm {
            Aqm::Scheduled(q) => q.sojourns(),
            Aqm::Arrival(_) => Vec::new(),
        };
        kept.into_iter()
    }

    /// The hard queue limit; `None` for a delay line.
    pub fn limit(&self) -> Option<Limit> {
        self.limit
    }

    /// Offer a packet arriving at the link's input at `now_ns`.
    pub fn offer(&mut self, now_ns: u64, pkt: Packet) -> Offer {
        if self.is_down(now_ns) {
            self.counters.induced_drops += 1;
            return Offer::Dropped(Drop::Outage);
        }
        if self.black_hole.is_some_and(|h| h.swallows(pkt.size_bytes)) {
            self.counters.black_hole_drops += 1;
            return Offer::Dropped(Drop::BlackHole);
        }
        if self.loss.drop_next() {
            self.counters.random_drops += 1;
            return Offer::Dropped(Drop::Random);
        }
        if let Some(policer) = &mut self.policer {
            if !policer.conforms(now_ns, pkt.size_bytes) {
                self.counters.policer_drops += 1;
                return Offer::Dropped(Drop::Policer);
            }
        }
        let (Some(rate_bps), Some(limit)) = (self.rate_bps, self.limit) else {
            self.transmitted += 1; // nothing to wait for: straight onto the wire
            return self.accept_onto_wire(now_ns + self.delay_ns, pkt);
        };
        if matches!(self.aqm, Aqm::Scheduled(_)) {
            return self.offer_scheduled(now_ns, pkt, limit, rate_bps);
        }
        self.advance(now_ns);
        let rate_bps = self.rate_from(self.busy_until_ns.max(now_ns), rate_bps);
        let packet_time_ns = self.tx_time_ns(pkt.size_bytes, rate_bps);
        let verdict = self.arrival_verdict(now_ns, &pkt, packet_time_ns);
        if verdict == Verdict::Drop {
            self.counters.aqm_drops += 1;
            return Offer::Dropped(Drop::Aqm);
        }
        if !limit.admits(self.queued_pkts, self.queued_bytes, pkt.size_bytes) {
            self.counters.queue_drops += 1;
            return Offer::Dropped(Drop::Queue);
        }
        let mut pkt = pkt;
        if verdict == Verdict::Mark {
            pkt.mark_ce();
            self.counters.aqm_marks += 1;
        }
        let end_ns = self.busy_until_ns.max(now_ns) + packet_time_ns;
        self.busy_until_ns = end_ns;
        self.count_queued(pkt);
        self.counters.backlog_ns += u128::from(end_ns - now_ns);
        self.accept_onto_wire(end_ns + self.delay_ns, pkt)
    }

    /// What the arrival discipline makes of a packet arriving now; drop-tail, the studies' queue
    /// and most links of a run, decides nothing and is asked nothing.
    fn arrival_verdict(&mut self, now_ns: u64, pkt: &Packet, packet_time_ns: u64) -> Verdict {
        match &mut self.aqm {
            Aqm::Arrival(ArrivalAqm::DropTail) => Verdict::Pass,
            Aqm::Arrival(aqm) => aqm.on_arrival(&Arrival {
                now_ns,
                backlog_pkts: self.queued_pkts,
                backlog_bytes: self.queued_bytes,
                busy_until_ns: self.busy_until_ns,
                packet_time_ns,
                ecn: pkt.ecn,
            }),
            Aqm::Scheduled(_) => unreachable!("scheduled links decide as packets leave"),
        }
    }

    /// `time::tx_time_ns` at this link's rate, `rate_bps`, remembered for the last size (a
    /// change of rate forgets it, so the size alone says whether the remembered time holds).
    fn tx_time_ns(&mut self, bytes: u32, rate_bps: u64) -> u64 {
        debug_assert_eq!(Some(rate_bps), self.rate_bps);
        if self.last_tx.0 != bytes {
            self.last_tx = (bytes, tx_time_ns(bytes, rate_bps));
        }
        self.last_tx.1
    }

    fn count_queued(&mut self, pkt: Packet) {
        self.queued_pkts += 1;
        self.queued_bytes += u64::from(pkt.size_bytes);
        self.counters.accepted_pkts += 1;
        self.counters.accepted_bytes += u64::from(pkt.size_bytes);
    }

    /// Put an accepted packet in the in-order delay line, to exit at `exit_ns`.
    fn accept_onto_wire(&mut self, exit_ns: u64, pkt: Packet) -> Offer {
        if self.rate_bps.is_none() {
            self.counters.accepted_pkts += 1;
            self.counters.accepted_bytes += u64::from(pkt.size_bytes);
        }
        self.in_flight.push_back((exit_ns, pkt));
        if self.in_flight.len() == 1 {
            Offer::AcceptedAsHead(exit_ns)
        } else {
            Offer::Accepted
        }
    }

    fn offer_scheduled(&mut self, now_ns: u64, pkt: Packet, limit: Limit, rate_bps: u64) -> Offer {
        let (queued_pkts, queued_bytes) = self.scheduled_backlog(now_ns);
        let over_limit = !limit.admits(queued_pkts, queued_bytes, pkt.size_bytes);
        let Aqm::Scheduled(queue) = &mut self.aqm else {
            unreachable!("offer_scheduled is only called for scheduled links")
        };
        self.discarded.clear();
        let refused = queue.enqueue(now_ns, pkt, over_limit, &mut self.discarded);
        self.count_discarded(now_ns, 0);
        if let Some(cause) = refused {
            return Offer::Dropped(self.count_refused(cause));
        }
        self.count_queued(pkt);
        if self.on_tx.is_some() {
            return Offer::Accepted;
        }
        // An idle transmitter takes the packet at once. A discipline may still discard it on
        // the way out (DualPI2 drops classic packets with p_C whatever their sojourn); then
        // `pop_discarded` hands it out and nothing is to be scheduled.
        match self.start_tx(now_ns, rate_bps) {
            Some(end_ns) => Offer::AcceptedStartsTx(end_ns),
            None => Offer::Accepted,
        }
    }

    /// Count an arrival the scheduled discipline refused.
    fn count_refused(&mut self, cause: Cause) -> Drop {
        match cause {
            Cause::Overflow => {
                self.counters.queue_drops += 1;
                Drop::Queue
            }
            Cause::Aqm => {
                self.counters.aqm_drops += 1;
                Drop::Aqm
            }
        }
    }

    /// Scheduled links: the transmission that was to end at `now_ns` has ended. The packet
    /// starts propagating and the transmitter dequeues the next one, which the discipline may
    /// drop (with more behind it); `pop_discarded` hands those out until the next call.
    pub fn on_tx_done(&mut self, now_ns: u64) -> TxDone {
        let rate_bps = self
            .rate_bps
            .expect("only scheduled links transmit on events");
        self.discarded.clear();
        let (end_ns, pkt) = self.on_tx.take().expect("a tx-done event implies a packet");
        debug_assert_eq!(end_ns, now_ns);
        self.queued_pkts -= 1;
        self.queued_bytes -= u64::from(pkt.size_bytes);
        self.in_flight.push_back((now_ns + self.delay_ns, pkt));
        self.transmitted += 1;
        TxDone {
            next_tx_done_ns: self.start_tx(now_ns, rate_bps),
            exit_head_ns: (self.in_flight.len() == 1).then_some(now_ns + self.delay_ns),
        }
    }

    /// Dequeue from the discipline and start transmitting; returns when the transmission ends.
    fn start_tx(&mut self, now_ns: u64, rate_bps: u64) -> Option<u64> {
        let Aqm::Scheduled(queue) = &mut self.aqm else {
            unreachable!("only scheduled links keep an explicit queue")
        };
        let first_new = self.discarded.len();
        let next = queue.dequeue(now_ns, &mut self.discarded);
        self.count_discarded(now_ns, first_new);
        let out = next?;
        self.counters.aqm_marks += u64::from(out.marked);
        let rate_bps = self.rate_from(now_ns, rate_bps);
        let end_ns = now_ns + self.tx_time_ns(out.pkt.size_bytes, rate_bps);
        self.counters.backlog_ns += u128::from(end_ns - out.arrival_ns);
        self.on_tx = Some((end_ns, out.pkt));
        Some(end_ns)
    }

    /// Take the packets the discipline discarded from `discarded[first..]` off the backlog.
    fn count_discarded(&mut self, now_ns: u64, first: usize) {
        for d in &self.discarded[first..] {
            let bytes = u64::from(d.pkt.size_bytes);
            self.queued_pkts -= 1;
            self.queued_bytes -= bytes;
            self.discarded_bytes += bytes;
            match d.cause {
                Cause::Overflow => self.counters.queue_drops += 1,
                Cause::Aqm => self.counters.aqm_drops += 1,
            }
            self.counters.backlog_ns += u128::from(now_ns - d.arrival_ns);
        }
    }

    /// Take one of the packets the discipline discarded in the last `offer` or `on_tx_done`
    /// (any kind), so the caller can count them; in no particular order. Undrained ones are
    /// forgotten at the next call.
    pub fn pop_discarded(&mut self) -> Option<Packet> {
        self.discarded.pop().map(|d| d.pkt)
    }

    /// Remove the head packet, which has reached the far end. Returns it and, if another
    /// packet follows, the time that one exits.
    pub fn pop(&mut self) -> (Packet, Option<u64>) {
        let (_, pkt) = self
            .in_flight
            .pop_front()
            .expect("a link exit event implies a packet");
        if self.transmitted > 0 {
            self.transmitted -= 1;
        } else {
            // It finished transmitting after the last `advance`; account for it now.
            self.queued_pkts -= 1;
            self.queued_bytes -= u64::from(pkt.size_bytes);
        }
        (pkt, self.in_flight.front().map(|&(t, _)| t))
    }

    /// The packet that exits `n` places after the next one, if any.
    pub fn upcoming(&self, n: usize) -> Option<&Packet> {
        self.in_flight.get(n).map(|(_, pkt)| pkt)
    }

    /// Packets queued or being transmitted at `now_ns`.
    pub fn backlog_pkts(&mut self, now_ns: u64) -> u64 {
        self.advance(now_ns);
        self.scheduled_backlog(now_ns).0
    }

    /// Bytes that have finished transmission by `now_ns`.
    pub fn tx_bytes(&mut self, now_ns: u64) -> u64 {
        self.advance(now_ns);
        let queued_bytes = self.scheduled_backlog(now_ns).1;
        self.counters.accepted_bytes - queued_bytes - self.discarded_bytes
    }

    /// The backlog at `now_ns`, counting a scheduled transmission that ends at `now_ns` as done
    /// even if its event has not run yet (as `advance` does for analytic links).
    fn scheduled_backlog(&self, now_ns: u64) -> (u64, u64) {
        match self.on_tx {
            Some((end_ns, p)) if end_ns <= now_ns => (
                self.queued_pkts - 1,
                self.queued_bytes - u64::from(p.size_bytes),
            ),
            _ => (self.queued_pkts, self.queued_bytes),
        }
    }

    /// The packets accepted and not yet at the far end or dropped, oldest first.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        let waiting = match &self.aqm {
            Aqm::Scheduled(q) => Some(q.packets()),
            Aqm::Arrival(_) => None,
        };
        self.in_flight
            .iter()
            .chain(self.on_tx.iter())
            .map(|(_, p)| p)
            .chain(waiting.into_iter().flatten())
    }

    /// Count the packets whose transmission ended by `now_ns` as gone from the queue
    /// (analytic links; a scheduled link's `in_flight` holds only transmitted packets).
    fn advance(&mut self, now_ns: u64) {
        while let Some(&(exit_ns, pkt)) = self.in_flight.get(self.transmitted) {
            if exit_ns - self.delay_ns > now_ns {
                break;
            }
            self.queued_pkts -= 1;
            self.queued_bytes -= u64::from(pkt.size_bytes);
            self.transmitted += 1;
        }
    }

    pub fn drops(&self) -> u64 {
        let c = &self.counters;
        c.queue_drops
            + c.random_drops
            + c.aqm_drops
            + c.policer_drops
            + c.induced_drops
            + c.black_hole_drops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::{CodelParams, DualPi2Params, RedParams};
    use crate::packet::Kind;

    fn link(limit_pkts: u64) -> Link {
        let limit = Limit::Packets(limit_pkts);
        Link::bottleneck(
            "b",
            1_000_000_000,
            5_000,
            limit,
            Aqm::drop_tail(),
            LossModel::none(),
        )
    }

    #[test]
    fn back_to_back_packets_serialise_then_propagate() {
        let mut l = link(10);
        assert_eq!(
            l.offer(0, Packet::data(0, 0, 1500)),
            Offer::AcceptedAsHead(12_000 + 5_000)
        );
        assert_eq!(l.offer(0, Packet::data(0, 1, 1500)), Offer::Accepted);
        assert_eq!(l.backlog_pkts(0), 2);
        assert_eq!(l.backlog_pkts(12_000), 1);
        let (p, next) = l.pop();
        assert_eq!((p.seq, next), (0, Some(24_000 + 5_000)));
        assert_eq!(l.tx_bytes(24_000), 3000);
    }

    #[test]
    fn packets_of_mixed_sizes_each_take_their_own_time() {
        // 1 Gb/s: 1500 B in 12 µs, 52 B in 416 ns; the time remembered for one size is not
        // reused for another.
        let mut l = link(10);
        l.offer(0, Packet::data(0, 0, 1500));
        l.offer(0, Packet::ack(0, 0, 52));
        l.offer(0, Packet::data(0, 1, 1500));
        l.offer(0, Packet::data(0, 2, 1500));
        let exits: Vec<_> = (0..3).map(|_| l.pop().1).collect();
        let after = |tx_ns: u64| Some(tx_ns + 5_000);
        assert_eq!(exits, [after(12_416), after(24_416), after(36_416)]);
    }

    #[test]
    fn a_transmission_takes_the_rate_in_force_when_it_starts() {
        // 1 Gb/s, then 100 Mb/s from 20 µs, then 1 Gb/s from 140 µs: 1500 B take 12 µs, then
        // 120 µs, then 12 µs again. The second packet starts at 12 µs, before the first change.
        let changes = [
            RateChange {
                at_ns: 20_000,
                rate_bps: 100_000_000,
            },
            RateChange {
                at_ns: 140_000,
                rate_bps: 1_000_000_000,
            },
        ];
        let mut l = link(10).with_rate_changes(&changes);
        for seq in 0..4 {
            l.offer(0, Packet::data(0, seq, 1500));
        }
        let exits: Vec<_> = (0..3).map(|_| l.pop().1).collect();
        let after = |tx_ns: u64| Some(tx_ns + 5_000);
        assert_eq!(exits, [after(24_000), after(144_000), after(156_000)]);
        // Over 200 µs: 20 µs at 1 Gb/s, 120 µs at 100 Mb/s, 60 µs at 1 Gb/s.
        assert_eq!(l.mean_rate_bps(200_000), 460_000_000.0);
    }

    #[test]
    fn a_link_drops_what_arrives_while_it_is_down() {
        let mut l = link(10).with_outages(&[[100, 200], [300, 400]]);
        let dropped =
            |l: &mut Link, t| l.offer(t, Packet::ack(0, t, 52)) == Offer::Dropped(Drop::Outage);
        let down: Vec<bool> = [0, 100, 199, 200, 350, 400]
            .iter()
            .map(|&t| dropped(&mut l, t))
            .collect();
        assert_eq!(down, [false, true, true, false, true, false]);
        assert_eq!(l.counters.induced_drops, 3);
    }

    #[test]
    fn a_full_queue_drops_the_arrival() {
        let mut l = link(2);
        l.offer(0, Packet::data(0, 0, 1500));
        l.offer(0, Packet::data(0, 1, 1500));
        assert_eq!(
            l.offer(0, Packet::data(0, 2, 1500)),
            Offer::Dropped(Drop::Queue)
        );
        // Once the first has been sent there is room again.
        assert!(matches!(
            l.offer(12_000, Packet::data(0, 3, 1500)),
            Offer::Accepted
        ));
        assert_eq!(l.drops(), 1);
    }

    #[test]
    fn mean_backlog_follows_littles_law() {
        let mut l = link(10);
        l.offer(0, Packet::data(0, 0, 1500));
        l.offer(0, Packet::data(0, 1, 1500));
        // First packet is in the system 12 µs, the second 24 µs: over 24 µs the mean is 1.5.
        assert_eq!(l.counters.backlog_ns, 36_000);
    }

    #[test]
    fn the_policer_drops_before_the_queue_and_counts_apart() {
        // A 3000-byte bucket at 12 Mb/s (1500 B per ms) in front of a 1 Gb/s link.
        let mut l = link(10).with_policer(Policer::new(12_000_000, 3000));
        let offers: Vec<Offer> = (0..3)
            .map(|i| l.offer(0, Packet::data(0, i, 1500)))
            .collect();
        assert_eq!(offers[2], Offer::Dropped(Drop::Policer));
        // A millisecond refills one packet's credit; the queue had room all along.
        assert_eq!(
            l.offer(1_000_000, Packet::data(0, 3, 1500)),
            Offer::Accepted
        );
        assert_eq!((l.counters.policer_drops, l.counters.queue_drops), (1, 0));
        assert_eq!(l.drops(), 1);
    }

    #[test]
    fn a_black_hole_drops_only_what_exceeds_its_mtu_and_counts_apart() {
        let mut l = link(10).with_black_hole(Some(MtuBlackHole::new(1400)));
        let full = l.offer(0, Packet::data(0, 0, 1500));
        assert_eq!(full, Offer::Dropped(Drop::BlackHole));
        assert_eq!(
            l.offer(0, Packet::data(0, 1, 1400)),
            Offer::AcceptedAsHead(l.delay_ns + 11_200)
        );
        assert_eq!(
            (l.counters.black_hole_drops, l.counters.queue_drops),
            (1, 0)
        );
        assert_eq!(l.drops(), 1);
    }

    #[test]
    fn a_delay_line_keeps_order_and_never_queues() {
        let mut l = Link::delay_line("d", 1_000);
        assert_eq!(
            l.offer(10, Packet::ack(0, 1, 52)),
            Offer::AcceptedAsHead(1_010)
        );
        assert_eq!(l.offer(20, Packet::ack(0, 2, 52)), Offer::Accepted);
        assert_eq!(l.backlog_pkts(20), 0);
        assert_eq!(l.pop().1, Some(1_020));
    }

    fn red_link() -> Link {
        // weight 1: avg is the backlog found at arrival, so the thresholds act directly.
        let params = RedParams {
            min_th_pkts: 1.0,
            max_th_pkts: 2.0,
            max_p: 0.1,
            weight: 1.0,
            gentle: false,
            ecn: false,
            harddrop: false,
        };
        let aqm = Aqm::red(params, 1);
        Link::bottleneck(
            "r",
            1_000_000_000,
            0,
            Limit::Packets(10),
            aqm,
            LossModel::none(),
        )
    }

    #[test]
    fn red_drops_at_arrival_and_forgets_after_idle() {
        let mut l = red_link();
        // Backlog 0 and 1: avg 0 then 1 (p_b = 0); backlog 2 reaches max_th: dropped.
        assert_eq!(
            l.offer(0, Packet::data(0, 0, 1500)),
            Offer::AcceptedAsHead(12_000)
        );
        assert_eq!(l.offer(0, Packet::data(0, 1, 1500)), Offer::Accepted);
        assert_eq!(
            l.offer(0, Packet::data(0, 2, 1500)),
            Offer::Dropped(Drop::Aqm)
        );
        assert_eq!((l.counters.aqm_drops, l.drops()), (1, 1));
        // Idle from 24 µs: the average decays to (1 − 1)^m · 2 = 0.
        assert_eq!(l.offer(100_000, Packet::data(0, 3, 1500)), Offer::Accepted);
        let Aqm::Arrival(ArrivalAqm::Red(red)) = l.aqm() else {
            unreachable!()
        };
        assert_eq!(red.avg_pkts(), 0.0);
    }

    const MS: u64 = 1_000_000;
    /// 10 Mb/s: a 1500-byte packet takes 1.2 ms.
    const RATE_BPS: u64 = 10_000_000;
    const DELAY_NS: u64 = 2 * MS;

    fn codel_link() -> Link {
        let aqm = Aqm::codel(CodelParams::dropping(5 * MS, 100 * MS));
        let limit = Limit::Packets(10_000);
        Link::bottleneck("c", RATE_BPS, DELAY_NS, limit, aqm, LossModel::none())
    }

    /// What happened to the packets of `drive`.
    struct Run {
        /// (arrival, exit) of each delivered packet.
        delivered: Vec<(u64, u64)>,
        data_drops: u64,
    }

    /// Drive a CoDel link as the simulator would, with packet `i` arriving at `arrivals[i]`,
    /// until every packet has left or been dropped.
    fn drive(l: &mut Link, arrivals: &[u64]) -> Run {
        let (mut tx_done, mut exit) = (None::<u64>, None::<u64>);
        let mut next = 0;
        let mut run = Run {
            delivered: Vec::new(),
            data_drops: 0,
        };
        loop {
            let arrival = arrivals.get(next).copied();
            let t = [arrival, tx_done, exit].into_iter().flatten().min();
            let Some(t) = t else { break };
            if exit == Some(t) {
                let (p, n) = l.pop();
                run.delivered.push((arrivals[p.seq as usize], t));
                exit = n;
            } else if tx_done == Some(t) {
                let done = l.on_tx_done(t);
                tx_done = done.next_tx_done_ns;
                if done.exit_head_ns.is_some() {
                    assert_eq!(exit, None);
                    exit = done.exit_head_ns;
                }
                while let Some(p) = l.pop_discarded() {
                    run.data_drops += u64::from(p.kind == Kind::Data);
                }
            } else {
                match l.offer(t, Packet::data(0, next as u64, 1500)) {
                    Offer::AcceptedStartsTx(end) => tx_done = Some(end),
                    Offer::Accepted => {}
                    other => panic!("{other:?}"),
                }
                while let Some(p) = l.pop_discarded() {
                    run.data_drops += u64::from(p.kind == Kind::Data);
                }
                next += 1;
            }
        }
        run
    }

    #[test]
    fn codel_holds_an_overloaded_queue_near_target() {
        // Unresponsive arrivals 5% above the link rate for 30 s: without CoDel the sojourn
        // would grow to 1.4 s. After the first 5 s the mean sojourn stays between target and
        // 3·target (7.9 ms) and the worst is under 4·target (10.2 ms). (A heavier unresponsive
        // overload, 20% and more, outruns CoDel's slowly growing drop rate: CoDel is built to
        // signal responsive senders.)
        let gap_ns = 1_200_000 * 100 / 105;
        let arrivals: Vec<u64> = (0..30_000 * MS / gap_ns).map(|i| i * gap_ns).collect();
        let mut l = codel_link();
        let run = drive(&mut l, &arrivals);
        let sojourns: Vec<u64> = run
            .delivered
            .iter()
            .filter(|&&(a, _)| a > 5_000 * MS)
            .map(|&(a, e)| e - DELAY_NS - 1_200_000 - a)
            .collect();
        let mean_ns = sojourns.iter().sum::<u64>() / sojourns.len() as u64;
        assert!((5 * MS..=15 * MS).contains(&mean_ns), "{mean_ns}");
        assert!(sojourns.iter().all(|&s| s < 20 * MS));
        // Conservation and counters.
        let n = arrivals.len() as u64;
        assert_eq!(run.delivered.len() as u64 + run.data_drops, n);
        assert_eq!(l.counters.aqm_drops, run.data_drops);
        assert_eq!(l.drops(), run.data_drops);
        // The excess, 1 − 1/1.05 = 4.76% of the arrivals, is what CoDel must drop.
        let drop_share = run.data_drops as f64 / n as f64;
        assert!((0.045..0.048).contains(&drop_share), "{drop_share}");
        assert_eq!(l.tx_bytes(u64::MAX / 2), 1500 * run.delivered.len() as u64);
    }

    #[test]
    fn a_scheduled_discipline_may_discard_what_an_idle_transmitter_takes() {
        // DualPI2 drops classic packets with p_C = p'² whatever their sojourn, so a packet
        // arriving at an idle link can be dropped on its way to the transmitter: 5 s of
        // unresponsive overload raise p', then sparse arrivals find the link idle while p'
        // decays. Every packet is delivered or dropped, none twice.
        let aqm = Aqm::dualpi2(DualPi2Params::default(), 3);
        let mut l = Link::bottleneck(
            "d",
            RATE_BPS,
            DELAY_NS,
            Limit::Packets(10_000),
            aqm,
            LossModel::none(),
        );
        let gap_ns = 1_200_000 * 100 / 120;
        let overload = (0..5_000 * MS / gap_ns).map(|i| i * gap_ns);
        let sparse = (0..1_000).map(|i| 5_000 * MS + i * 10 * MS);
        let arrivals: Vec<u64> = overload.chain(sparse).collect();
        let run = drive(&mut l, &arrivals);
        let sparse_delivered = run
            .delivered
            .iter()
            .filter(|&&(a, _)| a >= 5_000 * MS)
            .count();
        let sparse_drops = 1_000 - sparse_delivered;
        assert_eq!(
            run.delivered.len() as u64 + run.data_drops,
            arrivals.len() as u64
        );
        assert_eq!(
            l.counters.aqm_drops + l.counters.queue_drops,
            run.data_drops
        );
        assert!(
            sparse_drops > 0,
            "no drops of packets that found the link idle"
        );
    }

    #[test]
    fn codel_drops_nothing_below_target() {
        // Bursts of 4 packets every 10 ms: the last of a burst waits 3·1.2 = 3.6 ms < 5 ms.
        let arrivals: Vec<u64> = (0..4_000).map(|i| i / 4 * 10 * MS).collect();
        let mut l = codel_link();
        let run = drive(&mut l, &arrivals);
        assert_eq!((run.data_drops, l.drops()), (0, 0));
        assert_eq!(run.delivered.len(), 4_000);
    }

    #[test]
    fn a_codel_link_transmits_on_events_and_accounts_its_backlog() {
        let mut l = codel_link();
        // An idle transmitter starts at once: tx ends 1.2 ms later.
        assert_eq!(
            l.offer(0, Packet::data(0, 0, 1500)),
            Offer::AcceptedStartsTx(1_200_000)
        );
        assert_eq!(l.offer(0, Packet::data(0, 1, 1500)), Offer::Accepted);
        assert_eq!(l.backlog_pkts(0), 2);
        assert_eq!(l.packets().count(), 2);
        // Before its event runs, a transmission that has ended counts as done.
        assert_eq!(l.backlog_pkts(1_200_000), 1);
        assert_eq!(l.tx_bytes(1_200_000), 1500);
        let done = l.on_tx_done(1_200_000);
        assert_eq!(
            done,
            TxDone {
                next_tx_done_ns: Some(2_400_000),
                exit_head_ns: Some(1_200_000 + DELAY_NS),
            }
        );
        assert_eq!(l.packets().count(), 2);
        let done = l.on_tx_done(2_400_000);
        assert_eq!(done, TxDone::default()); // idle, and the first packet still propagates
        assert_eq!(
            l.pop(),
            (Packet::data(0, 0, 1500), Some(2_400_000 + DELAY_NS))
        );
        assert_eq!(l.backlog_pkts(2_400_000), 0);
        // Little's law: 1.2 ms + 2.4 ms in the system.
        assert_eq!(l.counters.backlog_ns, 3_600_000);
    }
}
