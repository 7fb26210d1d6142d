//! min_rtt and the ProbeRTT schedule (draft-ietf-ccwg-bbr §5.3.4.3 `UpdateMinRTT`): a 5 s
//! minimum (`probe_rtt_min_delay`) that, when it expires, sends the flow to ProbeRTT, feeding
//! a 10 s minimum (`min_rtt`) that the BDP uses.

#[derive(Debug, Clone, Copy)]
pub struct MinRtt {
    interval_ns: u64,
    window_ns: u64,
    /// `BBR.min_rtt`, `None` before the first sample, and when it was measured.
    min_rtt_ns: Option<u64>,
    min_rtt_stamp_ns: u64,
    /// `BBR.probe_rtt_min_delay` and `BBR.probe_rtt_min_stamp`.
    probe_min_ns: Option<u64>,
    probe_min_stamp_ns: u64,
    /// `BBR.probe_rtt_expired`, as of the last ACK.
    probe_expired: bool,
}

impl MinRtt {
    pub fn new(interval_ns: u64, window_ns: u64) -> Self {
        Self {
            interval_ns,
            window_ns,
            min_rtt_ns: None,
            min_rtt_stamp_ns: 0,
            probe_min_ns: None,
            probe_min_stamp_ns: 0,
            probe_expired: false,
        }
    }

    pub fn get(&self) -> Option<u64> {
        self.min_rtt_ns
    }

    /// The 5 s minimum went unconfirmed: time for ProbeRTT (§5.3.4.3 `CheckProbeRTT`).
    pub fn probe_expired(&self) -> bool {
        self.probe_expired
    }

    /// §5.3.4.3 `UpdateMinRTT` on an ACK; returns whether `min_rtt` changed.
    pub fn update(&mut self, now_ns: u64, rtt_ns: Option<u64>) -> bool {
        self.probe_expired = now_ns > self.probe_min_stamp_ns + self.interval_ns;
        if let Some(rtt_ns) = rtt_ns {
            if self.probe_min_ns.is_none_or(|m| rtt_ns < m) || self.probe_expired {
                self.probe_min_ns = Some(rtt_ns);
                self.probe_min_stamp_ns = now_ns;
            }
        }
        let expired = now_ns > self.min_rtt_stamp_ns + self.window_ns;
        match self.probe_min_ns {
            Some(probe_min_ns) if expired || self.min_rtt_ns.is_none_or(|m| probe_min_ns < m) => {
                let changed = self.min_rtt_ns != Some(probe_min_ns);
                self.min_rtt_ns = Some(probe_min_ns);
                self.min_rtt_stamp_ns = self.probe_min_stamp_ns;
                changed
            }
            _ => false,
        }
    }

    /// ProbeRTT is over: the next one is due an interval from now (§5.3.4.3
    /// `CheckProbeRTTDone`).
    pub fn schedule_next_probe(&mut self, now_ns: u64) {
        self.probe_min_stamp_ns = now_ns;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn probe_rtt_is_due_five_seconds_after_the_last_minimum() {
        let mut m = MinRtt::new(5 * S, 10 * S);
        m.update(S, Some(40));
        m.update(2 * S, Some(45));
        assert_eq!(m.get(), Some(40));
        m.update(6 * S, Some(45));
        assert!(
            !m.probe_expired(),
            "5 s after the 40 sample exactly: not yet"
        );
        m.update(6 * S + 1, Some(50));
        assert!(m.probe_expired());
        assert_eq!(m.get(), Some(40), "the 10 s minimum keeps 40");
        m.schedule_next_probe(7 * S);
        m.update(7 * S + 1, None);
        assert!(!m.probe_expired());
    }

    #[test]
    fn min_rtt_takes_the_recent_minimum_after_ten_seconds() {
        let mut m = MinRtt::new(5 * S, 10 * S);
        m.update(0, Some(40));
        m.update(6 * S, Some(60)); // the 5 s minimum expired: 60 replaces it
        assert!(m.update(10 * S + 1, Some(70)), "40 is 10 s old");
        assert_eq!(m.get(), Some(60));
    }
}
