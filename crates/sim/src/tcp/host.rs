//! How a host's TCP recovers from loss: the switches a host profile (`flow.host`: `linux`,
//! `linux-2.6`, `rfc`) sets. The front end resolves the profile into these values
//! (python/tcpeval/scenario/hosts.py); the sender only reads them.

use serde::Deserialize;

/// How cwnd falls to ssthresh during fast recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowReduction {
    /// At once, when recovery begins (RFC 6675 §5 step 4.2, without RFC 5681's inflation).
    Rfc6675,
    /// Proportional Rate Reduction (RFC 6937, PRR-SSRB; Linux from 3.2).
    Prr,
    /// Rate halving: one segment less per two ACKs until ssthresh (Linux 2.6 `tcp_cwnd_down`).
    RateHalving,
}

/// When a segment not yet SACKed is taken for lost (with SACK on).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LossDetection {
    /// Once DupThresh (3) segments above it are SACKed (RFC 6675 §4 IsLost).
    Dupthresh,
    /// RACK (RFC 8985 §6) as Linux runs it on a path that has shown no reordering
    /// (`tcp_rack_reo_wnd`): a segment is lost once one sent a reordering window after it has
    /// been delivered; the window is a quarter of the minimum RTT, and none once three segments
    /// are SACKed or recovery has begun, so every hole sent before a SACKed segment is lost.
    /// A hole still within the window is lost when its reordering timer (§6.3) fires.
    Rack,
}

/// What a retransmission found lost does to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum LostRetransmission {
    /// A second indication of congestion: cwnd and ssthresh are lowered again (RFC 5681 §4.3).
    Reduce,
    /// Sent again within the same recovery, the window untouched (Linux: RACK marks it lost,
    /// and recovery goes on).
    Resend,
}

/// What a retransmission timeout during fast recovery does to ssthresh.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RtoInRecovery {
    /// Computed again from the window the recovery already reduced: a second reduction.
    Reduce,
    /// Kept as the recovery set it (Linux `tcp_enter_loss`: ssthresh is recomputed only from
    /// Open or Disorder, or after progress since the last timeout); cwnd still falls to 1.
    KeepSsthresh,
}

/// The loss-recovery switches of one sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recovery {
    pub window_reduction: WindowReduction,
    pub loss_detection: LossDetection,
    pub lost_retransmission: LostRetransmission,
    /// Tail loss probes (RFC 8985 §7, Linux 3.10): when the ACKs stop in the open state, a
    /// segment goes out after two smoothed RTTs so that its SACK can reveal the tail's losses
    /// before the retransmission timer.
    pub tail_loss_probe: bool,
    /// The receiver reports duplicates (D-SACK, RFC 2883) and the sender undoes a reduction
    /// whose every retransmission they prove unnecessary (RFC 3708; Linux `tcp_try_undo_*`),
    /// or a timeout after which original data is acknowledged (F-RTO, RFC 5682 §3.1).
    pub undo: bool,
    /// Data segments carry timestamps and ACKs echo them (RFC 7323). With `undo`, an ACK
    /// echoing a segment sent before the episode's first retransmission shows that
    /// retransmission unneeded, and the reduction is undone (Eifel detection, RFC 3522; Linux
    /// `tcp_packet_delayed`), at the end of recovery, during it once no retransmission is in
    /// flight (`tcp_try_undo_partial`), or after a timeout (`tcp_try_undo_loss`).
    pub timestamps: bool,
    pub rto_in_recovery: RtoInRecovery,
}

impl Recovery {
    /// The textbook sender (`host = "rfc"`).
    pub const RFC: Recovery = Recovery {
        window_reduction: WindowReduction::Rfc6675,
        loss_detection: LossDetection::Dupthresh,
        lost_retransmission: LostRetransmission::Reduce,
        tail_loss_probe: false,
        undo: false,
        timestamps: false,
        rto_in_recovery: RtoInRecovery::Reduce,
    };

    /// A current Linux sender (`host = "linux"`).
    pub const LINUX: Recovery = Recovery {
        window_reduction: WindowReduction::Prr,
        loss_detection: LossDetection::Rack,
        lost_retransmission: LostRetransmission::Resend,
        tail_loss_probe: true,
        undo: true,
        timestamps: true,
        rto_in_recovery: RtoInRecovery::KeepSsthresh,
    };
}
