//! The short-term model and the signals it is cut by (draft-ietf-ccwg-bbr §5.5.10.3): per
//! round the packets delivered, lost and CE-marked, the latest delivery rate and volume, and
//! `bw_lo` / `inflight_lo` (`bw_shortterm`, `inflight_shortterm`), cut by β on each lossy
//! round outside the probing states. The ECN response (α, an EWMA of the CE-marked fraction of
//! each round, cutting inflight_lo by α/3) is Google's BBRv3, which the draft leaves open
//! (§3.7).

use super::params::Bbr3Params;

/// What one round trip delivered, lost and had marked.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RoundCounts {
    pub delivered_pkts: u64,
    pub lost_pkts: u64,
    pub ce_pkts: u64,
    /// ACKs that marked packets lost: each a hole the SACK scoreboard found, the nearest the
    /// controller sees to the draft's "discontiguous sequence ranges lost" (§5.3.1.3).
    pub loss_events: u32,
}

impl RoundCounts {
    /// Lost over sent (delivered or lost).
    pub fn loss_rate(&self) -> f64 {
        let sent = self.delivered_pkts + self.lost_pkts;
        if sent == 0 {
            0.0
        } else {
            self.lost_pkts as f64 / sent as f64
        }
    }

    pub fn ce_fraction(&self) -> f64 {
        if self.delivered_pkts == 0 {
            0.0
        } else {
            self.ce_pkts as f64 / self.delivered_pkts as f64
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct Congestion {
    /// The round under way and the last complete one.
    pub round: RoundCounts,
    pub last_round: RoundCounts,
    /// `BBR.bw_latest`, `BBR.inflight_latest`: one-round maxima of the delivery rate and of
    /// the packets a sample delivered.
    bw_latest_bps: f64,
    inflight_latest_pkts: f64,
    /// `BBR.is_loss_in_round`.
    loss_in_round: bool,
    /// `BBR.bw_shortterm`, `BBR.inflight_shortterm`: infinite while unset.
    pub bw_lo_bps: f64,
    pub inflight_lo_pkts: f64,
    /// The EWMA of the CE-marked fraction per round; 1 until the first round is measured, so
    /// the first marks count in full (Google's BBRv3).
    pub ecn_alpha: f64,
    /// A CE mark has been seen: ECN is in use on this path.
    pub ecn_seen: bool,
}

impl Default for Congestion {
    fn default() -> Self {
        Self {
            round: RoundCounts::default(),
            last_round: RoundCounts::default(),
            bw_latest_bps: 0.0,
            inflight_latest_pkts: 0.0,
            loss_in_round: false,
            bw_lo_bps: f64::INFINITY,
            inflight_lo_pkts: f64::INFINITY,
            ecn_alpha: 1.0,
            ecn_seen: false,
        }
    }
}

impl Congestion {
    /// Count an ACK (§5.5.10.3 `UpdateLatestDeliverySignals`, §5.5.10.2 `NoteLoss`).
    pub fn on_ack(&mut self, acked: u32, lost: u32, ce: u32, sample: Option<(f64, u32)>) {
        let r = &mut self.round;
        r.delivered_pkts += u64::from(acked);
        r.lost_pkts += u64::from(lost);
        r.ce_pkts += u64::from(ce);
        r.loss_events += u32::from(lost > 0);
        self.loss_in_round |= lost > 0;
        self.ecn_seen |= ce > 0;
        if let Some((rate_bps, delivered_pkts)) = sample {
            self.bw_latest_bps = self.bw_latest_bps.max(rate_bps);
            self.inflight_latest_pkts = self.inflight_latest_pkts.max(f64::from(delivered_pkts));
        }
    }

    /// The round is over: keep its counts, and move α toward its CE-marked fraction.
    pub fn end_round(&mut self, alpha_gain: f64) {
        self.last_round = std::mem::take(&mut self.round);
        if self.ecn_seen {
            let fraction = self.last_round.ce_fraction();
            self.ecn_alpha += alpha_gain * (fraction - self.ecn_alpha);
        }
    }

    /// The CE-marked fraction over the last complete round and the current one: at least a
    /// round of ACKs, so one marked ACK early in a round is not read as 100 %.
    pub fn recent_ce_fraction(&self) -> f64 {
        let delivered = self.round.delivered_pkts + self.last_round.delivered_pkts;
        let ce = self.round.ce_pkts + self.last_round.ce_pkts;
        if delivered == 0 {
            0.0
        } else {
            ce as f64 / delivered as f64
        }
    }

    /// Once per round outside the probing states (§5.5.10.3
    /// `AdaptLowerBoundsFromCongestion`): a lossy round cuts the short-term model by β, never
    /// below what the round delivered; a marked one cuts inflight_lo by `α · ecn_factor`.
    pub fn adapt_lower_bounds(&mut self, p: &Bbr3Params, max_bw_bps: f64, cwnd: f64, ecn: bool) {
        let marked = ecn && self.last_round.ce_pkts > 0;
        if self.loss_in_round || marked {
            // §5.5.10.3 `InitLowerBounds`.
            if self.bw_lo_bps.is_infinite() {
                self.bw_lo_bps = max_bw_bps;
            }
            if self.inflight_lo_pkts.is_infinite() {
                self.inflight_lo_pkts = cwnd;
            }
        }
        if self.loss_in_round {
            self.bw_lo_bps = self.bw_latest_bps.max(p.beta * self.bw_lo_bps);
            self.inflight_lo_pkts = self
                .inflight_latest_pkts
                .max(p.beta * self.inflight_lo_pkts);
        }
        if marked {
            let cut = self.inflight_lo_pkts * (1.0 - self.ecn_alpha * p.ecn_factor);
            self.inflight_lo_pkts = self.inflight_lo_pkts.min(cut);
        }
    }

    /// After the round's response (§5.5.10.3 `UpdateCongestionSignals`, the flag's reset).
    pub fn clear_loss_in_round(&mut self) {
        self.loss_in_round = false;
    }

    /// §5.5.10.3 `AdvanceLatestDeliverySignals`, at the end of a round's first ACK.
    pub fn advance_latest(&mut self, sample: Option<(f64, u32)>) {
        let (rate_bps, delivered_pkts) = sample.unwrap_or((0.0, 0));
        self.bw_latest_bps = rate_bps;
        self.inflight_latest_pkts = f64::from(delivered_pkts);
    }

    pub fn inflight_latest_pkts(&self) -> f64 {
        self.inflight_latest_pkts
    }

    /// §5.5.10.3 `ResetCongestionSignals`.
    pub fn reset_signals(&mut self) {
        self.loss_in_round = false;
        self.bw_latest_bps = 0.0;
        self.inflight_latest_pkts = 0.0;
    }

    /// §5.5.10.3 `ResetShortTermModel`.
    pub fn reset_short_term(&mut self) {
        self.bw_lo_bps = f64::INFINITY;
        self.inflight_lo_pkts = f64::INFINITY;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lossy_round_cuts_the_short_term_model_by_beta_but_not_below_the_latest() {
        let p = Bbr3Params::default();
        let mut c = Congestion::default();
        c.on_ack(10, 1, 0, Some((50.0, 40)));
        c.end_round(p.ecn_alpha_gain);
        c.adapt_lower_bounds(&p, 100.0, 200.0, false);
        assert_eq!(c.bw_lo_bps, 70.0, "0.7 · max_bw");
        assert_eq!(c.inflight_lo_pkts, 140.0, "0.7 · cwnd");
        c.clear_loss_in_round();
        c.advance_latest(Some((90.0, 120)));
        c.on_ack(10, 1, 0, None);
        c.end_round(p.ecn_alpha_gain);
        c.adapt_lower_bounds(&p, 100.0, 200.0, false);
        assert_eq!(c.bw_lo_bps, 90.0, "the latest rate beats 0.7 · 70");
        assert_eq!(c.inflight_lo_pkts, 120.0);
        c.clear_loss_in_round();
        c.adapt_lower_bounds(&p, 100.0, 200.0, false);
        assert_eq!(c.bw_lo_bps, 90.0, "a clean round changes nothing");
    }

    #[test]
    fn alpha_follows_the_marked_fraction_with_gain_one_sixteenth() {
        let p = Bbr3Params::default();
        let mut c = Congestion::default();
        c.on_ack(100, 0, 20, None);
        c.end_round(p.ecn_alpha_gain);
        assert_eq!(c.ecn_alpha, 1.0 - (1.0 - 0.2) / 16.0);
        c.advance_latest(None);
        c.adapt_lower_bounds(&p, 100.0, 300.0, true);
        let expected = 300.0 * (1.0 - c.ecn_alpha / 3.0);
        assert!((c.inflight_lo_pkts - expected).abs() < 1e-9);
        assert_eq!(c.bw_lo_bps, 100.0, "marks leave bw_lo at max_bw");
    }

    #[test]
    fn marks_are_ignored_where_ecn_does_not_apply() {
        let p = Bbr3Params::default();
        let mut c = Congestion::default();
        c.on_ack(100, 0, 60, None);
        c.end_round(p.ecn_alpha_gain);
        c.adapt_lower_bounds(&p, 100.0, 300.0, false);
        assert!(c.inflight_lo_pkts.is_infinite());
    }
}
