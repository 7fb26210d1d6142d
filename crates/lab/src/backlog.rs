//! The rate check: how fast did packets actually leave while the bottleneck was backlogged?
//!
//! A packet is back-to-back when its virtual transmission started the moment the previous
//! one's ended (the queue was never empty between them). For each such packet, the real time
//! between its transmission and its predecessor's is what the emulator actually spent on its
//! bytes; summed over all of them, `bytes·8e9/ns` is the delivered rate while backlogged and
//! should equal `rate_bps`.
//!
//! Packets of different endpoints leave the delay lines in a different order than they left
//! the queue, so "real time" is taken on the departure side: a packet's effective departure is
//! its actual transmit time minus its endpoint's delay. A pair (predecessor, packet) is counted
//! when the later of the two is sent, so only a ring of recent departures is kept.

use serde::Serialize;

#[derive(Debug, Clone, Copy)]
struct Entry {
    /// Departure sequence number; `u64::MAX` for an empty slot.
    seq: u64,
    back_to_back: bool,
    sent: bool,
    size_bytes: u32,
    effective_departure_ns: u64,
}

const EMPTY: Entry = Entry {
    seq: u64::MAX,
    back_to_back: false,
    sent: false,
    size_bytes: 0,
    effective_departure_ns: 0,
};

#[derive(Debug, Clone)]
pub struct BackloggedMeter {
    ring: Vec<Entry>,
    mask: u64,
    total: Backlogged,
}

/// STATS.json's `backlogged`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Backlogged {
    pub bytes: u64,
    /// Signed: a late predecessor can make one gap negative, though the sum should not be.
    pub ns: i64,
    pub pkts: u64,
}

impl BackloggedMeter {
    /// `in_flight_pkts`: how many departed packets can be awaiting transmission at once (the
    /// buffer pool's size); older departures than that are forgotten.
    pub fn new(in_flight_pkts: usize) -> Self {
        let size = (2 * in_flight_pkts.max(1)).next_power_of_two();
        Self {
            ring: vec![EMPTY; size],
            mask: size as u64 - 1,
            total: Backlogged::default(),
        }
    }

    pub fn on_depart(&mut self, seq: u64, back_to_back: bool, size_bytes: u32) {
        self.ring[(seq & self.mask) as usize] = Entry {
            seq,
            back_to_back,
            sent: false,
            size_bytes,
            effective_departure_ns: 0,
        };
    }

    pub fn on_sent(&mut self, seq: u64, effective_departure_ns: u64) {
        let Some(e) = self.entry_mut(seq) else { return };
        e.sent = true;
        e.effective_departure_ns = effective_departure_ns;
        let this = *e;
        if this.back_to_back {
            if let Some(prev) = seq.checked_sub(1).and_then(|s| self.sent_entry(s)) {
                self.add(prev, this);
            }
        }
        if let Some(next) = self.sent_entry(seq + 1) {
            if next.back_to_back {
                self.add(this, next);
            }
        }
    }

    fn add(&mut self, prev: Entry, this: Entry) {
        self.total.bytes += u64::from(this.size_bytes);
        self.total.ns += this.effective_departure_ns as i64 - prev.effective_departure_ns as i64;
        self.total.pkts += 1;
    }

    fn entry_mut(&mut self, seq: u64) -> Option<&mut Entry> {
        let e = &mut self.ring[(seq & self.mask) as usize];
        (e.seq == seq).then_some(e)
    }

    fn sent_entry(&self, seq: u64) -> Option<Entry> {
        let e = self.ring[(seq & self.mask) as usize];
        (e.seq == seq && e.sent).then_some(e)
    }

    pub fn total(&self) -> Backlogged {
        self.total
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_count_whichever_member_is_sent_last() {
        let mut m = BackloggedMeter::new(8);
        // Packet 0 starts a run; 1 and 2 follow back-to-back; 3 starts a new run.
        for (seq, b2b) in [(0, false), (1, true), (2, true), (3, false)] {
            m.on_depart(seq, b2b, 1000);
        }
        // Sent out of order (two endpoints): 1, 0, 3, 2.
        m.on_sent(1, 200);
        m.on_sent(0, 100);
        m.on_sent(3, 1000);
        m.on_sent(2, 290);
        assert_eq!(
            m.total(),
            Backlogged {
                bytes: 2000,
                ns: 190,
                pkts: 2
            }
        );
    }
}
