//! Pieces shared by the window-based algorithms (Linux `tcp_cong.c` helpers, RFC 5681).

use serde::de::DeserializeOwned;
use serde::Serialize;

use super::{Ack, CaState};

/// Loss-based growth happens outside a window reduction and only while cwnd limits the sender
/// (Linux skips `cong_avoid` in CWR/Recovery and unless `tcp_is_cwnd_limited`; RFC 7661).
/// It still runs in Loss, so slow start resumes after a timeout.
pub fn may_grow(ack: &Ack) -> bool {
    !matches!(ack.ca_state, CaState::Recovery | CaState::Cwr) && ack.cwnd_limited
}

/// Slow start by `acked` packets, never past `ssthresh` (Linux `tcp_slow_start`).
/// Returns `(cwnd, leftover)`: the packets left for congestion avoidance.
pub fn slow_start(cwnd: f64, ssthresh: f64, acked: f64) -> (f64, f64) {
    let grown = (cwnd + acked).min(ssthresh.max(cwnd));
    (grown, acked - (grown - cwnd))
}

/// The smallest window any algorithm reduces to after a congestion event (RFC 5681 §3.1:
/// ssthresh = max(FlightSize/2, 2·SMSS)).
pub const MIN_SSTHRESH_PKTS: f64 = 2.0;

/// Parse an algorithm's parameters: missing keys take the defaults, unknown keys are errors.
pub fn parse_params<P: DeserializeOwned + Default>(
    params: &serde_json::Map<String, serde_json::Value>,
) -> Result<P, String> {
    serde_json::from_value(serde_json::Value::Object(params.clone())).map_err(|e| e.to_string())
}

/// An algorithm's parameters with their defaults, for `tcpeval cc list`.
pub fn default_params<P: Serialize + Default>() -> serde_json::Value {
    serde_json::to_value(P::default()).expect("parameter structs serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        assert_eq!(slow_start(10.0, 100.0, 2.0), (12.0, 0.0));
        assert_eq!(slow_start(99.0, 100.0, 3.0), (100.0, 2.0));
    }
}
