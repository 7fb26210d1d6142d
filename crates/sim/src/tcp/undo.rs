//! Undoing a window reduction that proved unnecessary.
//!
//! A reduction episode (fast recovery, or a retransmission timeout) keeps the controller as it
//! was before the reduction, as Linux keeps `prior_cwnd` and `prior_ssthresh` (here cwnd and
//! ssthresh live in the controller, so the whole controller is kept). It also counts, from
//! snd_una at its start (Linux `undo_marker`), the segments it retransmitted and those the
//! receiver reported received twice by D-SACK (RFC 2883). When every retransmission has been
//! reported so, none was needed: the loss was not a loss (RFC 3708 §3; Linux `undo_retrans`,
//! `tcp_try_undo_dsack`), and the sender may restore the window (RFC 4015 §3.2's response;
//! Linux `tcp_undo_cwnd_reduction`: cwnd = max(cwnd, prior_cwnd), ssthresh =
//! max(ssthresh, prior_ssthresh)).
//!
//! With timestamps (RFC 7323) the episode also keeps when its first retransmission left (Linux
//! `retrans_stamp`): an ACK that echoes an older TSval was sent for an original, so the
//! retransmission was not needed either (Eifel detection, RFC 3522 §3.2; Linux
//! `tcp_packet_delayed`), without waiting for its D-SACK.

use super::timestamps::{before, tsval};
use crate::cc::CongestionControl;
use crate::packet::Packet;

#[derive(Debug)]
pub struct Episode {
    /// The controller before the reduction.
    prior: Box<dyn CongestionControl>,
    /// snd_una when the episode began (Linux `undo_marker`).
    marker_seq: u64,
    /// Segments at or above the marker retransmitted during the episode.
    retransmitted_pkts: u64,
    /// Of those, how many the receiver reported as duplicates.
    dsacked_pkts: u64,
    /// When the first retransmission of the episode left (Linux `retrans_stamp`).
    first_retransmit_ns: Option<u64>,
}

impl Episode {
    /// An episode starting with `snd_una` and `retrans_out` retransmissions already in flight,
    /// the oldest sent at `oldest_retransmit_ns` (Linux `tcp_init_undo` counts those too, and
    /// keeps `retrans_stamp` while any is out).
    pub fn new(
        prior: Box<dyn CongestionControl>,
        snd_una: u64,
        retrans_out: u64,
        oldest_retransmit_ns: Option<u64>,
    ) -> Self {
        Self {
            prior,
            marker_seq: snd_una,
            retransmitted_pkts: retrans_out,
            dsacked_pkts: 0,
            first_retransmit_ns: oldest_retransmit_ns,
        }
    }

    pub fn on_retransmit(&mut self, seq: u64, now_ns: u64) {
        if seq >= self.marker_seq {
            self.retransmitted_pkts += 1;
        }
        self.first_retransmit_ns.get_or_insert(now_ns);
    }

    /// The receiver reported `[start, end)` received twice. Nothing on the simulated paths
    /// duplicates or reorders a packet, so every duplicate is a segment the sender sent twice;
    /// only those of this episode count (Linux `tcp_check_dsack`: above `undo_marker`).
    pub fn on_dsack(&mut self, (start, end): (u64, u64)) {
        self.dsacked_pkts += end.saturating_sub(start.max(self.marker_seq));
    }

    /// RFC 3708 §3: every retransmission of the episode arrived after its original.
    pub fn all_retransmissions_dsacked(&self) -> bool {
        self.retransmitted_pkts > 0 && self.dsacked_pkts >= self.retransmitted_pkts
    }

    /// RFC 3522 §3.2: an ACK echoing `tsecr` acknowledges an original sent before the
    /// episode's first retransmission. As Linux `tcp_packet_delayed`, also true when nothing
    /// was retransmitted: no retransmission can have been the one needed.
    pub fn echoes_an_original(&self, tsecr: u32) -> bool {
        self.first_retransmit_ns
            .is_none_or(|sent_ns| before(tsecr, tsval(sent_ns)))
    }

    pub fn prior(&self) -> &dyn CongestionControl {
        self.prior.as_ref()
    }

    pub fn into_prior(self) -> Box<dyn CongestionControl> {
        self.prior
    }
}

/// The D-SACK block of `ack`, if its first block is one (RFC 2883 §4: it lies below the
/// cumulative acknowledgement, or within the second block; Linux `tcp_check_dsack`).
pub fn dsack_block(ack: &Packet) -> Option<(u64, u64)> {
    let mut blocks = ack.sack_blocks();
    let first = blocks.next()?;
    let within_second = blocks
        .next()
        .is_some_and(|second| second.0 <= first.0 && first.1 <= second.1);
    (first.0 < ack.seq || within_second).then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::registry;
    use crate::cc::Init;
    use crate::packet::SackBlock;

    fn ack(cum_ack: u64, blocks: &[(u64, u64)]) -> Packet {
        let mut p = Packet::ack(0, cum_ack, 52);
        for (slot, &(s, e)) in p.sack.iter_mut().zip(blocks) {
            *slot = SackBlock::relative_to(cum_ack, s, e);
        }
        p.n_sack = blocks.len() as u8;
        p
    }

    #[test]
    fn rfc_2883_section_4_examples_are_recognised_as_d_sacks() {
        // §4.1.1: a retransmitted segment already acknowledged: the block lies below the ACK.
        assert_eq!(dsack_block(&ack(10, &[(3, 4)])), Some((3, 4)));
        // §4.1.3: a duplicate above the ACK, inside the block that holds it.
        assert_eq!(dsack_block(&ack(10, &[(12, 13), (11, 15)])), Some((12, 13)));
        // Ordinary SACK blocks: the newest first, disjoint from the others.
        assert_eq!(dsack_block(&ack(10, &[(14, 15), (11, 13)])), None);
        assert_eq!(dsack_block(&ack(10, &[(11, 15)])), None);
        assert_eq!(dsack_block(&ack(10, &[])), None);
    }

    fn reno() -> Box<dyn CongestionControl> {
        let init = Init {
            mss_bytes: 1448,
            initial_cwnd_pkts: 10.0,
            seed: 1,
        };
        let mut params = serde_json::Map::new();
        params.insert("name".into(), "reno".into());
        registry::build(&params, &init).unwrap().1
    }

    #[test]
    fn an_episode_is_undone_once_every_retransmission_is_reported_twice() {
        let mut e = Episode::new(reno(), 100, 0, None);
        assert!(
            !e.all_retransmissions_dsacked(),
            "nothing retransmitted yet"
        );
        e.on_retransmit(100, 0);
        e.on_retransmit(101, 0);
        e.on_dsack((90, 101)); // only 100 is of this episode
        assert!(!e.all_retransmissions_dsacked());
        e.on_dsack((101, 102));
        assert!(e.all_retransmissions_dsacked());
        assert_eq!(e.prior().cwnd(), 10.0);
    }

    #[test]
    fn an_echo_older_than_the_first_retransmission_shows_an_original_arrived() {
        // A retransmission already in flight when the episode began, sent at 250 ms, counts
        // as its first (Linux keeps `retrans_stamp` while one is out).
        let mut e = Episode::new(reno(), 100, 1, Some(250_000_000));
        e.on_retransmit(101, 300_000_000);
        assert!(e.echoes_an_original(249));
        // The same millisecond is not older: the echo may be of the retransmission.
        assert!(!e.echoes_an_original(250));
        assert!(!e.echoes_an_original(300));
    }
}
