//! Delivery-rate sampling (draft-cheng-iccrg-delivery-rate-estimation; Linux `tcp_rate.c`).
//!
//! Each transmission snapshots how much had been delivered when it left; when it is
//! acknowledged, the data delivered since over the time elapsed is one rate sample. The
//! sample also marks round trips: a round ends when a packet sent after the previous round
//! ended is delivered (BBR's and Vegas's rounds).

use crate::cc::RateSample;

/// What a packet remembers of the connection when it was (re)transmitted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxSnapshot {
    pub sent_ns: u64,
    pub delivered: u64,
    pub delivered_time_ns: u64,
    pub first_sent_time_ns: u64,
    pub is_app_limited: bool,
}

#[derive(Debug, Clone, Default)]
pub struct RateSampler {
    delivered: u64,
    delivered_time_ns: u64,
    first_sent_time_ns: u64,
    /// Non-zero while the sender is application-limited: the delivered count at which the
    /// bubble will have drained.
    app_limited_until: u64,
    next_round_delivered: u64,
    round: u64,
    /// The newest packet delivered by the ACK being processed.
    newest: Option<TxSnapshot>,
}

/// What one ACK yields.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AckSample {
    pub rate: Option<RateSample>,
    pub round_start: bool,
}

impl RateSampler {
    /// Snapshot for a packet leaving now, with `packets_out` packets already outstanding.
    pub fn on_send(&mut self, now_ns: u64, packets_out: u64) -> TxSnapshot {
        if packets_out == 0 {
            // Restarting from idle: do not count the idle time in the next interval.
            self.first_sent_time_ns = now_ns;
            self.delivered_time_ns = now_ns;
        }
        TxSnapshot {
            sent_ns: now_ns,
            delivered: self.delivered,
            delivered_time_ns: self.delivered_time_ns,
            first_sent_time_ns: self.first_sent_time_ns,
            is_app_limited: self.app_limited_until != 0,
        }
    }

    /// One packet of the current ACK was newly acknowledged or SACKed.
    pub fn on_delivered(&mut self, now_ns: u64, tx: &TxSnapshot) {
        self.delivered += 1;
        self.delivered_time_ns = now_ns;
        // Use the most recently sent packet: it spans the shortest, most current interval.
        if self
            .newest
            .is_none_or(|n| tx.delivered > n.delivered || tx.sent_ns > n.sent_ns)
        {
            self.newest = Some(*tx);
            self.first_sent_time_ns = tx.sent_ns;
        }
    }

    /// Close the current ACK: the rate sample (None if nothing was delivered or the interval
    /// is shorter than the minimum RTT, which only ACK compression can cause) and whether
    /// a round trip ended.
    pub fn finish_ack(&mut self, now_ns: u64, min_rtt_ns: u64) -> AckSample {
        if self.app_limited_until != 0 && self.delivered > self.app_limited_until {
            self.app_limited_until = 0;
        }
        let Some(tx) = self.newest.take() else {
            return AckSample {
                rate: None,
                round_start: false,
            };
        };
        let round_start = tx.delivered >= self.next_round_delivered;
        if round_start {
            self.next_round_delivered = self.delivered;
            self.round += 1;
        }
        let send_elapsed = tx.sent_ns - tx.first_sent_time_ns;
        let ack_elapsed = now_ns - tx.delivered_time_ns;
        let interval_ns = send_elapsed.max(ack_elapsed);
        let rate = (interval_ns >= min_rtt_ns && interval_ns > 0).then(|| RateSample {
            delivered: (self.delivered - tx.delivered) as u32,
            interval_ns,
            is_app_limited: tx.is_app_limited,
        });
        AckSample { rate, round_start }
    }

    /// The sender ran out of data with `in_flight` packets outstanding.
    pub fn on_app_limited(&mut self, in_flight: u64) {
        self.app_limited_until = (self.delivered + in_flight).max(1);
    }

    pub fn delivered(&self) -> u64 {
        self.delivered
    }

    pub fn round(&self) -> u64 {
        self.round
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    #[test]
    fn a_full_window_acked_over_one_rtt_gives_window_per_rtt() {
        let mut r = RateSampler::default();
        // Ten packets leave back to back at t = 0, each is acked 100 ms after it left.
        let sent: Vec<_> = (0..10).map(|i| r.on_send(0, i)).collect();
        let mut last = None;
        for tx in &sent {
            r.on_delivered(100 * MS, tx);
            last = Some(r.finish_ack(100 * MS, 100 * MS));
        }
        let sample = last.unwrap().rate.unwrap();
        assert_eq!((sample.delivered, sample.interval_ns), (10, 100 * MS));
        assert_eq!(r.round(), 1);
    }

    #[test]
    fn rounds_end_when_a_packet_sent_after_the_last_round_is_delivered() {
        let mut r = RateSampler::default();
        let a = r.on_send(0, 0);
        r.on_delivered(10 * MS, &a);
        assert!(r.finish_ack(10 * MS, 0).round_start);
        let b = r.on_send(10 * MS, 0);
        let c = r.on_send(10 * MS, 1);
        r.on_delivered(20 * MS, &b);
        assert!(r.finish_ack(20 * MS, 0).round_start);
        r.on_delivered(20 * MS, &c);
        assert!(!r.finish_ack(20 * MS, 0).round_start);
    }

    #[test]
    fn samples_taken_while_short_of_data_say_so() {
        let mut r = RateSampler::default();
        r.on_app_limited(0);
        let a = r.on_send(0, 0);
        r.on_delivered(10 * MS, &a);
        let s = r.finish_ack(10 * MS, 10 * MS).rate.unwrap();
        assert!(s.is_app_limited);
    }
}
