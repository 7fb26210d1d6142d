//! Simulated time is integer nanoseconds since the start of the run (`u64`, named `_ns`);
//! rates are bits per second (`_bps`). Integers keep runs exact and bit-for-bit repeatable.

pub const NS_PER_SEC: u64 = 1_000_000_000;
pub const NS_PER_MS: u64 = 1_000_000;

/// Time to serialise `bytes` onto a link of `rate_bps`, rounded up to a whole nanosecond so a
/// link never runs faster than its rate.
pub fn tx_time_ns(bytes: u32, rate_bps: u64) -> u64 {
    (u64::from(bytes) * 8 * NS_PER_SEC).div_ceil(rate_bps)
}

pub fn secs(ns: u64) -> f64 {
    ns as f64 / NS_PER_SEC as f64
}

pub fn millis(ns: u64) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

/// `bytes` transferred over `ns`, in bits per second.
pub fn rate_bps(bytes: u64, ns: u64) -> f64 {
    if ns == 0 {
        0.0
    } else {
        bytes as f64 * 8.0 / secs(ns)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_1500_byte_packet_takes_12_us_at_1_gbps() {
        assert_eq!(tx_time_ns(1500, 1_000_000_000), 12_000);
    }

    #[test]
    fn serialisation_rounds_up() {
        // 52 bytes at 3 Gb/s is 138.67 ns: the link must not send faster than its rate.
        assert_eq!(tx_time_ns(52, 3_000_000_000), 139);
    }
}
