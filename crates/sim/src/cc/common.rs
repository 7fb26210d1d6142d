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

/// Reno's growth for `acked` packets, counted per packet as RFC 3465 and Linux do: slow start
/// by at most `abc_limit` of them (RFC 3465 §2.2 L), then congestion avoidance at `ai/cwnd` per
/// packet left, so a window of packets adds `ai` (RFC 5681 §3.1 with `ai` = 1; Linux
/// `tcp_slow_start` then `tcp_cong_avoid_ai`). The window-based stacks that grow as Reno
/// (DCTCP, RFC 8257 §3.4; Prague, which scales `ai`) share it.
pub fn reno_growth(cwnd: f64, ssthresh: f64, acked: f64, abc_limit: f64, ai: f64) -> f64 {
    let (cwnd, left) = if cwnd < ssthresh {
        slow_start(cwnd, ssthresh, acked.min(abc_limit))
    } else {
        (cwnd, acked)
    };
    cwnd + left * ai / cwnd
}

/// The smallest window any algorithm reduces to after a congestion event (RFC 5681 §3.1:
/// ssthresh = max(FlightSize/2, 2·SMSS)).
pub const MIN_SSTHRESH_PKTS: f64 = 2.0;

/// Parse an algorithm's parameters: missing keys take the defaults, unknown keys are errors.
/// An error names the parameter at fault.
pub fn parse_params<P: DeserializeOwned + Serialize + Default>(
    params: &serde_json::Map<String, serde_json::Value>,
) -> Result<P, String> {
    let parse = |map: serde_json::Map<_, _>| serde_json::from_value::<P>(map.into());
    parse(params.clone()).map_err(|error| {
        let defaults = default_params::<P>();
        let known: Vec<&str> = defaults
            .as_object()
            .map_or(vec![], |m| m.keys().map(String::as_str).collect());
        let culprit = params
            .iter()
            .find(|(k, v)| parse([((*k).clone(), (*v).clone())].into_iter().collect()).is_err());
        match culprit {
            Some((k, _)) if !known.contains(&k.as_str()) => {
                format!(
                    "has no parameter '{k}' (its parameters: {})",
                    known.join(", ")
                )
            }
            Some((k, v)) => format!("parameter {k} = {v}: {error}"),
            None => error.to_string(),
        }
    })
}

/// An algorithm's parameters with their defaults, for `tcpeval cc list`.
pub fn default_params<P: Serialize + Default>() -> serde_json::Value {
    serde_json::to_value(P::default()).expect("parameter structs serialise")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, Serialize, serde::Deserialize)]
    #[serde(deny_unknown_fields, default)]
    struct Params {
        beta: f64,
        hystart: bool,
    }

    fn parse(json: serde_json::Value) -> Result<Params, String> {
        parse_params::<Params>(json.as_object().unwrap())
    }

    #[test]
    fn parameter_errors_name_the_parameter() {
        let unknown = parse(serde_json::json!({"beta": 0.7, "bet": 0.7})).unwrap_err();
        assert_eq!(
            unknown,
            "has no parameter 'bet' (its parameters: beta, hystart)"
        );
        let wrong_type = parse(serde_json::json!({"hystart": "yes"})).unwrap_err();
        assert!(
            wrong_type.starts_with("parameter hystart = \"yes\": invalid type"),
            "{wrong_type}"
        );
        assert_eq!(parse(serde_json::json!({"beta": 0.8})).unwrap().beta, 0.8);
    }

    #[test]
    fn reno_growth_caps_slow_start_per_ack_and_spends_the_rest_in_avoidance() {
        // Slow start: 5 packets on one ACK add L = 2 (RFC 3465 §2.2); the excess is not credited.
        assert_eq!(reno_growth(10.0, f64::INFINITY, 5.0, 2.0, 1.0), 12.0);
        // Crossing ssthresh: one packet reaches it, the other adds 1/cwnd.
        assert_eq!(reno_growth(9.0, 10.0, 2.0, 2.0, 1.0), 10.1);
        // Avoidance: `ai`/cwnd per packet.
        assert_eq!(reno_growth(20.0, 10.0, 4.0, 2.0, 0.5), 20.1);
    }

    #[test]
    fn slow_start_stops_at_ssthresh_and_returns_the_rest() {
        assert_eq!(slow_start(10.0, 100.0, 2.0), (12.0, 0.0));
        assert_eq!(slow_start(99.0, 100.0, 3.0), (100.0, 2.0));
    }
}
