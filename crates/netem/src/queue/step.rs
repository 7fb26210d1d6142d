//! A step marker: the AQM of DCTCP's data-centre switch (Alizadeh et al., "Data Center TCP
//! (DCTCP)", SIGCOMM 2010, §3.1: "an arriving packet is marked with CE if the queue occupancy
//! is greater than K upon its arrival"), decided when a packet arrives, so it fits the
//! analytic FIFO link.
//!
//! The occupancy is the arrival's backlog, in packets or bytes as K is given, the packet in
//! transmission counted and the arriving one not. Only an ECN-capable packet can take the mark
//! (RFC 3168 §5; CE is marked again, a no-op). A Not-ECT packet passes whatever the queue: the
//! marker never drops, so the hard limit alone drops what it cannot hold; a drop in its place
//! would turn a shallow K meant for marking into a tiny buffer for non-ECN traffic.

use super::{Arrival, Verdict};

/// K, the occupancy above which arrivals are marked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepThreshold {
    Packets(u64),
    Bytes(u64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    threshold: StepThreshold,
}

impl Step {
    pub fn new(threshold: StepThreshold) -> Self {
        Self { threshold }
    }

    pub fn threshold(&self) -> StepThreshold {
        self.threshold
    }

    /// Mark an ECN-capable arrival that finds more than K queued (`a.backlog_pkts` or
    /// `a.backlog_bytes`, as K is given); pass anything else, a Not-ECT packet included: only
    /// the hard limit drops it.
    pub fn on_arrival(&self, a: &Arrival) -> Verdict {
        let above = match self.threshold {
            StepThreshold::Packets(k) => a.backlog_pkts > k,
            StepThreshold::Bytes(k) => a.backlog_bytes > k,
        };
        if above && a.ecn.is_capable() {
            Verdict::Mark
        } else {
            Verdict::Pass
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Ecn;

    fn arrival(backlog_pkts: u64, backlog_bytes: u64, ecn: Ecn) -> Arrival {
        Arrival {
            now_ns: 0,
            backlog_pkts,
            backlog_bytes,
            busy_until_ns: 0,
            packet_time_ns: 1_200_000,
            ecn,
        }
    }

    const CAPABLE: [Ecn; 3] = [Ecn::Ect0, Ecn::Ect1, Ecn::Ce];

    #[test]
    fn capable_arrivals_finding_more_than_k_packets_are_marked() {
        // DCTCP §3.1: marked if the occupancy is greater than K; at K it passes.
        let step = Step::new(StepThreshold::Packets(20));
        for ecn in CAPABLE {
            assert_eq!(step.on_arrival(&arrival(21, 21 * 1500, ecn)), Verdict::Mark);
            assert_eq!(step.on_arrival(&arrival(20, 20 * 1500, ecn)), Verdict::Pass);
            assert_eq!(step.on_arrival(&arrival(0, 0, ecn)), Verdict::Pass);
        }
        // Counted in packets: 21 tiny packets exceed K, 20 jumbo frames do not.
        assert_eq!(
            step.on_arrival(&arrival(21, 21 * 64, Ecn::Ect0)),
            Verdict::Mark
        );
        assert_eq!(
            step.on_arrival(&arrival(20, 20 * 9000, Ecn::Ect0)),
            Verdict::Pass
        );
    }

    #[test]
    fn not_ect_passes_however_deep_the_queue() {
        let step = Step::new(StepThreshold::Packets(20));
        assert_eq!(
            step.on_arrival(&arrival(1000, 1_500_000, Ecn::NotEct)),
            Verdict::Pass
        );
    }

    #[test]
    fn in_bytes_the_threshold_counts_bytes() {
        let step = Step::new(StepThreshold::Bytes(30_000));
        assert_eq!(step.threshold(), StepThreshold::Bytes(30_000));
        for ecn in CAPABLE {
            assert_eq!(step.on_arrival(&arrival(3, 30_001, ecn)), Verdict::Mark);
            assert_eq!(step.on_arrival(&arrival(20, 30_000, ecn)), Verdict::Pass);
        }
        // Counted in bytes: 4 jumbo frames exceed K, 400 tiny packets (25 600 B) do not.
        assert_eq!(
            step.on_arrival(&arrival(4, 4 * 9000, Ecn::Ect1)),
            Verdict::Mark
        );
        assert_eq!(
            step.on_arrival(&arrival(400, 400 * 64, Ecn::Ect1)),
            Verdict::Pass
        );
        assert_eq!(
            step.on_arrival(&arrival(100, 150_000, Ecn::NotEct)),
            Verdict::Pass
        );
    }
}
