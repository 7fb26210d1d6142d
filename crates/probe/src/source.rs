//! Where a connection comes from, as the server counts it: its address and its network.
//!
//! One host has one IPv4 address but an IPv6 host is usually handed a whole /64, and a
//! stranger who controls one machine often controls its neighbours: bounds per address alone
//! would let one site take every slot. So the server also counts per /24 (IPv4) and per /64
//! (IPv6), the blocks a site is commonly given. An IPv4 client reaching an IPv6 socket is seen
//! as `::ffff:a.b.c.d` and counted as the IPv4 address it is.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The network a source address belongs to: its /24 or /64.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Prefix {
    V4([u8; 3]),
    V6([u16; 4]),
}

/// The address as the server counts it (an IPv4-mapped IPv6 address is its IPv4 address).
pub fn address(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

pub fn prefix(ip: IpAddr) -> Prefix {
    match address(ip) {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            Prefix::V4([a, b, c])
        }
        IpAddr::V6(v6) => {
            let s = v6.segments();
            Prefix::V6([s[0], s[1], s[2], s[3]])
        }
    }
}

impl fmt::Display for Prefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Prefix::V4([a, b, c]) => write!(f, "{}/24", Ipv4Addr::new(a, b, c, 0)),
            Prefix::V6([a, b, c, d]) => {
                write!(f, "{}/64", Ipv6Addr::new(a, b, c, d, 0, 0, 0, 0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    #[test]
    fn neighbours_share_a_prefix_and_mapped_addresses_count_as_ipv4() {
        assert_eq!(prefix(ip("10.9.9.1")), prefix(ip("10.9.9.254")));
        assert_ne!(prefix(ip("10.9.9.1")), prefix(ip("10.9.8.1")));
        assert_eq!(prefix(ip("::ffff:10.9.9.7")), prefix(ip("10.9.9.1")));
        assert_eq!(address(ip("::ffff:10.9.9.7")), ip("10.9.9.7"));
        assert_eq!(
            prefix(ip("2001:db8:1:2::1")),
            prefix(ip("2001:db8:1:2:ffff::9"))
        );
        assert_ne!(prefix(ip("2001:db8:1:2::1")), prefix(ip("2001:db8:1:3::1")));
        assert_eq!(prefix(ip("10.9.9.1")).to_string(), "10.9.9.0/24");
        assert_eq!(
            prefix(ip("2001:db8:1:2::1")).to_string(),
            "2001:db8:1:2::/64"
        );
    }
}
