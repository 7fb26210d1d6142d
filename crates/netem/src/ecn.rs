//! The ECN field of the IP header (RFC 3168 §5): two bits, four codepoints.
//!
//! ECT(0) and ECT(1) say the transport can take a mark instead of a drop; since L4S
//! (RFC 9331 §4.1) ECT(1) also says "L4S": it asks for immediate, scalable marking. CE is the
//! mark itself. A queue marks only an ECN-capable packet; a Not-ECT one is dropped instead.

/// The two ECN bits, with their wire values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[repr(u8)]
pub enum Ecn {
    #[default]
    NotEct = 0b00,
    /// ECT(1): ECN-capable, and L4S (RFC 9331 §4.1).
    Ect1 = 0b01,
    /// ECT(0): ECN-capable, classic (RFC 3168).
    Ect0 = 0b10,
    /// Congestion Experienced.
    Ce = 0b11,
}

impl Ecn {
    /// The codepoint of the two low bits of an IPv4 TOS or IPv6 traffic-class byte.
    pub fn from_bits(bits: u8) -> Self {
        match bits & 0b11 {
            0b00 => Self::NotEct,
            0b01 => Self::Ect1,
            0b10 => Self::Ect0,
            _ => Self::Ce,
        }
    }

    /// A queue may mark this packet instead of dropping it.
    pub fn is_capable(self) -> bool {
        self != Self::NotEct
    }

    /// RFC 9331 §5.1: the L4S identifier is ECT(1), and a CE packet is classified as L4S too
    /// (it may have been ECT(1) before an earlier queue marked it).
    pub fn is_l4s(self) -> bool {
        matches!(self, Self::Ect1 | Self::Ce)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codepoints_round_trip_through_their_bits() {
        for ecn in [Ecn::NotEct, Ecn::Ect1, Ecn::Ect0, Ecn::Ce] {
            assert_eq!(Ecn::from_bits(ecn as u8), ecn);
            // The DSCP bits above do not matter.
            assert_eq!(Ecn::from_bits(0b1011_1000 | ecn as u8), ecn);
        }
    }

    #[test]
    fn only_not_ect_is_incapable_and_ect1_and_ce_are_l4s() {
        assert!(!Ecn::NotEct.is_capable());
        assert!(Ecn::Ect0.is_capable() && Ecn::Ect1.is_capable() && Ecn::Ce.is_capable());
        assert!(Ecn::Ect1.is_l4s() && Ecn::Ce.is_l4s());
        assert!(!Ecn::Ect0.is_l4s() && !Ecn::NotEct.is_l4s());
    }
}
