//! BBRv3's state-machine rules, one test each, on hand-made ACKs or on the round-by-round
//! path of `cc::testing` (draft-ietf-ccwg-bbr sections and Appendix test cases cited).

use super::*;
use crate::cc::testing::{self, no_loss, Rounds, MSS_BYTES};
use crate::cc::RateSample;

const MS: u64 = NS_PER_MS;
const BDP_PKTS: f64 = 100.0;

fn bbr3(seed: u64) -> Bbr3 {
    let init = Init {
        seed,
        ..testing::init(10.0)
    };
    Bbr3::new(Bbr3Params::default(), &init)
}

/// A flow past STARTUP on a 40 ms path of 100 packets' BDP, cruising in ProbeBW.
fn in_probe_bw(seed: u64) -> (Bbr3, Rounds) {
    let mut path = Rounds::new(40.0).bottleneck(BDP_PKTS);
    let mut bbr = bbr3(seed);
    path.run(&mut bbr, 30, no_loss);
    assert!(bbr.state.is_probe_bw(), "{:?}", bbr.state);
    (bbr, path)
}

/// An ACK of one packet at `now_ns` with `in_flight` out, a 40 ms RTT and a sample at the
/// path's 100 packets per 40 ms.
fn ack(now_ns: u64, in_flight: u32) -> Ack {
    Ack {
        now_ns,
        rtt_ns: Some(40 * MS),
        prior_in_flight: in_flight,
        in_flight,
        rate: Some(RateSample {
            delivered: 100,
            interval_ns: 40 * MS,
            is_app_limited: false,
        }),
        ..testing::ack(1)
    }
}

fn path_at(delivered: u64) -> Path {
    Path {
        mss_bytes: MSS_BYTES,
        srtt_ns: 40 * MS,
        min_rtt_ns: 40 * MS,
        delivered,
        round: 0,
    }
}

#[test]
fn startup_ends_on_a_bandwidth_plateau_then_drain_then_probe_bw_down() {
    // Appendix A.1 and A.4: three rounds under 25 % growth fill the pipe; DRAIN lasts at most
    // three rounds (this path model keeps the window in flight, so only time ends it).
    let mut path = Rounds::new(40.0).bottleneck(BDP_PKTS);
    let mut bbr = bbr3(1);
    let mut states = vec![];
    for _ in 0..20 {
        path.round(&mut bbr, false);
        states.push(bbr.state);
    }
    let drain_at = states.iter().position(|&s| s == State::Drain).unwrap();
    let down_at = states
        .iter()
        .position(|&s| s == State::ProbeBwDown)
        .unwrap();
    assert!(states[..drain_at].iter().all(|&s| s == State::Startup));
    assert!((2..=5).contains(&(down_at - drain_at)), "{states:?}");
    let bw_pkts = bbr.max_bw.get() * 0.040 / f64::from(MSS_BYTES * 8);
    assert!(
        (bw_pkts - BDP_PKTS).abs() < 2.0,
        "max_bw within 2 %: {bw_pkts}"
    );
}

#[test]
fn startup_paces_at_2_77_and_drain_at_half() {
    let mut bbr = bbr3(1);
    assert_eq!(bbr.state.pacing_gain(&bbr.params), 2.77);
    bbr.state = State::Drain;
    assert_eq!(bbr.state.pacing_gain(&bbr.params), 0.5);
}

#[test]
fn drain_ends_when_in_flight_is_down_to_the_bdp() {
    // Appendix A.3.
    let mut bbr = bbr3(1);
    bbr.on_ack(&ack(40 * MS, 10), &path_at(10));
    bbr.state = State::Drain;
    bbr.drain_start_round = bbr.round_count;
    let bdp = bbr.inflight(1.0);
    bbr.check_drain_done(&ack(50 * MS, bdp as u32 + 1));
    assert_eq!(bbr.state, State::Drain);
    bbr.check_drain_done(&ack(60 * MS, bdp as u32));
    assert_eq!(bbr.state, State::ProbeBwDown);
}

#[test]
fn startup_ends_on_high_loss_after_a_round_of_recovery() {
    // §5.3.1.3: a round in recovery that lost over 2 % in at least 6 loss events.
    let mut bbr = bbr3(1);
    bbr.on_ack(&ack(40 * MS, 200), &path_at(100));
    bbr.recovery_since_round = Some(bbr.round_count);
    bbr.round_count += 2;
    bbr.congestion.last_round = congestion::RoundCounts {
        delivered_pkts: 190,
        lost_pkts: 10,
        ce_pkts: 0,
        loss_events: 6,
    };
    bbr.round_start = true;
    bbr.check_startup_done();
    assert_eq!(bbr.state, State::Drain);
    assert!(bbr.full_bw.reached());
    assert!(bbr.inflight_hi >= bbr.bdp_multiple(1.0), "inflight_hi set");

    let mut five_events = bbr3(1);
    five_events.recovery_since_round = Some(0);
    five_events.round_count = 2;
    five_events.congestion.last_round = congestion::RoundCounts {
        loss_events: 5,
        ..bbr.congestion.last_round
    };
    five_events.round_start = true;
    five_events.check_startup_done();
    assert_eq!(five_events.state, State::Startup, "5 events are not enough");
}

#[test]
fn probe_bw_waits_two_to_three_seconds_drawn_from_the_seed() {
    // §5.3.3.8.3 PickProbeWait: 2 s + U(0, 1 s), the same for the same seed.
    let waits: Vec<u64> = (0..40)
        .map(|seed| {
            let mut bbr = bbr3(seed);
            bbr.start_probe_bw_down(0, 0);
            bbr.bw_probe_wait_ns
        })
        .collect();
    assert!(waits.iter().all(|w| (2000 * MS..=3000 * MS).contains(w)));
    let spread = waits.iter().max().unwrap() - waits.iter().min().unwrap();
    assert!(
        spread > 800 * MS,
        "40 draws cover most of the second: {spread}"
    );
    let again: Vec<u64> = (0..40)
        .map(|seed| {
            let mut bbr = bbr3(seed);
            bbr.start_probe_bw_down(0, 0);
            bbr.bw_probe_wait_ns
        })
        .collect();
    assert_eq!(waits, again, "deterministic per seed");
}

#[test]
fn cruise_gives_way_to_refill_after_the_wait_and_refill_to_up_after_a_round() {
    let (mut bbr, _) = in_probe_bw(3);
    let start_ns = path_now_ns(&bbr);
    bbr.min_rtt.schedule_next_probe(start_ns + 5000 * MS); // no ProbeRTT in the way
    bbr.start_probe_bw_down(start_ns, 80);
    bbr.rounds_since_probe_up = 0;
    bbr.state = State::ProbeBwCruise;
    let wait_ns = bbr.bw_probe_wait_ns;
    let mut delivered = 1_000_000;
    let mut now_ns = start_ns;
    while bbr.state == State::ProbeBwCruise && now_ns < start_ns + 4000 * MS {
        now_ns += MS;
        delivered += 1;
        // Only the wall-clock wait may end CRUISE here, not the count of rounds.
        bbr.rounds_since_probe_up = 0;
        bbr.on_ack(&ack(now_ns, 80), &path_at(delivered));
    }
    assert_eq!(bbr.state, State::ProbeBwRefill);
    assert!(now_ns > start_ns + wait_ns && now_ns <= start_ns + wait_ns + 2 * MS);
    for _ in 0..200 {
        now_ns += MS;
        delivered += 1;
        bbr.on_ack(&ack(now_ns, 80), &path_at(delivered));
        if bbr.state != State::ProbeBwRefill {
            break;
        }
    }
    assert_eq!(bbr.state, State::ProbeBwUp, "one round of REFILL");
    assert_eq!(
        bbr.congestion.bw_lo_bps,
        f64::INFINITY,
        "REFILL lifted the short-term model"
    );
}

#[test]
fn reno_coexistence_bounds_the_rounds_between_probes() {
    // §5.3.3.8.3: probe after min(BDP in packets, 63) rounds even before the wait.
    let (mut bbr, _) = in_probe_bw(3);
    bbr.start_probe_bw_down(0, 80);
    bbr.state = State::ProbeBwCruise;
    let bound = bbr.target_inflight().min(63.0) as u64;
    bbr.rounds_since_probe_up = bound - 1;
    assert!(!bbr.is_time_to_probe_bw(&ack(MS, 80)));
    bbr.rounds_since_probe_up = bound;
    assert!(bbr.is_time_to_probe_bw(&ack(MS, 80)));
    assert_eq!(bbr.state, State::ProbeBwRefill);
}

#[test]
fn down_cruises_only_below_the_headroom_and_the_bdp() {
    // Appendix A.8: DOWN → CRUISE once in-flight ≤ 85 % of inflight_hi and ≤ the BDP.
    let (mut bbr, _) = in_probe_bw(3);
    bbr.inflight_hi = 100.0;
    assert_eq!(bbr.inflight_with_headroom(), 85.0);
    assert!(!bbr.is_time_to_cruise(&ack(0, 86)));
    assert!(bbr.is_time_to_cruise(&ack(0, 85)));
    bbr.inflight_hi = f64::INFINITY;
    let bdp = bbr.inflight(1.0) as u32;
    assert!(!bbr.is_time_to_cruise(&ack(0, bdp + 1)));
}

/// A time after the scripted path's rounds: the flow's cycle began before it.
fn path_now_ns(bbr: &Bbr3) -> u64 {
    bbr.cycle_stamp_ns + 100 * MS
}

/// A flow in ProbeBW_UP whose probe samples are arriving.
fn probing_up(seed: u64) -> Bbr3 {
    let (mut bbr, _) = in_probe_bw(seed);
    bbr.state = State::ProbeBwUp;
    bbr.is_bw_probe_sample = true;
    bbr.ack_phase = AckPhase::ProbeFeedback;
    bbr
}

#[test]
fn a_probe_losing_over_two_percent_sets_inflight_hi_and_goes_down() {
    // §5.5.10.2: inflight_hi = max(tx_in_flight, β · target); Appendix A.6.
    let mut bbr = probing_up(5);
    bbr.congestion.round.lost_pkts = 2;
    assert!(
        !bbr.is_inflight_too_high(&ack(0, 100)),
        "2 of 100 is not over 2 %"
    );
    bbr.congestion.round.lost_pkts = 4;
    assert!(bbr.adapt_long_term_model(&ack(0, 150), None), "4 of 150 is");
    assert_eq!(bbr.state, State::ProbeBwDown);
    let floor = bbr.target_inflight() * 0.7;
    assert_eq!(bbr.inflight_hi, 150.0_f64.max(floor));
    assert!(bbr.prev_probe_too_high && !bbr.is_bw_probe_sample);
}

#[test]
fn inflight_hi_never_falls_below_beta_times_the_target() {
    let mut bbr = probing_up(5);
    bbr.congestion.round.lost_pkts = 10;
    bbr.adapt_long_term_model(&ack(0, 20), None);
    assert_eq!(bbr.inflight_hi, bbr.target_inflight() * 0.7);
}

#[test]
fn marks_on_half_a_probe_set_inflight_hi_only_on_short_paths() {
    // Google's BBRv3: CE on more than 50 % of a round's packets, min_rtt ≤ 5 ms.
    let mut long_path = probing_up(5);
    long_path.congestion.ecn_seen = true;
    long_path.congestion.last_round = congestion::RoundCounts::default();
    long_path.congestion.round.delivered_pkts = 100;
    long_path.congestion.round.ce_pkts = 60;
    assert!(
        !long_path.adapt_long_term_model(&ack(0, 150), None),
        "40 ms > 5 ms"
    );
    assert!(long_path.inflight_hi.is_infinite());

    let mut short_path = long_path.clone();
    short_path.min_rtt = MinRtt::new(5 * NS_PER_SEC, 10 * NS_PER_SEC);
    short_path.min_rtt.update(0, Some(2 * MS));
    assert!(short_path.adapt_long_term_model(&ack(0, 150), None));
    assert_eq!(short_path.state, State::ProbeBwDown);
    assert!(short_path.inflight_hi.is_finite());

    let mut few_marks = long_path.clone();
    few_marks.min_rtt = short_path.min_rtt;
    few_marks.congestion.round.ce_pkts = 50;
    assert!(
        !few_marks.adapt_long_term_model(&ack(0, 150), None),
        "50 % is not over"
    );
}

#[test]
fn up_ends_once_the_bandwidth_plateaus() {
    // Appendix A.5: three rounds without 25 % growth, cwnd not held by inflight_hi.
    let mut bbr = probing_up(5);
    bbr.full_bw.reset(1e6);
    for _ in 0..3 {
        bbr.full_bw.on_round(1e6, 1.25, 3);
    }
    let mut a = ack(0, 100);
    a.cwnd_limited = false;
    assert!(bbr.is_time_to_go_down(&a, None));
}

#[test]
fn a_precautionary_probe_stops_at_inflight_hi() {
    // §5.3.3.6: after a probe that went too high, UP ends as in-flight reaches inflight_hi.
    let mut bbr = probing_up(5);
    bbr.prev_probe_too_high = true;
    bbr.inflight_hi = 120.0;
    assert!(!bbr.is_time_to_go_down(&ack(0, 119), None));
    assert!(bbr.is_time_to_go_down(&ack(0, 120), None));
    assert!(bbr.prev_probe_precautionary);
}

#[test]
fn probe_rtt_comes_after_five_seconds_holds_half_the_bdp_and_ends_after_200_ms_and_a_round() {
    // Appendix A.10; §5.6.4.5: cwnd ≤ max(0.5 · BDP, 4 packets).
    let (mut bbr, mut path) = in_probe_bw(7);
    let mut rounds = 0;
    while bbr.state != State::ProbeRtt && rounds < 400 {
        path.round(&mut bbr, false);
        rounds += 1;
    }
    assert_eq!(
        bbr.state,
        State::ProbeRtt,
        "ProbeRTT within 400 rounds of 40 ms"
    );
    let entered_ns = path.now_ns();
    assert!(
        path.now_ns() <= 5500 * MS + 1000 * MS,
        "5 s interval: {}",
        path.now_ns()
    );
    let probe_cwnd = bbr.probe_rtt_cwnd();
    assert!((probe_cwnd - (bbr.bdp_multiple(0.5)).max(4.0)).abs() < 1e-9);
    path.round(&mut bbr, false);
    assert!(
        bbr.cwnd() <= probe_cwnd + 1e-9,
        "{} > {probe_cwnd}",
        bbr.cwnd()
    );
    while bbr.state == State::ProbeRtt {
        path.round(&mut bbr, false);
    }
    let held_ns = path.now_ns() - entered_ns;
    assert!(held_ns >= 200 * MS, "{held_ns}");
    assert_eq!(
        bbr.state,
        State::ProbeBwCruise,
        "back to ProbeBW through DOWN"
    );
}

#[test]
fn an_idle_restart_skips_probe_rtt() {
    // Appendix A.11.
    let (mut bbr, mut path) = in_probe_bw(7);
    path.idle(&mut bbr, 6000.0);
    assert!(bbr.idle_restart);
    let a = ack(path.now_ns() + 10 * MS, 0);
    bbr.check_probe_rtt(&a, &path.path());
    assert_ne!(bbr.state, State::ProbeRtt);
}

#[test]
fn recovery_restores_the_cwnd_saved_before_it() {
    // §5.6.4.4 SaveCwnd / RestoreCwnd; an RTO leaves one packet.
    let (mut bbr, path) = in_probe_bw(7);
    let before = bbr.cwnd();
    bbr.on_timeout(0, &path.path());
    assert_eq!(bbr.cwnd(), 1.0);
    bbr.on_recovery_exit(0, &path.path());
    assert_eq!(bbr.cwnd(), before);
}

#[test]
fn the_same_seed_gives_the_same_flow() {
    let run = |seed| {
        let mut path = Rounds::new(40.0).bottleneck(BDP_PKTS);
        let mut bbr = bbr3(seed);
        testing::cwnds(&path.run(&mut bbr, 400, testing::loss_rate(0.01)))
    };
    assert_eq!(run(11), run(11));
}
