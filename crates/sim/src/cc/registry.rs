//! Every congestion-control algorithm by name: one line per algorithm.
//!
//! Defaults live in each algorithm's parameter struct, once; `tcpeval cc list` prints them
//! from here, so the Python side never repeats them.

use super::{
    aimd, bbr, bbr3, bic, cubic, dctcp, fast, highspeed, htcp, prague, reno, scalable, vegas,
};
use super::{CongestionControl, Init};
use crate::tcp::ecn::EcnMode;

/// A loss-based stack: no ECN by default (Linux's `tcp_ecn = 2` never asks for it), and with
/// classic ECN an echo treated as a loss (RFC 3168 §6.1.2), as its kernel module does.
pub const LOSS_BASED_ECN: &[EcnMode] = &[EcnMode::Off, EcnMode::Classic];

pub type Params = serde_json::Map<String, serde_json::Value>;

/// Builds a controller from its parameters, or says which parameter is wrong.
pub type Builder = fn(&Params, &Init) -> Result<Box<dyn CongestionControl>, String>;

/// An entry of the registry: written at the end of each algorithm's file.
pub struct Algorithm {
    pub name: &'static str,
    /// The specification it follows.
    pub source: &'static str,
    /// Parameters with their default values.
    pub defaults: fn() -> serde_json::Value,
    /// The ECN settings (`flow.ecn`) the stack can run with; the first is its default.
    pub ecn: &'static [EcnMode],
    /// It asks its receiver for DCTCP's per-packet echo under classic ECN (RFC 8257 §3.2).
    pub per_packet_echo: bool,
    pub build: Builder,
}

pub const ALGORITHMS: &[Algorithm] = &[
    reno::ALGORITHM,
    aimd::ALGORITHM,
    highspeed::ALGORITHM,
    scalable::ALGORITHM,
    htcp::ALGORITHM,
    bic::ALGORITHM,
    cubic::ALGORITHM,
    vegas::ALGORITHM,
    fast::ALGORITHM,
    bbr::ALGORITHM,
    bbr3::ALGORITHM,
    dctcp::ALGORITHM,
    prague::ALGORITHM,
];

pub fn find(name: &str) -> Option<&'static Algorithm> {
    ALGORITHMS.iter().find(|a| a.name == name)
}

/// Every algorithm with its source and default parameters, as JSON for `tcpeval cc list`.
pub fn describe() -> serde_json::Value {
    ALGORITHMS
        .iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "source": a.source,
                "params": (a.defaults)(),
                "ecn": a.ecn,
            })
        })
        .collect()
}

/// A `cc` table refused: the value at fault and why.
pub type Refusal = (String, String);

/// Build the controller named in `cc` (`{"name": ..., params...}`); returns it with the
/// algorithm's name.
pub fn build(
    cc: &Params,
    init: &Init,
) -> Result<(&'static str, Box<dyn CongestionControl>), Refusal> {
    let name = cc.get("name").and_then(|v| v.as_str()).unwrap_or_default();
    let algorithm = find(name).ok_or_else(|| {
        let known: Vec<_> = ALGORITHMS.iter().map(|a| a.name).collect();
        (
            name.to_owned(),
            format!("is not a known algorithm (known: {})", known.join(", ")),
        )
    })?;
    let mut params = cc.clone();
    params.remove("name");
    let controller = (algorithm.build)(&params, init).map_err(|e| (name.to_owned(), e))?;
    Ok((algorithm.name, controller))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn init() -> Init {
        Init {
            mss_bytes: 1448,
            initial_cwnd_pkts: 10.0,
            seed: 1,
        }
    }

    #[test]
    fn every_algorithm_builds_with_its_defaults() {
        for a in ALGORITHMS {
            let mut cc = Params::new();
            cc.insert("name".into(), a.name.into());
            let (name, c) = build(&cc, &init()).unwrap_or_else(|e| panic!("{}: {:?}", a.name, e));
            assert_eq!(name, a.name);
            assert_eq!(c.cwnd(), 10.0, "{} starts at the initial window", a.name);
            assert!((a.defaults)().is_object());
        }
    }

    #[test]
    fn unknown_names_and_parameters_are_errors() {
        let mut cc = Params::new();
        cc.insert("name".into(), "renoo".into());
        assert!(build(&cc, &init()).unwrap_err().1.contains("known: reno"));
        cc.insert("name".into(), "reno".into());
        cc.insert("bogus".into(), 1.into());
        assert!(build(&cc, &init()).unwrap_err().1.contains("bogus"));
    }
}
