//! A link: a queue in front of a transmitter of fixed rate, then a propagation delay.
//!
//! Because a FIFO link with a fixed delay delivers in order, its packets in flight live in one
//! `VecDeque` and only the head needs an event. For drop-tail the whole queue is analytic
//! (smoltcp's netsim does the same): a packet's departure is known when it arrives,
//! `tx_end = max(now, busy_until) + size/rate`, so enqueueing needs no event at all.
//! A link without a rate is a pure delay line (an uncongested access or ACK path).

use std::collections::VecDeque;

use crate::net::loss::BernoulliLoss;
use crate::net::queue::DropTail;
use crate::packet::Packet;
use crate::time::tx_time_ns;

/// Why a packet did not make it onto the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    /// The queue was full.
    Queue,
    /// The link's random loss process took it.
    Random,
}

/// What happened to a packet offered to a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    Dropped(Drop),
    /// Accepted; the link was empty, so the caller must schedule its exit event at this time.
    AcceptedAsHead(u64),
    /// Accepted behind other packets; the head's event is already scheduled.
    Accepted,
}

#[derive(Debug, Clone, Default)]
pub struct LinkCounters {
    pub accepted_pkts: u64,
    pub accepted_bytes: u64,
    pub queue_drops: u64,
    pub random_drops: u64,
    /// Drops chosen by the scenario (`drop_at`), counted here because they happen here.
    pub induced_drops: u64,
    /// Sum over accepted packets of the time each spent queued or in transmission (ns);
    /// divided by the run time it is the mean backlog in packets (Little's law).
    pub backlog_ns: u128,
}

#[derive(Debug, Clone)]
pub struct Link {
    pub name: String,
    /// `None` for a pure delay line.
    pub rate_bps: Option<u64>,
    pub delay_ns: u64,
    queue: Option<DropTail>,
    loss: BernoulliLoss,
    /// Packets in the queue or on the wire, with the time each reaches the far end.
    in_flight: VecDeque<(u64, Packet)>,
    /// `in_flight[..transmitted]` have left the transmitter (only the propagation remains).
    transmitted: usize,
    queued_pkts: u64,
    queued_bytes: u64,
    busy_until_ns: u64,
    pub counters: LinkCounters,
}

impl Link {
    pub fn bottleneck(
        name: &str,
        rate_bps: u64,
        delay_ns: u64,
        queue: DropTail,
        loss: BernoulliLoss,
    ) -> Self {
        Self::new(name, Some(rate_bps), delay_ns, Some(queue), loss)
    }

    pub fn delay_line(name: &str, delay_ns: u64) -> Self {
        Self::new(name, None, delay_ns, None, BernoulliLoss::new(0.0, 0))
    }

    fn new(
        name: &str,
        rate_bps: Option<u64>,
        delay_ns: u64,
        queue: Option<DropTail>,
        loss: BernoulliLoss,
    ) -> Self {
        Self {
            name: name.to_owned(),
            rate_bps,
            delay_ns,
            queue,
            loss,
            in_flight: VecDeque::new(),
            transmitted: 0,
            queued_pkts: 0,
            queued_bytes: 0,
            busy_until_ns: 0,
            counters: LinkCounters::default(),
        }
    }

    /// Offer a packet arriving at the link's input at `now_ns`.
    pub fn offer(&mut self, now_ns: u64, pkt: Packet) -> Offer {
        if self.loss.drop_next() {
            self.counters.random_drops += 1;
            return Offer::Dropped(Drop::Random);
        }
        let tx_end_ns = match (self.rate_bps, self.queue) {
            (Some(rate_bps), Some(queue)) => {
                self.advance(now_ns);
                if !queue.admits(self.queued_pkts, self.queued_bytes, pkt.size_bytes) {
                    self.counters.queue_drops += 1;
                    return Offer::Dropped(Drop::Queue);
                }
                let end = self.busy_until_ns.max(now_ns) + tx_time_ns(pkt.size_bytes, rate_bps);
                self.busy_until_ns = end;
                self.queued_pkts += 1;
                self.queued_bytes += u64::from(pkt.size_bytes);
                self.counters.backlog_ns += u128::from(end - now_ns);
                end
            }
            _ => {
                self.transmitted += 1; // nothing to wait for: straight onto the wire
                now_ns
            }
        };
        self.counters.accepted_pkts += 1;
        self.counters.accepted_bytes += u64::from(pkt.size_bytes);
        let exit_ns = tx_end_ns + self.delay_ns;
        self.in_flight.push_back((exit_ns, pkt));
        if self.in_flight.len() == 1 {
            Offer::AcceptedAsHead(exit_ns)
        } else {
            Offer::Accepted
        }
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

    /// Packets queued or being transmitted at `now_ns`.
    pub fn backlog_pkts(&mut self, now_ns: u64) -> u64 {
        self.advance(now_ns);
        self.queued_pkts
    }

    /// Bytes that have finished transmission by `now_ns`.
    pub fn tx_bytes(&mut self, now_ns: u64) -> u64 {
        self.advance(now_ns);
        self.counters.accepted_bytes - self.queued_bytes
    }

    /// The packets accepted and not yet at the far end, oldest first.
    pub fn packets(&self) -> impl Iterator<Item = &Packet> {
        self.in_flight.iter().map(|(_, p)| p)
    }

    /// Count the packets whose transmission ended by `now_ns` as gone from the queue.
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
        c.queue_drops + c.random_drops + c.induced_drops
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::net::queue::Limit;

    fn link(limit_pkts: u64) -> Link {
        let q = DropTail {
            limit: Limit::Packets(limit_pkts),
        };
        Link::bottleneck("b", 1_000_000_000, 5_000, q, BernoulliLoss::new(0.0, 0))
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
}
