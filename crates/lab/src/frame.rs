//! What the emulator reads of a frame: the virtio-net header's GSO type, the IP packet's size
//! and the IPv4 address that picks the endpoint.

use std::net::Ipv4Addr;

use crate::config::Endpoint;
use crate::sys::VNET_HDR_BYTES;

const ETH_HDR_BYTES: usize = 14;
const ETHERTYPE_IPV4: [u8; 2] = [0x08, 0x00];
/// Offsets of the IPv4 source and destination within the frame.
const IPV4_SRC: usize = ETH_HDR_BYTES + 12;
const IPV4_DST: usize = ETH_HDR_BYTES + 16;

/// A received buffer: virtio-net header, then the Ethernet frame.
pub struct Received<'a>(pub &'a [u8]);

impl Received<'_> {
    fn frame(&self) -> &[u8] {
        self.0.get(VNET_HDR_BYTES..).unwrap_or(&[])
    }

    /// `virtio_net_hdr.gso_type` is the second byte; 0 is VIRTIO_NET_HDR_GSO_NONE.
    pub fn is_gso(&self) -> bool {
        self.0.get(1).is_some_and(|&t| t != 0)
    }

    /// The IP packet's length: the frame without its Ethernet header.
    pub fn size_bytes(&self) -> u32 {
        self.frame().len().saturating_sub(ETH_HDR_BYTES) as u32
    }

    fn ipv4_at(&self, offset: usize) -> Option<Ipv4Addr> {
        let f = self.frame();
        if f.get(12..14)? != ETHERTYPE_IPV4 {
            return None;
        }
        let a: [u8; 4] = f.get(offset..offset + 4)?.try_into().ok()?;
        Some(Ipv4Addr::from(a))
    }

    pub fn ipv4_src(&self) -> Option<Ipv4Addr> {
        self.ipv4_at(IPV4_SRC)
    }

    pub fn ipv4_dst(&self) -> Option<Ipv4Addr> {
        self.ipv4_at(IPV4_DST)
    }
}

/// Endpoint lookup by IPv4 address, sorted for binary search.
pub struct EndpointTable {
    by_ip: Vec<(Ipv4Addr, u16)>,
}

impl EndpointTable {
    pub fn new(endpoints: &[Endpoint]) -> Self {
        let mut by_ip: Vec<(Ipv4Addr, u16)> = endpoints
            .iter()
            .enumerate()
            .map(|(i, e)| (e.ip, i as u16))
            .collect();
        by_ip.sort_unstable();
        Self { by_ip }
    }

    pub fn find(&self, ip: Option<Ipv4Addr>) -> Option<u16> {
        let ip = ip?;
        let i = self.by_ip.binary_search_by_key(&ip, |&(a, _)| a).ok()?;
        Some(self.by_ip[i].1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn buffer(ethertype: [u8; 2], src: [u8; 4], dst: [u8; 4], gso: u8) -> Vec<u8> {
        let mut b = vec![0u8; VNET_HDR_BYTES + ETH_HDR_BYTES + 40];
        b[1] = gso;
        let f = &mut b[VNET_HDR_BYTES..];
        f[12..14].copy_from_slice(&ethertype);
        f[IPV4_SRC..IPV4_SRC + 4].copy_from_slice(&src);
        f[IPV4_DST..IPV4_DST + 4].copy_from_slice(&dst);
        b
    }

    #[test]
    fn reads_addresses_size_and_gso() {
        let b = buffer(ETHERTYPE_IPV4, [10, 201, 1, 1], [10, 201, 2, 1], 0);
        let r = Received(&b);
        assert_eq!(r.ipv4_src(), Some(Ipv4Addr::new(10, 201, 1, 1)));
        assert_eq!(r.ipv4_dst(), Some(Ipv4Addr::new(10, 201, 2, 1)));
        assert_eq!(r.size_bytes(), 40);
        assert!(!r.is_gso());
        let arp = buffer([0x08, 0x06], [0; 4], [0; 4], 1);
        assert_eq!(Received(&arp).ipv4_src(), None);
        assert!(Received(&arp).is_gso());
        assert_eq!(Received(&[0u8; 12]).ipv4_src(), None);
    }

    #[test]
    fn endpoints_are_found_by_address() {
        let e = |ip| Endpoint {
            ip,
            forward_delay_ns: 1,
            reverse_delay_ns: 2,
        };
        let t = EndpointTable::new(&[e(Ipv4Addr::new(10, 0, 0, 9)), e(Ipv4Addr::new(10, 0, 0, 1))]);
        assert_eq!(t.find(Some(Ipv4Addr::new(10, 0, 0, 1))), Some(1));
        assert_eq!(t.find(Some(Ipv4Addr::new(10, 0, 0, 9))), Some(0));
        assert_eq!(t.find(Some(Ipv4Addr::new(10, 0, 0, 2))), None);
        assert_eq!(t.find(None), None);
    }
}
