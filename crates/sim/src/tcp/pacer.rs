//! The pacing gate: when the sender's next packet may leave.
//!
//! A rate (the controller's pacing rate, capped by the host's limit) spaces packets by their
//! transmission time at that rate. Linux paces whole TSO/GSO frames of about 1 ms of data
//! (`sk_pacing_shift` = 10: rate/1024 bytes), at least two segments and at most 64 KB
//! (`tcp_tso_autosize`, `tso::autosize_pkts`), as `tcp_write_xmit` does: a frame leaves once the clock has reached
//! the send time (`tcp_wstamp_ns`), back to back, and pushes that time on by the frame's
//! transmission time; until then nothing leaves, and a timer is set for it. One call to send
//! is one burst: a frame that cwnd cuts short is not finished later. The average rate is the
//! pacing rate, and one wake-up sends a frame, not a packet.
//!
//! A fixed gap is a blocking delay per packet (the "kernel delay" studies): frames of one.

use super::tso;
use crate::time::tx_time_ns;

#[derive(Debug, Clone)]
pub struct Pacer {
    mss_bytes: u32,
    /// Packets leave at least this far apart.
    gap_ns: Option<u64>,
    /// The host's cap on the rate, payload bits/s.
    rate_cap_bps: Option<u64>,
    /// Earliest time the gate lets the next frame out (Linux `tcp_wstamp_ns`).
    next_send_ns: u64,
    /// Packets the frame being sent may still carry.
    frame_left_pkts: u64,
    /// The spacing at the rate last seen. Rates change far less often than packets leave,
    /// and the two integer divisions per packet were a fifth of a paced run.
    spacing: Spacing,
}

/// What a rate implies for full-sized packets.
#[derive(Debug, Clone, Copy, Default)]
struct Spacing {
    rate_bps: u64,
    mss_gap_ns: u64,
    frame_pkts: u64,
}

impl Pacer {
    pub fn new(mss_bytes: u32, gap_ns: Option<u64>, rate_cap_bps: Option<u64>) -> Self {
        Self {
            mss_bytes,
            gap_ns,
            rate_cap_bps,
            next_send_ns: 0,
            frame_left_pkts: 0,
            spacing: Spacing::default(),
        }
    }

    /// The rate in force: the controller's (`cc_rate_bps`, payload bits/s), capped by the host's.
    pub fn rate_bps(&self, cc_rate_bps: Option<f64>) -> Option<u64> {
        self.capped_bps(cc_rate_bps.map(|r| r as u64))
    }

    /// `rate_bps` (none if zero) capped by the host's limit.
    pub fn capped_bps(&self, rate_bps: Option<u64>) -> Option<u64> {
        match (rate_bps.filter(|&r| r > 0), self.rate_cap_bps) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// When the gate opens, if it is closed at `now_ns` for a packet at `rate_bps`.
    pub fn closed_until(&mut self, now_ns: u64, rate_bps: Option<u64>) -> Option<u64> {
        if self.frame_left_pkts > 0 {
            return None;
        }
        if now_ns < self.next_send_ns {
            return Some(self.next_send_ns);
        }
        self.frame_left_pkts = match (rate_bps, self.gap_ns) {
            (Some(rate_bps), None) => self.spacing_at(rate_bps).frame_pkts,
            _ => 1,
        };
        None
    }

    /// The sender stopped sending: what is left of the frame lapses.
    pub fn end_burst(&mut self) {
        self.frame_left_pkts = 0;
    }

    /// A packet of `payload_bytes` left at `now_ns`. Rates are in payload bits, the unit of the
    /// rate samples they come from.
    pub fn on_send(&mut self, now_ns: u64, payload_bytes: u32, rate_bps: Option<u64>) {
        self.frame_left_pkts = self.frame_left_pkts.saturating_sub(1);
        let rate_gap_ns = match rate_bps {
            Some(r) if payload_bytes == self.mss_bytes => self.spacing_at(r).mss_gap_ns,
            Some(r) => tx_time_ns(payload_bytes, r),
            None => 0,
        };
        let gap_ns = rate_gap_ns.max(self.gap_ns.unwrap_or(0));
        if gap_ns > 0 {
            self.next_send_ns = self.next_send_ns.max(now_ns) + gap_ns;
        }
    }

    fn spacing_at(&mut self, rate_bps: u64) -> Spacing {
        if self.spacing.rate_bps != rate_bps {
            self.spacing = Spacing {
                rate_bps,
                mss_gap_ns: tx_time_ns(self.mss_bytes, rate_bps),
                frame_pkts: tso::autosize_pkts(rate_bps, self.mss_bytes, 0),
            };
        }
        self.spacing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MSS: u32 = 1500;

    /// Send packets whenever the gate allows, from t = 0 to `until_ns`, waking when told.
    fn departures(pacer: &mut Pacer, rate_bps: Option<u64>, until_ns: u64) -> Vec<u64> {
        let mut now_ns = 0;
        let mut sent = Vec::new();
        while now_ns < until_ns {
            match pacer.closed_until(now_ns, rate_bps) {
                Some(open_ns) => now_ns = open_ns,
                None => {
                    pacer.on_send(now_ns, MSS, rate_bps);
                    sent.push(now_ns);
                }
            }
        }
        sent
    }

    #[test]
    fn a_rate_sends_frames_of_a_millisecond_and_averages_the_rate() {
        // 120 Mb/s: a frame is 120e6/8/1024 = 14 648 bytes, 9 packets of 1500; 100 µs each.
        let mut pacer = Pacer::new(MSS, None, None);
        let sent = departures(&mut pacer, Some(120_000_000), 100_000_000);
        let first_burst = sent.iter().take_while(|&&t| t == 0).count();
        assert_eq!(first_burst, 9);
        let rate_bps = (sent.len() as u64 * u64::from(MSS) * 8) as f64 / 0.1;
        assert!((rate_bps / 120e6 - 1.0).abs() < 0.01, "{rate_bps}");
    }

    #[test]
    fn a_frame_cut_short_is_not_finished_before_the_send_time() {
        // 120 Mb/s: frames of 9 packets, 100 µs each. cwnd lets three go, then an ACK comes
        // 50 µs later: the gate stays shut until the three have been paid for, at 300 µs.
        let rate = Some(120_000_000);
        let mut pacer = Pacer::new(MSS, None, None);
        for _ in 0..3 {
            assert_eq!(pacer.closed_until(0, rate), None);
            pacer.on_send(0, MSS, rate);
        }
        pacer.end_burst();
        assert_eq!(pacer.closed_until(50_000, rate), Some(300_000));
        assert_eq!(pacer.closed_until(300_000, rate), None);
    }

    #[test]
    fn a_fixed_gap_spaces_every_packet() {
        let mut pacer = Pacer::new(MSS, Some(20_000), None);
        let sent = departures(&mut pacer, None, 100_000);
        assert_eq!(sent, vec![0, 20_000, 40_000, 60_000, 80_000]);
    }

    #[test]
    fn the_host_cap_limits_the_controllers_rate() {
        let pacer = Pacer::new(MSS, None, Some(300));
        assert_eq!(pacer.rate_bps(Some(500.0)), Some(300));
        assert_eq!(pacer.rate_bps(Some(200.0)), Some(200));
        assert_eq!(pacer.rate_bps(Some(0.0)), Some(300));
        assert_eq!(Pacer::new(MSS, None, None).rate_bps(None), None);
        // The kernel's rate for TSO frames comes as an integer and is capped the same way.
        assert_eq!(pacer.capped_bps(Some(500)), Some(300));
        assert_eq!(pacer.capped_bps(Some(0)), Some(300));
        assert_eq!(Pacer::new(MSS, None, None).capped_bps(Some(0)), None);
    }

    #[test]
    fn a_new_rate_is_used_at_once() {
        let mut pacer = Pacer::new(MSS, None, None);
        pacer.on_send(0, MSS, Some(1_000_000_000)); // 12 µs
        pacer.on_send(0, MSS, Some(100_000_000)); // 120 µs
        pacer.on_send(0, 750, Some(100_000_000)); // 60 µs
        assert_eq!(pacer.next_send_ns, 12_000 + 120_000 + 60_000);
    }
}
