//! Every congestion-control algorithm by name: one line per algorithm.
//!
//! Defaults live in each algorithm's parameter struct, once; `tcpeval cc list` prints them
//! from here, so the Python side never repeats them.

use super::{
    aimd, bbr, bbr3, bic, cubic, dctcp, fast, highspeed, htcp, prague, reno, scalable, vegas,
};
use super::{Algorithm, CongestionControl, Init, Params};

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
