//! What the application has handed to TCP, counted in segments.
//!
//! A bulk sender always has more; a finite transfer is one message; a request-response
//! exchange appends a message per request or response. A message starts a new segment (the
//! application writes it whole, TCP pushes it), so only the last segment of each message may be
//! short. A disk-limited source hands data over at a fixed rate, so a segment may exist but
//! not be readable yet.

use crate::time::NS_PER_SEC;

/// Whether a segment can be sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Availability {
    Now,
    /// The source (disk) will have produced it at this time.
    At(u64),
    /// The application has not written it (yet).
    No,
}

#[derive(Debug, Clone)]
pub struct AppData {
    mss_bytes: u32,
    /// `None`: an endless stream. Otherwise the end (exclusive, in segments) of each message
    /// written so far, with the payload of its last segment.
    messages: Option<Vec<(u64, u32)>>,
    /// The source hands bytes over at this rate from `start_ns` (a disk read limit).
    source_rate_bps: Option<u64>,
    start_ns: u64,
}

impl AppData {
    /// An endless stream.
    pub fn bulk(mss_bytes: u32) -> Self {
        Self {
            mss_bytes,
            messages: None,
            source_rate_bps: None,
            start_ns: 0,
        }
    }

    /// Nothing written yet; `write` adds messages.
    pub fn messages(mss_bytes: u32) -> Self {
        Self {
            messages: Some(Vec::new()),
            ..Self::bulk(mss_bytes)
        }
    }

    /// Data read from a source of `rate_bps` starting at `start_ns`.
    pub fn with_source_rate(mut self, rate_bps: Option<u64>, start_ns: u64) -> Self {
        self.source_rate_bps = rate_bps;
        self.start_ns = start_ns;
        self
    }

    /// The application writes a message of `bytes`; returns the segment its data ends at.
    pub fn write(&mut self, bytes: u64) -> u64 {
        let messages = self.messages.get_or_insert_with(Vec::new);
        let mss = u64::from(self.mss_bytes);
        let begin = messages.last().map_or(0, |m| m.0);
        let segments = bytes.div_ceil(mss);
        let last_bytes = (bytes - (segments - 1) * mss) as u32;
        messages.push((begin + segments, last_bytes));
        begin + segments
    }

    /// Segments written so far (`None` for an endless stream).
    pub fn end_segment(&self) -> Option<u64> {
        self.messages
            .as_ref()
            .map(|m| m.last().map_or(0, |last| last.0))
    }

    /// Whether segment `seq` can be sent at `now_ns`.
    pub fn availability(&self, seq: u64, now_ns: u64) -> Availability {
        if self.end_segment().is_some_and(|end| seq >= end) {
            return Availability::No;
        }
        match self.source_rate_bps {
            None => Availability::Now,
            Some(rate_bps) => {
                // Its last byte has been read at start + (seq + 1)·mss·8 / rate.
                let bits = (seq + 1) * u64::from(self.mss_bytes) * 8;
                let ready_ns = self.start_ns
                    + (u128::from(bits) * u128::from(NS_PER_SEC)).div_ceil(u128::from(rate_bps))
                        as u64;
                if ready_ns <= now_ns {
                    Availability::Now
                } else {
                    Availability::At(ready_ns)
                }
            }
        }
    }

    /// Payload bytes of segment `seq`.
    pub fn payload_bytes(&self, seq: u64) -> u32 {
        let Some(messages) = &self.messages else {
            return self.mss_bytes;
        };
        let i = messages.partition_point(|m| m.0 <= seq);
        match messages.get(i) {
            Some(&(end, last_bytes)) if seq + 1 == end => last_bytes,
            _ => self.mss_bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_finite_transfer_ends_in_a_short_segment() {
        let mut d = AppData::messages(1000);
        assert_eq!(d.write(2500), 3);
        assert_eq!((d.payload_bytes(1), d.payload_bytes(2)), (1000, 500));
        assert_eq!(d.availability(2, 0), Availability::Now);
        assert_eq!(d.availability(3, 0), Availability::No);
    }

    #[test]
    fn each_message_starts_a_new_segment() {
        let mut d = AppData::messages(1000);
        d.write(64);
        assert_eq!(d.write(1500), 3);
        assert_eq!(
            [0, 1, 2].map(|s| d.payload_bytes(s)),
            [64, 1000, 500],
            "request, then a response in two segments"
        );
    }

    #[test]
    fn a_disk_hands_over_one_segment_per_read_time() {
        // 1000-byte segments from an 8 Mb/s disk: one per millisecond, from t = 5 ms.
        let d = AppData::bulk(1000).with_source_rate(Some(8_000_000), 5_000_000);
        assert_eq!(d.availability(0, 5_999_999), Availability::At(6_000_000));
        assert_eq!(d.availability(0, 6_000_000), Availability::Now);
        assert_eq!(d.availability(9, 10_000_000), Availability::At(15_000_000));
    }
}
