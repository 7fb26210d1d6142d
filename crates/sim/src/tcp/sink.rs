//! A receiving application that reads at a fixed rate (a disk) from a receive buffer of fixed
//! size. Data it has not read yet holds buffer space, so the window the receiver advertises
//! shrinks and the sender is held to the disk's pace (flow control, RFC 9293 §3.8.6).

use crate::time::NS_PER_SEC;

#[derive(Debug, Clone)]
pub struct Sink {
    rate_bps: u64,
    buffer_segments: u64,
    mss_bytes: u32,
    /// Segments the application has read (fractional: it reads continuously).
    read_segments: f64,
    last_ns: u64,
}

impl Sink {
    pub fn new(rate_bps: u64, buffer_segments: u64, mss_bytes: u32, start_ns: u64) -> Self {
        Self {
            rate_bps,
            buffer_segments,
            mss_bytes,
            read_segments: 0.0,
            last_ns: start_ns,
        }
    }

    fn segments_per_ns(&self) -> f64 {
        self.rate_bps as f64 / (f64::from(self.mss_bytes) * 8.0 * NS_PER_SEC as f64)
    }

    /// Read on to `now_ns`; `rcv_nxt` segments have been delivered in order since the last call.
    pub fn read_until(&mut self, now_ns: u64, rcv_nxt: u64) {
        let readable = now_ns.saturating_sub(self.last_ns) as f64 * self.segments_per_ns();
        self.read_segments = (self.read_segments + readable).min(rcv_nxt as f64);
        self.last_ns = self.last_ns.max(now_ns);
    }

    /// Free buffer space, in segments, with `rcv_nxt` delivered.
    pub fn window(&self, rcv_nxt: u64) -> u64 {
        let unread = rcv_nxt - self.read_segments.floor() as u64;
        self.buffer_segments.saturating_sub(unread)
    }

    /// When the window will have reopened to half the buffer, if it is below that now.
    pub fn reopens_at(&self, now_ns: u64, rcv_nxt: u64) -> Option<u64> {
        let target = self.buffer_segments / 2;
        let window = self.window(rcv_nxt);
        (window < target)
            .then(|| now_ns + ((target - window) as f64 / self.segments_per_ns()).ceil() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unread_data_closes_the_window_and_reading_reopens_it() {
        // 1000-byte segments read at 8 Mb/s: one per millisecond. A 10-segment buffer.
        let mut s = Sink::new(8_000_000, 10, 1000, 0);
        s.read_until(0, 10);
        assert_eq!(s.window(10), 0);
        assert_eq!(s.reopens_at(0, 10), Some(5_000_000));
        s.read_until(3_000_000, 10);
        assert_eq!(s.window(10), 3);
        s.read_until(20_000_000, 10);
        assert_eq!(s.window(10), 10, "it cannot read what has not arrived");
        assert_eq!(s.reopens_at(20_000_000, 10), None);
    }
}
