//! Background sources without congestion control (UDP): constant bit rate, and on/off sources
//! with Pareto-distributed on and off periods. An aggregate of many on/off sources with shape
//! 1 < α < 2 is self-similar with Hurst parameter H = (3 − α)/2 (Willinger, Taqqu, Sherman &
//! Wilson, "Self-similarity through high-variability", ToN 1997).

use rand::{RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

use crate::engine::FlowId;
use crate::packet::Packet;
use crate::scenario::SourceSpec;
use crate::time::{tx_time_ns, NS_PER_SEC};

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceStats {
    pub packets_sent: u64,
    pub packets_delivered: u64,
    pub packets_dropped: u64,
    pub bytes_delivered: u64,
    /// CBR: the sum and the largest of the delivered datagrams' one-way delays.
    pub delay_sum_ns: u128,
    pub delay_max_ns: u64,
}

/// Pareto on/off periods; `on_until_ns` ends the current on period.
#[derive(Debug, Clone)]
struct OnOff {
    shape: f64,
    mean_on_ns: u64,
    mean_off_ns: u64,
    on_until_ns: u64,
    rng: Xoshiro256PlusPlus,
}

impl OnOff {
    /// A Pareto draw with the given mean: scale x_m = mean·(α − 1)/α, x = x_m / U^(1/α).
    fn pareto_ns(&mut self, mean_ns: u64) -> u64 {
        let scale = mean_ns as f64 * (self.shape - 1.0) / self.shape;
        let u: f64 = 1.0 - self.rng.random::<f64>(); // in (0, 1]
        (scale / u.powf(1.0 / self.shape)).min(1e18) as u64
    }
}

#[derive(Debug, Clone)]
pub struct Source {
    id: FlowId,
    pub kind: &'static str,
    packet_bytes: u32,
    /// Time between packets while sending.
    gap_ns: u64,
    start_ns: u64,
    stop_ns: Option<u64>,
    onoff: Option<OnOff>,
    pub stats: SourceStats,
}

impl Source {
    pub fn new(id: FlowId, spec: &SourceSpec, seed: u64) -> Self {
        let (rate_bps, packet_bytes, start_ns, stop_ns, onoff) = match *spec {
            SourceSpec::Cbr {
                rate_bps,
                packet_bytes,
                start_ns,
                stop_ns,
                ..
            } => (rate_bps, packet_bytes, start_ns, stop_ns, None),
            SourceSpec::Onoff {
                rate_bps,
                packet_bytes,
                start_ns,
                stop_ns,
                shape,
                mean_on_ns,
                mean_off_ns,
                ..
            } => {
                let rng = Xoshiro256PlusPlus::seed_from_u64(seed);
                (
                    rate_bps,
                    packet_bytes,
                    start_ns,
                    stop_ns,
                    Some(OnOff {
                        shape,
                        mean_on_ns,
                        mean_off_ns,
                        on_until_ns: 0,
                        rng,
                    }),
                )
            }
        };
        Self {
            id,
            kind: spec.kind(),
            packet_bytes,
            gap_ns: tx_time_ns(packet_bytes, rate_bps).max(1),
            start_ns,
            stop_ns,
            onoff,
            stats: SourceStats::default(),
        }
    }

    /// When the first packet leaves. An on/off source begins with an off period, so that
    /// sources started together do not synchronise.
    pub fn first_send_ns(&mut self) -> u64 {
        match &mut self.onoff {
            None => self.start_ns,
            Some(o) => {
                let on_start = self.start_ns + o.pareto_ns(o.mean_off_ns);
                o.on_until_ns = on_start + o.pareto_ns(o.mean_on_ns);
                on_start
            }
        }
    }

    /// A packet is due at `now_ns`: returns it and when the next one is due (`None` once the
    /// source has stopped).
    pub fn send(&mut self, now_ns: u64) -> (Option<Packet>, Option<u64>) {
        if self.stop_ns.is_some_and(|stop| now_ns >= stop) {
            return (None, None);
        }
        self.stats.packets_sent += 1;
        let pkt = Packet::udp(self.id, self.stats.packets_sent - 1, self.packet_bytes);
        let mut next_ns = now_ns + self.gap_ns;
        if let Some(o) = &mut self.onoff {
            if next_ns >= o.on_until_ns {
                let on_start = o.on_until_ns + o.pareto_ns(o.mean_off_ns);
                o.on_until_ns = on_start + o.pareto_ns(o.mean_on_ns);
                next_ns = on_start;
            }
        }
        (Some(pkt), Some(next_ns))
    }

    /// Datagram `seq` reached its destination at `now_ns`. A CBR source sends on a fixed
    /// schedule, so the number says when the datagram left, and its delay is known without a
    /// stamp; an on/off source's is not.
    pub fn on_delivered(&mut self, now_ns: u64, seq: u64, size_bytes: u32) {
        let s = &mut self.stats;
        s.packets_delivered += 1;
        s.bytes_delivered += u64::from(size_bytes);
        if self.onoff.is_none() {
            let delay_ns = now_ns - (self.start_ns + seq * self.gap_ns);
            s.delay_sum_ns += u128::from(delay_ns);
            s.delay_max_ns = s.delay_max_ns.max(delay_ns);
        }
    }

    /// The mean and largest one-way delay of the delivered datagrams (CBR only), seconds.
    pub fn delays_s(&self) -> Option<(f64, f64)> {
        let s = &self.stats;
        (self.onoff.is_none() && s.packets_delivered > 0).then(|| {
            let mean_ns = s.delay_sum_ns as f64 / s.packets_delivered as f64;
            (mean_ns / 1e9, s.delay_max_ns as f64 / 1e9)
        })
    }

    /// How long the source was started within a run that ended at `end_ns`.
    pub fn active_ns(&self, end_ns: u64) -> u64 {
        let stop_ns = self.stop_ns.unwrap_or(end_ns).min(end_ns);
        stop_ns.saturating_sub(self.start_ns)
    }

    pub fn goodput_mbps(&self, active_ns: u64) -> f64 {
        self.stats.bytes_delivered as f64 * 8.0 / (active_ns as f64 / NS_PER_SEC as f64) / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn onoff(shape: f64) -> Source {
        let spec = SourceSpec::Onoff {
            route: vec![],
            reverse: false,
            rate_bps: 12_000_000,
            packet_bytes: 1500,
            start_ns: 0,
            stop_ns: None,
            shape,
            mean_on_ns: 100_000_000,
            mean_off_ns: 300_000_000,
        };
        Source::new(0, &spec, 7)
    }

    #[test]
    fn a_cbr_datagram_delay_is_read_from_its_number() {
        // 12 Mb/s of 1500-byte datagrams from 5 ms: datagram n leaves at 5 + n ms.
        let spec = SourceSpec::Cbr {
            route: vec![],
            reverse: false,
            rate_bps: 12_000_000,
            packet_bytes: 1500,
            start_ns: 5_000_000,
            stop_ns: None,
        };
        let mut s = Source::new(0, &spec, 1);
        s.on_delivered(7_000_000, 0, 1500); // 2 ms
        s.on_delivered(10_000_000, 1, 1500); // 4 ms
        assert_eq!(s.delays_s(), Some((0.003, 0.004)));
        let mut o = onoff(1.5);
        o.on_delivered(1_000_000, 0, 1500);
        assert_eq!(o.delays_s(), None);
    }

    #[test]
    fn a_cbr_source_sends_at_its_rate_until_it_stops() {
        let spec = SourceSpec::Cbr {
            route: vec![],
            reverse: false,
            rate_bps: 12_000_000,
            packet_bytes: 1500,
            start_ns: 0,
            stop_ns: Some(10_000_000),
        };
        let mut s = Source::new(0, &spec, 1);
        let mut t = s.first_send_ns();
        while let (Some(_), Some(next)) = s.send(t) {
            t = next;
        }
        // 1500 bytes at 12 Mb/s: one packet per ms, ten before the stop at 10 ms.
        assert_eq!(s.stats.packets_sent, 10);
    }

    #[test]
    fn a_source_is_active_from_its_start_to_its_stop_or_the_end_of_the_run() {
        let spec = SourceSpec::Cbr {
            route: vec![],
            reverse: false,
            rate_bps: 12_000_000,
            packet_bytes: 1500,
            start_ns: 20,
            stop_ns: Some(100),
        };
        let s = Source::new(0, &spec, 1);
        assert_eq!(s.active_ns(1000), 80);
        assert_eq!(s.active_ns(50), 30, "cut at the end of the run");
        assert_eq!(s.active_ns(10), 0, "ended before it started");
    }

    #[test]
    fn pareto_periods_have_the_mean_asked_for() {
        // With α = 1.9 the mean converges quickly enough to test at 10 %.
        let mut s = onoff(1.9);
        let o = s.onoff.as_mut().unwrap();
        let n = 200_000;
        let mean = (0..n).map(|_| o.pareto_ns(100_000_000) as f64).sum::<f64>() / f64::from(n);
        assert!((mean / 1e8 - 1.0).abs() < 0.1, "{mean}");
    }

    #[test]
    fn an_onoff_source_averages_rate_times_on_fraction() {
        let mut s = onoff(1.9);
        let mut t = s.first_send_ns();
        let end_ns = 2_000 * NS_PER_SEC;
        while t < end_ns {
            t = s.send(t).1.unwrap();
        }
        // On 1/4 of the time at 12 Mb/s: 3 Mb/s, i.e. 250 packets/s.
        let rate = s.stats.packets_sent as f64 / 2_000.0;
        assert!((rate / 250.0 - 1.0).abs() < 0.15, "{rate}");
    }
}
