//! A path-MTU black hole (RFC 2923 §2.1): a hop whose MTU is smaller than the packets it is
//! given, which drops the larger ones silently instead of answering with ICMP "fragmentation
//! needed" (RFC 1191 §4), so the sender never learns the path's MTU. Linux finds such a hop
//! only by probing after timeouts (RFC 4821 §7.7, `net.ipv4.tcp_mtu_probing`).

/// The smallest MTU an IPv4 hop may have (RFC 791: every module forwards 68 bytes whole).
pub const MIN_MTU_BYTES: u32 = 68;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MtuBlackHole {
    mtu_bytes: u32,
}

impl MtuBlackHole {
    /// A hop that carries IP packets of at most `mtu_bytes`.
    pub fn new(mtu_bytes: u32) -> Self {
        Self { mtu_bytes }
    }

    /// Whether an IP packet of `size_bytes` vanishes here.
    pub fn swallows(&self, size_bytes: u32) -> bool {
        size_bytes > self.mtu_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_packets_longer_than_the_mtu_vanish() {
        let hole = MtuBlackHole::new(1400);
        assert!(!hole.swallows(52), "an ACK");
        assert!(!hole.swallows(1400), "a packet of exactly the MTU");
        assert!(hole.swallows(1401));
        assert!(hole.swallows(1500), "a full segment of a 1500-byte MTU");
    }
}
