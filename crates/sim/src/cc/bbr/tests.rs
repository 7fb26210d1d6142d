//! BBR driven by hand-made ACKs: a 40 ms path whose delivery rate each round is scripted.

use super::modes::{DRAIN_GAIN, PROBE_BW_GAINS};
use super::*;
use crate::cc::{CaState, Signal};

const MS: u64 = NS_PER_MS;
const RTT_NS: u64 = 40 * MS;
/// 10 000 bits: at N Mb/s a 40 ms BDP is 4N packets.
const MSS: u32 = 1250;

/// A sample of `mbps`: `mbps` packets of 10 000 bits in 10 ms.
fn rate(mbps: u32) -> RateSample {
    RateSample {
        delivered: mbps,
        interval_ns: 10 * MS,
        is_app_limited: false,
    }
}

fn app_limited(mbps: u32) -> RateSample {
    RateSample {
        is_app_limited: true,
        ..rate(mbps)
    }
}

/// One BBR flow and the sender-side counters it reads.
struct Flow {
    bbr: Bbr,
    now_ns: u64,
    round: u64,
    delivered: u64,
}

impl Flow {
    fn new(seed: u64) -> Self {
        let init = Init {
            mss_bytes: MSS,
            initial_cwnd_pkts: 10.0,
            seed,
        };
        Self {
            bbr: Bbr::new(BbrParams::default(), &init),
            now_ns: 0,
            round: 0,
            delivered: 0,
        }
    }

    fn path(&self) -> Path {
        Path {
            mss_bytes: MSS,
            srtt_ns: RTT_NS,
            min_rtt_ns: RTT_NS,
            delivered: self.delivered,
            round: self.round,
        }
    }

    /// An ACK of one packet `after_ns` from now, measuring the base RTT, 100 in flight.
    fn ack(&self, after_ns: u64) -> Ack {
        Ack {
            now_ns: self.now_ns + after_ns,
            acked: 1,
            lost: 0,
            ce_pkts: 0,
            rtt_ns: Some(RTT_NS),
            prior_in_flight: 100,
            in_flight: 100,
            round_start: false,
            ca_state: CaState::Open,
            cwnd_limited: true,
            rate: None,
        }
    }

    fn send(&mut self, ack: Ack) {
        self.now_ns = ack.now_ns;
        self.delivered += u64::from(ack.acked);
        self.round += u64::from(ack.round_start);
        self.bbr.on_ack(&ack, &self.path());
    }

    /// A round ends one RTT later with a sample of `sample`, leaving `in_flight` packets.
    fn round_with(&mut self, sample: RateSample, in_flight: u32) {
        let ack = self.ack(RTT_NS);
        self.send(Ack {
            round_start: true,
            rate: Some(sample),
            in_flight,
            prior_in_flight: in_flight,
            ..ack
        });
    }

    fn round(&mut self, mbps: u32, in_flight: u32) {
        self.round_with(rate(mbps), in_flight);
    }

    /// STARTUP to DRAIN (the bandwidth stops growing at 47 Mb/s) and on to PROBE_BW.
    fn in_probe_bw(seed: u64) -> Self {
        let mut f = Flow::new(seed);
        for mbps in [10, 20, 40, 45, 46, 47] {
            f.round(mbps, 400);
        }
        f.send(Ack {
            in_flight: 150,
            ..f.ack(0)
        });
        assert!(matches!(f.bbr.mode, Mode::ProbeBw(_)));
        f
    }

    /// The same flow with no room kept for ACK aggregation: these tests' ACKs come in bursts
    /// that the estimates do not predict, and the allowance has its own test.
    fn without_aggregation(mut self) -> Self {
        self.bbr.params.extra_acked_gain = 0.0;
        self
    }

    fn phase(&self) -> usize {
        match self.bbr.mode {
            Mode::ProbeBw(cycle) => cycle.phase(),
            mode => panic!("not in PROBE_BW: {mode:?}"),
        }
    }

    fn pacing_bps(&self) -> f64 {
        self.bbr.pacing_rate_bps().unwrap()
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs()
}

#[test]
fn startup_paces_at_2_885_times_the_window_per_rtt_until_there_is_a_bandwidth_sample() {
    let mut f = Flow::new(1);
    // No RTT yet: Linux assumes 1 ms. 10 packets of 10 000 bits per ms is 100 Mb/s.
    assert!(close(f.pacing_bps(), HIGH_GAIN * 100e6 * 0.99));
    f.send(f.ack(RTT_NS));
    assert!(
        close(f.pacing_bps(), HIGH_GAIN * 2.5e6 * 0.99),
        "10 packets per 40 ms"
    );
    f.round(10, 20);
    assert!(close(f.pacing_bps(), HIGH_GAIN * 10e6 * 0.99));
    f.round(5, 20);
    assert!(
        close(f.pacing_bps(), HIGH_GAIN * 10e6 * 0.99),
        "the max filter keeps 10 Mb/s"
    );
}

#[test]
fn startup_ends_after_three_rounds_without_25_percent_growth_then_drains() {
    let mut f = Flow::new(1);
    for mbps in [10, 20, 40, 45, 46] {
        f.round(mbps, 400);
        assert_eq!(f.bbr.mode, Mode::Startup);
    }
    f.round(47, 400); // 45, 46, 47: three rounds under 1.25 · 40
    assert_eq!(f.bbr.mode, Mode::Drain);
    // ssthresh = BDP: 47 Mb/s · 40 ms = 188 packets, + 3 quanta of 2 = 194.
    assert_eq!(f.bbr.ssthresh(), 194.0);
    assert!(close(f.pacing_bps(), DRAIN_GAIN * 47e6 * 0.99));
    f.send(Ack {
        in_flight: 195,
        ..f.ack(0)
    });
    assert_eq!(f.bbr.mode, Mode::Drain, "one packet over the BDP target");
    f.send(Ack {
        in_flight: 194,
        ..f.ack(0)
    });
    assert!(matches!(f.bbr.mode, Mode::ProbeBw(_)));
    assert_ne!(f.phase(), 1, "never starts by draining");
    assert!(close(
        f.pacing_bps(),
        PROBE_BW_GAINS[f.phase()] * 47e6 * 0.99
    ));
}

#[test]
fn app_limited_rounds_do_not_count_toward_a_full_pipe() {
    let mut f = Flow::new(1);
    f.round(40, 100);
    for _ in 0..5 {
        f.round_with(app_limited(40), 100);
    }
    assert_eq!(f.bbr.mode, Mode::Startup);
}

#[test]
fn app_limited_samples_may_raise_the_estimate_but_never_lower_it() {
    let mut f = Flow::new(1);
    f.round(50, 100);
    for _ in 0..11 {
        f.round_with(app_limited(30), 100);
    }
    assert_eq!(
        f.bbr.max_bw.get(),
        50e6,
        "11 rounds later, still the old maximum"
    );
    f.round_with(app_limited(60), 100);
    assert_eq!(f.bbr.max_bw.get(), 60e6);
    for _ in 0..11 {
        f.round(30, 100);
    }
    assert_eq!(
        f.bbr.max_bw.get(),
        30e6,
        "measured samples age the maximum out"
    );
}

#[test]
fn probe_bw_cwnd_is_twice_the_bdp_plus_quanta() {
    let mut f = Flow::in_probe_bw(1).without_aggregation();
    for _ in 0..40 {
        f.send(Ack {
            acked: 10,
            ..f.ack(0)
        });
    }
    // 2 · 188 + 6 = 382, and 2 more in the probing phase.
    let expected = if f.phase() == 0 { 384.0 } else { 382.0 };
    assert_eq!(f.bbr.cwnd(), expected);
}

#[test]
fn the_gain_cycle_moves_one_phase_per_min_rtt() {
    let mut f = Flow::in_probe_bw(3);
    let start = f.phase();
    let mut gains = vec![];
    for _ in 0..8 {
        // Enough in flight that the probing phase is done once its min_rtt is up.
        f.send(Ack {
            prior_in_flight: 1000,
            ..f.ack(RTT_NS + 1)
        });
        gains.push(f.bbr.mode.pacing_gain());
    }
    let cycle: Vec<f64> = (1..=8).map(|i| PROBE_BW_GAINS[(start + i) % 8]).collect();
    assert_eq!(gains, cycle);
}

#[test]
fn the_random_start_phase_comes_from_the_seed() {
    let phases: Vec<usize> = (0..20)
        .map(|seed| Flow::in_probe_bw(seed).phase())
        .collect();
    let again: Vec<usize> = (0..20)
        .map(|seed| Flow::in_probe_bw(seed).phase())
        .collect();
    assert_eq!(phases, again);
    assert!(phases.iter().any(|&p| p != phases[0]), "{phases:?}");
}

#[test]
fn probe_rtt_comes_after_10_s_without_a_lower_rtt_and_holds_4_packets() {
    let mut f = Flow::in_probe_bw(1).without_aggregation();
    f.send(Ack {
        acked: 400,
        ..f.ack(0)
    });
    let min_rtt_stamp_ns = RTT_NS; // the first sample; none lower since
    let later = |f: &Flow, at_ns: u64| Ack {
        rtt_ns: Some(45 * MS),
        ..f.ack(at_ns - f.now_ns)
    };
    f.send(later(&f, min_rtt_stamp_ns + 10_000 * MS));
    assert!(
        matches!(f.bbr.mode, Mode::ProbeBw(_)),
        "exactly 10 s: not yet"
    );
    f.send(later(&f, min_rtt_stamp_ns + 10_000 * MS + 1));
    assert!(matches!(f.bbr.mode, Mode::ProbeRtt(_)));
    assert_eq!(f.bbr.cwnd(), 4.0);
    assert!(
        close(f.pacing_bps(), 47e6 * 0.99),
        "PROBE_RTT paces at the estimate"
    );

    // In-flight reaches 4 packets: 200 ms and a round from here. The queue is gone, and the
    // RTT with it.
    f.send(Ack {
        in_flight: 4,
        ..f.ack(MS)
    });
    let floor_ns = f.now_ns;
    f.send(Ack {
        acked: 5,
        in_flight: 4,
        ..f.ack(RTT_NS)
    });
    assert!(
        matches!(f.bbr.mode, Mode::ProbeRtt(_)),
        "a round, but only 40 ms"
    );
    f.send(Ack {
        in_flight: 4,
        ..f.ack(floor_ns + 200 * MS + 1 - f.now_ns)
    });
    assert!(matches!(f.bbr.mode, Mode::ProbeBw(_)));
    assert_eq!(f.bbr.min_rtt.get(), Some(RTT_NS));
    assert_eq!(
        f.bbr.cwnd(),
        f.bbr.inflight_pkts(2.0),
        "the window from before is back"
    );
    assert!(
        !f.bbr.min_rtt.is_expired(f.now_ns + 10_000 * MS),
        "min_rtt counts as fresh"
    );
}

#[test]
fn probe_rtt_before_the_pipe_is_full_returns_to_startup() {
    let mut f = Flow::new(1);
    f.round(10, 100);
    f.send(Ack {
        rtt_ns: Some(50 * MS),
        ..f.ack(10_000 * MS + 1)
    });
    assert!(matches!(f.bbr.mode, Mode::ProbeRtt(_)));
    f.send(Ack {
        in_flight: 2,
        ..f.ack(MS)
    });
    f.send(Ack {
        acked: 3,
        in_flight: 2,
        ..f.ack(201 * MS)
    });
    assert_eq!(f.bbr.mode, Mode::Startup);
}

#[test]
fn recovery_conserves_packets_for_a_round_then_restores_the_window() {
    let mut f = Flow::in_probe_bw(1);
    f.send(Ack {
        acked: 400,
        ..f.ack(0)
    });
    let cwnd = f.bbr.cwnd();
    let path = f.path();
    f.bbr.on_congestion(
        &CongestionEvent {
            now_ns: f.now_ns,
            signal: Signal::Loss,
            in_flight: 303,
            lost: 3,
        },
        &path,
    );
    let recovering = |f: &Flow, acked, in_flight| Ack {
        acked,
        in_flight,
        ca_state: CaState::Recovery,
        ..f.ack(MS)
    };
    f.send(Ack {
        lost: 3,
        ce_pkts: 0,
        ..recovering(&f, 1, 300)
    });
    assert_eq!(
        f.bbr.cwnd(),
        301.0,
        "what is in the network plus what just left"
    );
    f.send(recovering(&f, 2, 299));
    assert_eq!(f.bbr.cwnd(), 301.0);
    f.send(recovering(&f, 297, 4));
    assert_eq!(f.bbr.cwnd(), 301.0);
    f.send(recovering(&f, 1, 4)); // the last of the 300 in flight when recovery began
    assert_eq!(f.bbr.cwnd(), 301.0);
    f.send(recovering(&f, 1, 4)); // one sent during recovery: the round is over, grow again
    assert_eq!(f.bbr.cwnd(), 302.0);
    f.send(f.ack(MS));
    assert_eq!(
        f.bbr.cwnd(),
        cwnd,
        "recovery over: the saved window is back"
    );
}

#[test]
fn a_timeout_restarts_from_one_packet_and_the_window_returns_after_loss_recovery() {
    let mut f = Flow::in_probe_bw(1);
    f.send(Ack {
        acked: 400,
        ..f.ack(0)
    });
    let cwnd = f.bbr.cwnd();
    let path = f.path();
    f.bbr.on_timeout(f.now_ns, &path);
    assert_eq!(f.bbr.cwnd(), 1.0);
    f.send(Ack {
        ca_state: CaState::Loss,
        in_flight: 0,
        ..f.ack(MS)
    });
    assert_eq!(f.bbr.cwnd(), 4.0, "never below 4 packets once ACKs flow");
    assert!(
        f.bbr.full_pipe.reached(),
        "a timeout does not send BBR back to STARTUP"
    );
    f.send(f.ack(MS));
    assert_eq!(f.bbr.cwnd(), cwnd);
}

#[test]
fn the_bbr_registry_entry_builds_and_paces() {
    let init = Init {
        mss_bytes: 1448,
        initial_cwnd_pkts: 10.0,
        seed: 9,
    };
    let bbr = (ALGORITHM.build)(&Params::new(), &init).unwrap();
    assert!(bbr.owns_recovery());
    assert!(bbr.pacing_rate_bps().is_some_and(|r| r > 0.0));
}

#[test]
fn acks_in_a_burst_widen_cwnd_by_what_they_brought_beyond_the_estimate() {
    // 47 Mb/s is 4.7 packets per ms here. After a pause (the ACKs behind the estimate: a new
    // epoch), 300 packets are acknowledged within 0.3 ms, when 1 was due: an excess of 300
    // (Linux `bbr_update_ack_aggregation`), and cwnd's target rises by as much
    // (`bbr_ack_aggregation_cwnd`, below 100 ms at the estimate: 470).
    let mut with = Flow::in_probe_bw(1);
    let mut without = Flow::in_probe_bw(1).without_aggregation();
    for f in [&mut with, &mut without] {
        f.send(Ack {
            rate: Some(rate(47)),
            ..f.ack(100 * MS)
        });
        for _ in 0..30 {
            f.send(Ack {
                acked: 10,
                rate: Some(rate(47)),
                ..f.ack(10_000)
            });
        }
    }
    let targets = [with.bbr.cwnd_target_pkts(), without.bbr.cwnd_target_pkts()];
    assert_eq!(targets[0] - targets[1], 300.0, "{targets:?}");
}

#[test]
fn a_policer_found_in_two_lossy_rounds_of_four_sets_the_rate_for_48_rounds() {
    let mut f = Flow::in_probe_bw(1).without_aggregation();
    // A 20 Mb/s policer: each 40 ms round delivers 80 packets and loses 30.
    let policed = |f: &Flow, lost| Ack {
        acked: 80,
        lost,
        round_start: true,
        rate: Some(rate(20)),
        ..f.ack(RTT_NS)
    };
    // The first loss starts sampling, in a round that counts: the intervals end on the 4th
    // and the 8th lossy round.
    for _ in 0..7 {
        f.send(policed(&f, 30));
        assert_eq!(
            f.bbr.lt_bw.bw_bps(),
            None,
            "not two intervals of 4 rounds yet"
        );
    }
    f.send(policed(&f, 30));
    assert_eq!(f.bbr.lt_bw.bw_bps(), Some(20e6));
    assert_eq!(
        f.bbr.max_bw.get(),
        47e6,
        "the max filter still holds the burst's rate"
    );
    for round in 0..48 {
        assert!(
            close(f.pacing_bps(), 20e6 * 0.99),
            "round {round}: gain 1, never probing"
        );
        let probing_extra = if f.phase() == 0 { 2.0 } else { 0.0 };
        assert_eq!(
            f.bbr.cwnd(),
            2.0 * 80.0 + 6.0 + probing_extra,
            "2 BDPs at 20 Mb/s"
        );
        f.send(policed(&f, 0));
    }
    assert_eq!(
        f.bbr.lt_bw.bw_bps(),
        None,
        "48 rounds: back to the max filter"
    );
}

#[test]
fn with_long_term_bw_off_a_policer_is_never_found() {
    let mut f = Flow::in_probe_bw(1);
    f.bbr.params.long_term_bw = false;
    for _ in 0..20 {
        f.send(Ack {
            acked: 80,
            lost: 30,
            ce_pkts: 0,
            round_start: true,
            rate: Some(rate(20)),
            ..f.ack(RTT_NS)
        });
    }
    assert_eq!(f.bbr.lt_bw.bw_bps(), None);
    assert!(f.bbr.lt_bw.is_idle());
}
