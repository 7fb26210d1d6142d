//! Every BPF stack by name: its object (compiled by `build.rs` from `bpf/<name>.bpf.c`) and the
//! parameters its block holds, in the block's order, then any words derived from them.

use serde_json::{Map, Value};

use crate::error::Result;
use crate::highspeed;

/// How a parameter's value becomes its __u64 word (`bpf/common.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Flag,
    /// A whole number (packets, rounds, nanoseconds).
    Count,
    /// A real number in fixed point (`params::FRACTION_SHIFT`).
    Fraction,
    /// A whole number or none (`null`), which is `params::ABSENT`.
    OptionalCount,
    /// No word of its own: the stack's `derived` words are computed from it.
    Derived,
}

#[derive(Debug)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
}

/// Derived words from a complete, checked `cc` table.
pub type Derive = fn(&Map<String, Value>) -> Result<Vec<u64>>;

#[derive(Debug)]
pub struct Stack {
    /// The simulator's name for the algorithm this implements.
    pub name: &'static str,
    pub object: &'static [u8],
    pub params: &'static [Param],
    /// Words the loader computes from the complete table, after the parameters' own: what
    /// the program cannot compute itself (BPF has no floating point).
    pub derived: Option<Derive>,
    /// Its receiver must echo every CE mark, DCTCP-style (RFC 8257 §3.2): the receiving
    /// kernel does that only when its socket runs the same stack.
    pub per_packet_echo: bool,
}

macro_rules! object {
    ($name:literal) => {
        include_bytes!(concat!(env!("OUT_DIR"), "/", $name, ".bpf.o"))
    };
}

const fn param(name: &'static str, kind: Kind) -> Param {
    Param { name, kind }
}

pub const STACKS: &[Stack] = &[
    Stack {
        name: "aimd",
        object: object!("aimd"),
        params: &[
            param("a", Kind::Fraction),
            param("b", Kind::Fraction),
            param("abc", Kind::Flag),
            param("abc_limit", Kind::Count),
        ],
        derived: None,
        per_packet_echo: false,
    },
    Stack {
        name: "highspeed",
        object: object!("highspeed"),
        params: &[
            param("per_ack", Kind::Flag),
            param("low_window", Kind::Derived),
            param("high_window", Kind::Derived),
            param("high_p", Kind::Derived),
            param("high_decrease", Kind::Derived),
        ],
        derived: Some(highspeed::rows),
        per_packet_echo: false,
    },
    Stack {
        name: "scalable",
        object: object!("scalable"),
        params: &[
            param("a", Kind::Fraction),
            param("b", Kind::Fraction),
            param("low_window", Kind::Count),
        ],
        derived: None,
        per_packet_echo: false,
    },
    Stack {
        name: "vegas",
        object: object!("vegas"),
        params: &[
            param("alpha", Kind::Fraction),
            param("beta", Kind::Fraction),
            param("gamma", Kind::Fraction),
        ],
        derived: None,
        per_packet_echo: false,
    },
    Stack {
        name: "fast",
        object: object!("fast"),
        params: &[
            param("alpha", Kind::Fraction),
            param("gamma", Kind::Fraction),
            param("update_period_rounds", Kind::Count),
        ],
        derived: None,
        per_packet_echo: false,
    },
    Stack {
        name: "htcp",
        object: object!("htcp"),
        params: &[
            param("beta_adaptive", Kind::Flag),
            param("rtt_scaling", Kind::Flag),
            param("bandwidth_switch", Kind::Flag),
            param("alpha_quadratic", Kind::Fraction),
        ],
        derived: None,
        per_packet_echo: false,
    },
    Stack {
        name: "bic",
        object: object!("bic"),
        params: &[
            param("beta", Kind::Fraction),
            param("max_increment", Kind::Fraction),
            param("low_window", Kind::Fraction),
            param("smooth_part", Kind::Fraction),
            param("fast_convergence", Kind::Flag),
            param("initial_ssthresh", Kind::OptionalCount),
        ],
        derived: None,
        per_packet_echo: false,
    },
    Stack {
        name: "dctcp",
        object: object!("dctcp"),
        params: &[
            param("g", Kind::Fraction),
            param("alpha_init", Kind::Fraction),
            param("abc_limit", Kind::Count),
        ],
        derived: None,
        per_packet_echo: true,
    },
    // Without AccECN in this kernel, Prague learns its marks from DCTCP's echo.
    Stack {
        name: "prague",
        object: object!("prague"),
        params: &[
            param("g", Kind::Fraction),
            param("alpha_init", Kind::Fraction),
            param("abc_limit", Kind::Count),
            param("rtt_scaling", Kind::Flag),
            param("rtt_ref_ns", Kind::Count),
            param("rtt_transition_rounds", Kind::Count),
            param("grow_in_cwr", Kind::Flag),
            param("pacing_ss_ratio", Kind::Fraction),
            param("pacing_ca_ratio", Kind::Fraction),
            param("classic_fallback", Kind::Flag),
            param("classic_qdelay_threshold_ns", Kind::Count),
            param("classic_beta", Kind::Fraction),
        ],
        derived: None,
        per_packet_echo: true,
    },
];

pub fn find(name: &str) -> Option<&'static Stack> {
    STACKS.iter().find(|s| s.name == name)
}

pub fn names() -> String {
    STACKS.iter().map(|s| s.name).collect::<Vec<_>>().join(", ")
}
