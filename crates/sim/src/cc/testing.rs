//! A lone controller on a scripted path, driven round by round (STYLE-MODELS.md §10, "Testing a
//! controller", layer 2), and the fixtures the per-ACK unit tests share.
//!
//! Each round the sender sends a full window — `floor(cwnd)` packets, at least one — and every
//! packet is acknowledged one RTT later, the ACKs spread evenly over the round. The ACK clock
//! keeps the pipe full, so each ACK reports the round's window in flight. A round picked by the
//! loss script loses one packet: the round's first ACK reports it, the controller reduces
//! (`on_congestion`), the rest of the round is fast recovery (no growth), the retransmission is
//! acknowledged with the round and its end exits recovery — one RTT of recovery, as with SACK.
//!
//! The RTT is constant unless a bottleneck is set: then a window above the bandwidth-delay
//! product waits in the queue and stretches the RTT in proportion (`rtt = base · W / BDP`),
//! which is what delay-based start-up and BBR need to see.

use super::{Ack, CaState, CongestionControl, CongestionEvent, Init, Path, RateSample, Signal};

pub const MSS_BYTES: u32 = 1448;

/// What one round did.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Round {
    pub index: u64,
    /// Packets sent: the window the controller allowed at the start of the round.
    pub sent: u32,
    pub rtt_ns: u64,
    pub lost: bool,
    /// Window and threshold after the round's last ACK.
    pub cwnd: f64,
    pub ssthresh: f64,
}

/// The path and the sender's clocks and counters, advanced one round at a time.
#[derive(Debug, Clone)]
pub struct Rounds {
    base_rtt_ns: u64,
    packets_per_ack: u32,
    bdp_pkts: f64,
    now_ns: u64,
    round: u64,
    delivered: u64,
    min_rtt_ns: u64,
    srtt_ns: u64,
}

impl Rounds {
    /// A path of constant RTT whose receiver acknowledges every packet.
    pub fn new(rtt_ms: f64) -> Self {
        Self {
            base_rtt_ns: (rtt_ms * 1e6) as u64,
            packets_per_ack: 1,
            bdp_pkts: f64::INFINITY,
            now_ns: 0,
            round: 0,
            delivered: 0,
            min_rtt_ns: u64::MAX,
            srtt_ns: 0,
        }
    }

    /// The receiver acknowledges every `n`th packet (RFC 5681 §4.2 delayed ACKs: 2).
    pub fn delayed_acks(mut self, n: u32) -> Self {
        self.packets_per_ack = n.max(1);
        self
    }

    /// A bottleneck that holds `bdp_pkts` in flight at the base RTT; more waits in its queue.
    pub fn bottleneck(mut self, bdp_pkts: f64) -> Self {
        self.bdp_pkts = bdp_pkts;
        self
    }

    pub fn now_ns(&self) -> u64 {
        self.now_ns
    }

    pub fn path(&self) -> Path {
        Path {
            mss_bytes: MSS_BYTES,
            srtt_ns: self.srtt_ns,
            min_rtt_ns: self.min_rtt_ns,
            delivered: self.delivered,
            round: self.round,
        }
    }

    /// Let the connection sit idle for `idle_ms`, then tell the controller sending resumes.
    pub fn idle(&mut self, cc: &mut dyn CongestionControl, idle_ms: f64) {
        let idle_ns = (idle_ms * 1e6) as u64;
        self.now_ns += idle_ns;
        cc.on_idle_restart(self.now_ns, idle_ns, &self.path());
    }

    /// `count` rounds; `lose(round, sent)` says whether a round loses a packet.
    pub fn run(
        &mut self,
        cc: &mut dyn CongestionControl,
        count: u64,
        mut lose: impl FnMut(u64, u32) -> bool,
    ) -> Vec<Round> {
        (0..count)
            .map(|_| {
                let sent = window(cc);
                let lost = lose(self.round, sent);
                self.round(cc, lost)
            })
            .collect()
    }

    /// One round: send a window, acknowledge it, lose a packet of it if `lost`.
    pub fn round(&mut self, cc: &mut dyn CongestionControl, lost: bool) -> Round {
        let index = self.round;
        let sent = window(cc);
        let rtt_ns = self.rtt_ns(sent);
        self.min_rtt_ns = self.min_rtt_ns.min(rtt_ns);
        self.srtt_ns = rtt_ns;
        let start_ns = self.now_ns;
        let acks = sent.div_ceil(self.packets_per_ack);
        let mut unacked = sent;
        let mut ca_state = CaState::Open;
        for i in 0..acks {
            self.now_ns = start_ns + rtt_ns * u64::from(i + 1) / u64::from(acks);
            let acked = self.packets_per_ack.min(unacked);
            unacked -= acked;
            let detects_loss = lost && i == 0;
            if detects_loss {
                let ev = CongestionEvent {
                    now_ns: self.now_ns,
                    signal: Signal::Loss,
                    in_flight: sent,
                    lost: 1,
                };
                cc.on_congestion(&ev, &self.path());
                ca_state = CaState::Recovery;
            }
            self.delivered += u64::from(acked);
            let ack = Ack {
                now_ns: self.now_ns,
                acked,
                lost: u32::from(detects_loss),
                ce_pkts: 0,
                rtt_ns: Some(rtt_ns),
                prior_in_flight: sent,
                in_flight: sent,
                round_start: i == 0,
                ca_state,
                cwnd_limited: true,
                rate: Some(RateSample {
                    delivered: sent,
                    interval_ns: rtt_ns,
                    is_app_limited: false,
                }),
            };
            cc.on_ack(&ack, &self.path());
        }
        if lost {
            cc.on_recovery_exit(self.now_ns, &self.path());
        }
        self.round += 1;
        Round {
            index,
            sent,
            rtt_ns,
            lost,
            cwnd: cc.cwnd(),
            ssthresh: cc.ssthresh(),
        }
    }

    fn rtt_ns(&self, in_flight: u32) -> u64 {
        let stretch = (f64::from(in_flight) / self.bdp_pkts).max(1.0);
        (self.base_rtt_ns as f64 * stretch) as u64
    }
}

/// Packets the sender may send in a round.
fn window(cc: &dyn CongestionControl) -> u32 {
    (cc.cwnd().floor() as u32).max(1)
}

/// Loss script: nothing is lost.
pub fn no_loss(_round: u64, _sent: u32) -> bool {
    false
}

/// Loss script: one packet in each of the listed rounds.
pub fn losses_in(rounds: &[u64]) -> impl FnMut(u64, u32) -> bool + '_ {
    move |round, _sent| rounds.contains(&round)
}

/// Loss script: one packet in every `1/p` sent, evenly — the deterministic loss model behind the
/// response functions of RFC 3649 §5 and RFC 9438 §5. Losses falling in one window make one
/// congestion event, as the sender reports them.
pub fn loss_rate(p: f64) -> impl FnMut(u64, u32) -> bool {
    let (mut sent_total, mut losses) = (0u64, 0u64);
    move |_round, sent| {
        sent_total += u64::from(sent);
        let due = (sent_total as f64 * p).floor() as u64;
        let lost = due > losses;
        losses = due;
        lost
    }
}

/// Mean packets sent per round.
pub fn mean_window(rounds: &[Round]) -> f64 {
    rounds.iter().map(|r| f64::from(r.sent)).sum::<f64>() / rounds.len() as f64
}

/// The window at the end of each round, in whole packets, for narrative assertions.
pub fn cwnds(rounds: &[Round]) -> Vec<u32> {
    rounds.iter().map(|r| r.cwnd.round() as u32).collect()
}

pub fn init(initial_cwnd_pkts: f64) -> Init {
    Init {
        mss_bytes: MSS_BYTES,
        initial_cwnd_pkts,
        seed: 0,
    }
}

/// A path before any RTT sample.
pub fn path() -> Path {
    Path {
        mss_bytes: MSS_BYTES,
        srtt_ns: 0,
        min_rtt_ns: u64::MAX,
        delivered: 0,
        round: 0,
    }
}

/// An ACK of `acked` packets in Open state, cwnd-limited, without an RTT sample.
pub fn ack(acked: u32) -> Ack {
    Ack {
        now_ns: 0,
        acked,
        lost: 0,
        ce_pkts: 0,
        rtt_ns: None,
        prior_in_flight: 0,
        in_flight: 0,
        round_start: false,
        ca_state: CaState::Open,
        cwnd_limited: true,
        rate: None,
    }
}

/// A congestion event with one packet lost.
pub fn loss() -> CongestionEvent {
    CongestionEvent {
        now_ns: 0,
        signal: Signal::Loss,
        in_flight: 0,
        lost: 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::aimd::Aimd;
    use crate::cc::reno::{self, RenoParams};

    fn reno() -> Aimd {
        reno::new(RenoParams::default(), &init(10.0))
    }

    #[test]
    fn slow_start_doubles_the_window_every_round() {
        let mut cc = reno();
        let rounds = Rounds::new(100.0).run(&mut cc, 4, no_loss);
        assert_eq!(cwnds(&rounds), [20, 40, 80, 160]);
        assert_eq!(
            rounds.iter().map(|r| r.sent).collect::<Vec<_>>(),
            [10, 20, 40, 80]
        );
    }

    #[test]
    fn a_loss_round_reduces_once_and_recovers_within_the_round() {
        let mut cc = reno();
        let mut path = Rounds::new(100.0);
        let rounds = path.run(&mut cc, 3, losses_in(&[1]));
        // Round 0 doubles to 20; round 1 sends 20, loses one and halves to 10 without growing
        // in recovery; round 2 is congestion avoidance from 10: +1 per window of ACKs.
        assert_eq!(cwnds(&rounds), [20, 10, 11]);
        assert!(rounds[1].lost && rounds[1].ssthresh == 10.0);
        assert_eq!(path.now_ns(), 300_000_000);
        assert_eq!(path.path().delivered, 10 + 20 + 10);
    }

    #[test]
    fn delayed_acks_halve_the_acks_and_the_rfc5681_growth() {
        let per_ack = RenoParams {
            abc: false,
            ..RenoParams::default()
        };
        let mut cc = reno::new(per_ack, &init(10.0));
        let rounds = Rounds::new(100.0).delayed_acks(2).run(&mut cc, 2, no_loss);
        assert_eq!(cwnds(&rounds), [15, 23]); // 10 + 5 ACKs; 15 + 8 ACKs (7 of 2, 1 of 1)
    }

    #[test]
    fn a_bottleneck_queues_what_exceeds_the_bdp() {
        let mut cc = reno();
        let rounds = Rounds::new(10.0).bottleneck(20.0).run(&mut cc, 3, no_loss);
        let rtts: Vec<_> = rounds.iter().map(|r| r.rtt_ns / 1_000_000).collect();
        assert_eq!(rtts, [10, 10, 20]); // 10, 20 and 40 packets in flight
    }

    #[test]
    fn loss_rate_drops_one_packet_in_every_1_over_p() {
        let mut lose = loss_rate(0.01);
        let losses = (0..10).filter(|&r| lose(r, 30)).count();
        assert_eq!(losses, 3); // 300 packets
    }

    /// The driver reproduces the periodic-loss model it exists to test against: Reno with one
    /// ACK per packet averages sqrt(3/(2p)) = 1.22/sqrt(p) (Mathis et al. 1997;
    /// docs/methodology.md §4) — 122 packets at p = 1e-4.
    #[test]
    fn reno_follows_the_square_root_law() {
        let mut cc = reno();
        let mut path = Rounds::new(100.0);
        path.run(&mut cc, 200, loss_rate(1e-4)); // slow start and the first sawteeth
        let mean = mean_window(&path.run(&mut cc, 2000, loss_rate(1e-4)));
        assert!((mean / (1.5e4f64).sqrt() - 1.0).abs() < 0.02, "{mean}");
    }
}
