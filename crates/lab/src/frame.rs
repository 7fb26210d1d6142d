//! What the emulator reads of a frame: the virtio-net header's GSO type, the IP packet's size,
//! the IPv4 address that picks the endpoint, the ECN codepoint, the transport flow and whether
//! it carries TCP data; and the one change it makes to a frame, setting CE on a packet the AQM
//! marked.

use std::net::Ipv4Addr;

use tcpeval_netem::Ecn;

use crate::config::Endpoint;
use crate::sys::VNET_HDR_BYTES;

const ETH_HDR_BYTES: usize = 14;
const ETHERTYPE_IPV4: [u8; 2] = [0x08, 0x00];
const ETHERTYPE_IPV6: [u8; 2] = [0x86, 0xdd];
/// Offsets within the frame of the IPv4 source and destination, TOS byte and header checksum.
const IPV4_SRC: usize = ETH_HDR_BYTES + 12;
const IPV4_DST: usize = ETH_HDR_BYTES + 16;
const IPV4_TOS: usize = ETH_HDR_BYTES + 1;
const IPV4_CHECKSUM: usize = ETH_HDR_BYTES + 10;
const IPV4_MIN_HDR_BYTES: usize = 20;
const IPV6_HDR_BYTES: usize = 40;
/// The IPv6 traffic class straddles the first two bytes; its ECN bits are bits 5–4 of the
/// second.
const IPV6_ECN_SHIFT: u32 = 4;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;

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

    /// The ECN codepoint of the IP packet: the low two bits of the IPv4 TOS byte or of the
    /// IPv6 traffic class; Not-ECT for anything else (ARP, a truncated header).
    pub fn ecn(&self) -> Ecn {
        ip_ecn(self.frame()).unwrap_or_default()
    }

    /// A hash of the packet's 5-tuple (addresses, protocol, and ports for TCP and UDP), equal
    /// for the packets of one transport flow: what flow queueing (FQ-CoDel) tells flows
    /// apart by. 0 for what is not IP.
    pub fn flow_key(&self) -> u64 {
        flow_key(self.frame()).unwrap_or(0)
    }

    /// Whether it is a TCP segment with payload: what an induced loss (`drop_at`) drops, as
    /// the simulator drops only data packets; a pure ACK, a SYN or a FIN carries none. IPv4
    /// only: endpoints, whose traffic induced losses pick, are IPv4 addresses.
    pub fn carries_tcp_data(&self) -> bool {
        tcp_payload_bytes(self.frame()).is_some_and(|n| n > 0)
    }
}

fn ethertype(frame: &[u8]) -> Option<[u8; 2]> {
    frame.get(12..14)?.try_into().ok()
}

fn ip_ecn(frame: &[u8]) -> Option<Ecn> {
    match ethertype(frame)? {
        ETHERTYPE_IPV4 => Some(Ecn::from_bits(*frame.get(IPV4_TOS)?)),
        ETHERTYPE_IPV6 => {
            let second = *frame.get(ETH_HDR_BYTES + 1)?;
            Some(Ecn::from_bits(second >> IPV6_ECN_SHIFT))
        }
        _ => None,
    }
}

fn flow_key(frame: &[u8]) -> Option<u64> {
    let ip = frame.get(ETH_HDR_BYTES..)?;
    let (addresses, protocol, transport) = match ethertype(frame)? {
        ETHERTYPE_IPV4 => {
            let header_bytes = usize::from(ip.first()? & 0x0f) * 4;
            // Only the first fragment carries the ports.
            let first_fragment = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]) & 0x1fff == 0;
            let transport = first_fragment.then(|| ip.get(header_bytes..)).flatten();
            (ip.get(12..20)?, *ip.get(9)?, transport)
        }
        // The next header right after the fixed header (no extension headers in the lab).
        ETHERTYPE_IPV6 => (ip.get(8..40)?, *ip.get(6)?, ip.get(IPV6_HDR_BYTES..)),
        _ => return None,
    };
    let ports = match protocol {
        PROTO_TCP | PROTO_UDP => transport.and_then(|t| t.get(..4)),
        _ => None,
    };
    let mut h = FlowHash::default();
    addresses.chunks(4).for_each(|c| h.add(c));
    h.add(&[protocol]);
    h.add(ports.unwrap_or(&[0; 4]));
    Some(h.finish())
}

/// The payload of an IPv4 TCP segment: its IP total length less the IP and TCP headers (the
/// frame's own length may include link-layer padding). `None` for what is not one, a later
/// fragment (no TCP header) or a truncated header.
fn tcp_payload_bytes(frame: &[u8]) -> Option<usize> {
    if ethertype(frame)? != ETHERTYPE_IPV4 {
        return None;
    }
    let ip = frame.get(ETH_HDR_BYTES..)?;
    let first_fragment = u16::from_be_bytes([*ip.get(6)?, *ip.get(7)?]) & 0x1fff == 0;
    if *ip.get(9)? != PROTO_TCP || !first_fragment {
        return None;
    }
    let ip_header_bytes = usize::from(ip.first()? & 0x0f) * 4;
    let total_bytes = usize::from(u16::from_be_bytes([*ip.get(2)?, *ip.get(3)?]));
    // The TCP data offset: the high nibble of the header's 13th byte, in 32-bit words.
    let tcp_header_bytes = usize::from(ip.get(ip_header_bytes + 12)? >> 4) * 4;
    total_bytes.checked_sub(ip_header_bytes + tcp_header_bytes)
}

/// FNV-1a over the tuple's bytes, then splitmix64's finaliser: deterministic (no per-process
/// key), cheap, and well spread in every bit for a scheduler that takes it modulo its buckets.
struct FlowHash(u64);

impl Default for FlowHash {
    fn default() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
}

impl FlowHash {
    fn add(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

/// Set CE in the IP header of the frame in `buffer` (virtio-net header, then the Ethernet
/// frame), as an AQM that marked it must before it leaves: the two ECN bits of the IPv4 TOS
/// byte, with the header checksum updated incrementally (RFC 1624), or of the IPv6 traffic
/// class (IPv6 has no header checksum). The transport checksums do not cover these bits.
/// Returns whether the header is one it can mark (IPv4 or IPv6, long enough).
pub fn set_ce(buffer: &mut [u8]) -> bool {
    let Some(frame) = buffer.get_mut(VNET_HDR_BYTES..) else {
        return false;
    };
    let ce = Ecn::Ce as u8;
    match ethertype(frame) {
        Some(ETHERTYPE_IPV4) if frame.len() >= ETH_HDR_BYTES + IPV4_MIN_HDR_BYTES => {
            // The TOS byte is the low byte of the header's first 16-bit word.
            let old_word = u16::from_be_bytes([frame[ETH_HDR_BYTES], frame[IPV4_TOS]]);
            frame[IPV4_TOS] |= ce;
            let new_word = u16::from_be_bytes([frame[ETH_HDR_BYTES], frame[IPV4_TOS]]);
            if new_word == old_word {
                return true; // already CE
            }
            let checksum = &mut frame[IPV4_CHECKSUM..IPV4_CHECKSUM + 2];
            let old = u16::from_be_bytes([checksum[0], checksum[1]]);
            let new = checksum_update(old, old_word, new_word);
            checksum.copy_from_slice(&new.to_be_bytes());
            true
        }
        Some(ETHERTYPE_IPV6) if frame.len() >= ETH_HDR_BYTES + IPV6_HDR_BYTES => {
            frame[ETH_HDR_BYTES + 1] |= ce << IPV6_ECN_SHIFT;
            true
        }
        _ => false,
    }
}

/// RFC 1624 eqn. 3: the checksum `hc` of a header in which one 16-bit word changed from `m`
/// to `m_new`, HC' = ~(~HC + ~m + m') in ones' complement arithmetic (which, unlike eqn. 2,
/// never yields 0x0000 from a header whose sum is not zero).
pub fn checksum_update(hc: u16, m: u16, m_new: u16) -> u16 {
    let sum = u32::from(!hc) + u32::from(!m) + u32::from(m_new);
    !fold(sum)
}

/// The ones' complement sum folded to 16 bits.
fn fold(mut sum: u32) -> u16 {
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    sum as u16
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

    /// An IPv4 header's checksum computed from scratch (RFC 1071), its own field as zero.
    fn full_checksum(header: &[u8]) -> u16 {
        let words = header.chunks(2).enumerate().filter(|&(i, _)| i != 5);
        let sum: u32 = words
            .map(|(_, w)| u32::from(u16::from_be_bytes([w[0], w[1]])))
            .sum();
        !fold(sum)
    }

    /// A frame as the emulator receives it: virtio-net header, Ethernet, an IPv4 header with
    /// a correct checksum, `payload`.
    fn ipv4_frame(header: &[u8], payload: &[u8]) -> Vec<u8> {
        let mut b = vec![0u8; VNET_HDR_BYTES];
        b.extend_from_slice(&[0x02, 0x74, 0x6c, 0x02, 0, 0, 0x02, 0x74, 0x6c, 0x01, 0, 0]);
        b.extend_from_slice(&ETHERTYPE_IPV4);
        b.extend_from_slice(header);
        b.extend_from_slice(payload);
        b
    }

    /// An IPv4 header as the lab carries them: a TCP data segment from 10.201.1.1 to the
    /// receiver 10.201.2.1, ECT(0) (tcp_ecn = 1), DF, TTL 64, 1500 bytes; checksum to fill.
    const LAB_HEADER: [u8; 20] = [
        0x45, 0x02, 0x05, 0xdc, 0x6b, 0x5e, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, 10, 201, 1, 1, 10,
        201, 2, 1,
    ];

    fn with_checksum(mut header: Vec<u8>) -> Vec<u8> {
        let c = full_checksum(&header);
        header[10..12].copy_from_slice(&c.to_be_bytes());
        header
    }

    /// Headers of every TOS byte over the captured one and over pseudo-random ones, options
    /// included, so every carry the ones' complement sum can take is crossed.
    fn headers() -> Vec<Vec<u8>> {
        let mut headers = Vec::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for tos in 0..=255u8 {
            let mut h = LAB_HEADER.to_vec();
            h[1] = tos;
            headers.push(with_checksum(h));
            let words = if tos % 2 == 0 { 10 } else { 12 }; // with 4 bytes of options
            let mut r: Vec<u8> = (0..words * 2)
                .map(|_| {
                    x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                    (x >> 56) as u8
                })
                .collect();
            r[0] = 0x40 | (words / 2) as u8;
            r[1] = tos;
            headers.push(with_checksum(r));
        }
        headers
    }

    #[test]
    fn the_incremental_checksum_equals_a_full_recomputation() {
        // The recomputation itself, on a published header (Wikipedia, "IPv4 header
        // checksum": 4500 0073 0000 4000 4011 b861 c0a8 0001 c0a8 00c7).
        let published = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        assert_eq!(full_checksum(&published), 0xb861);
        for header in headers() {
            let mut b = ipv4_frame(&header, &[]);
            assert!(set_ce(&mut b));
            let marked = &b[VNET_HDR_BYTES + ETH_HDR_BYTES..];
            assert_eq!(marked[1], header[1] | 0b11);
            let checksum = u16::from_be_bytes([marked[10], marked[11]]);
            assert_eq!(checksum, full_checksum(marked), "{header:02x?}");
        }
    }

    #[test]
    fn a_marked_frame_changes_only_in_its_tos_byte_and_checksum() {
        let header = with_checksum(LAB_HEADER.to_vec());
        let payload: Vec<u8> = (0..1480u32).map(|i| (i * 7 + 3) as u8).collect();
        let before = ipv4_frame(&header, &payload);
        let mut after = before.clone();
        assert!(set_ce(&mut after));
        assert_eq!(Received(&before).ecn(), Ecn::Ect0);
        assert_eq!(Received(&after).ecn(), Ecn::Ce);
        let changed: Vec<usize> = (0..before.len())
            .filter(|&i| before[i] != after[i])
            .map(|i| i - VNET_HDR_BYTES)
            .collect();
        let checksum = IPV4_CHECKSUM..IPV4_CHECKSUM + 2;
        assert!(changed.contains(&IPV4_TOS), "{changed:?}");
        assert!(changed
            .iter()
            .all(|i| *i == IPV4_TOS || checksum.contains(i)));
        // DSCP bits kept; marking twice changes nothing more.
        let mut again = after.clone();
        assert!(set_ce(&mut again));
        assert_eq!(again, after);
        assert_eq!(Received(&after).flow_key(), Received(&before).flow_key());
    }

    #[test]
    fn ipv6_marks_its_traffic_class_and_nothing_else() {
        // Version 6, traffic class 0xb9 (DSCP 46, ECT(1)), flow label 0x12345.
        let mut b = vec![0u8; VNET_HDR_BYTES + ETH_HDR_BYTES + IPV6_HDR_BYTES + 20];
        let f = &mut b[VNET_HDR_BYTES..];
        f[12..14].copy_from_slice(&ETHERTYPE_IPV6);
        f[ETH_HDR_BYTES..ETH_HDR_BYTES + 4].copy_from_slice(&[0x6b, 0x91, 0x23, 0x45]);
        f[ETH_HDR_BYTES + 6] = PROTO_TCP;
        let before = b.clone();
        assert_eq!(Received(&before).ecn(), Ecn::Ect1);
        assert!(set_ce(&mut b));
        assert_eq!(Received(&b).ecn(), Ecn::Ce);
        let changed: Vec<usize> = (0..b.len()).filter(|&i| b[i] != before[i]).collect();
        assert_eq!(changed, [VNET_HDR_BYTES + ETH_HDR_BYTES + 1]);
        assert_eq!(b[VNET_HDR_BYTES + ETH_HDR_BYTES + 1], 0xb1);
    }

    #[test]
    fn the_codepoint_is_read_from_the_tos_byte() {
        for (tos, ecn) in [
            (0x00, Ecn::NotEct),
            (0x02, Ecn::Ect0),
            (0xb9, Ecn::Ect1),
            (0x03, Ecn::Ce),
        ] {
            let mut header = LAB_HEADER.to_vec();
            header[1] = tos;
            assert_eq!(Received(&ipv4_frame(&header, &[])).ecn(), ecn);
        }
    }

    #[test]
    fn what_is_not_ip_is_neither_marked_nor_ect() {
        let mut arp = buffer([0x08, 0x06], [10, 0, 0, 1], [10, 0, 0, 2], 0);
        let before = arp.clone();
        assert!(!set_ce(&mut arp));
        assert_eq!(arp, before);
        assert_eq!(Received(&arp).ecn(), Ecn::NotEct);
        assert_eq!(Received(&arp).flow_key(), 0);
        assert!(!set_ce(&mut [0u8; 4]));
    }

    /// A TCP (or UDP) packet's frame between two addresses and ports.
    fn segment(protocol: u8, src: [u8; 4], sport: u16, dport: u16, tos: u8) -> Vec<u8> {
        let mut header = LAB_HEADER.to_vec();
        header[1] = tos;
        header[9] = protocol;
        header[12..16].copy_from_slice(&src);
        let mut transport = [sport.to_be_bytes(), dport.to_be_bytes()].concat();
        transport.extend_from_slice(&[0; 16]);
        ipv4_frame(&with_checksum(header), &transport)
    }

    #[test]
    fn the_flow_key_tells_five_tuples_apart_and_nothing_else() {
        let key = |b: Vec<u8>| Received(&b).flow_key();
        let a = [10, 201, 1, 1];
        let base = key(segment(PROTO_TCP, a, 40_000, 5201, 0x02));
        // The codepoint and the payload do not matter; each field of the tuple does.
        assert_eq!(key(segment(PROTO_TCP, a, 40_000, 5201, 0x03)), base);
        let others = [
            key(segment(PROTO_TCP, a, 40_001, 5201, 0x02)),
            key(segment(PROTO_TCP, a, 40_000, 5202, 0x02)),
            key(segment(PROTO_UDP, a, 40_000, 5201, 0x02)),
            key(segment(PROTO_TCP, [10, 201, 1, 2], 40_000, 5201, 0x02)),
        ];
        assert!(others.iter().all(|&k| k != base && k != 0), "{others:x?}");
        // Ports count only for TCP and UDP, and only in a first fragment.
        let icmp = |sport| key(segment(1, a, sport, 0, 0));
        assert_eq!(icmp(1), icmp(2));
        let mut later_fragment = segment(PROTO_UDP, a, 1, 2, 0);
        later_fragment[VNET_HDR_BYTES + ETH_HDR_BYTES + 7] = 0x10;
        let mut other_ports = segment(PROTO_UDP, a, 3, 4, 0);
        other_ports[VNET_HDR_BYTES + ETH_HDR_BYTES + 7] = 0x10;
        assert_eq!(key(later_fragment), key(other_ports));
    }

    /// A TCP segment from the lab's sender as the kernel sends it: `tcp_header_bytes` of TCP
    /// header (20 and the options: 40 on a SYN, 32 with timestamps) with `flags`, then
    /// `payload_bytes`, then `padding_bytes` after the IP packet (a short Ethernet frame's).
    fn tcp(
        flags: u8,
        tcp_header_bytes: usize,
        payload_bytes: usize,
        padding_bytes: usize,
    ) -> Vec<u8> {
        let mut header = LAB_HEADER.to_vec();
        let total = (IPV4_MIN_HDR_BYTES + tcp_header_bytes + payload_bytes) as u16;
        header[2..4].copy_from_slice(&total.to_be_bytes());
        let mut transport = vec![0u8; tcp_header_bytes];
        transport[0..4].copy_from_slice(&[0x9c, 0x40, 0x14, 0x51]);
        transport[12] = ((tcp_header_bytes / 4) as u8) << 4;
        transport[13] = flags;
        transport.extend(std::iter::repeat_n(0xa5, payload_bytes + padding_bytes));
        ipv4_frame(&with_checksum(header), &transport)
    }

    const SYN: u8 = 0x02;
    const ACK: u8 = 0x10;
    const FIN_ACK: u8 = 0x11;
    const PSH_ACK: u8 = 0x18;

    #[test]
    fn only_tcp_segments_with_payload_carry_data() {
        let data = |b: Vec<u8>| Received(&b).carries_tcp_data();
        assert!(data(tcp(PSH_ACK, 32, 1448, 0)));
        assert!(
            data(tcp(ACK, 20, 1, 0)),
            "one byte is data (a zero-window probe's)"
        );
        assert!(!data(tcp(SYN, 40, 0, 0)), "a SYN");
        assert!(!data(tcp(SYN | ACK, 40, 0, 0)), "a SYN-ACK");
        assert!(!data(tcp(ACK, 32, 0, 0)), "a pure ACK");
        assert!(!data(tcp(FIN_ACK, 32, 0, 0)), "a FIN without data");
        // A pure ACK padded to Ethernet's minimum frame: the IP length counts, not the frame's.
        assert!(!data(tcp(ACK, 20, 0, 6)), "padding is not data");
        let udp = segment(PROTO_UDP, [10, 201, 1, 1], 40_000, 5201, 0);
        assert!(!data(udp), "UDP");
        let mut later_fragment = tcp(PSH_ACK, 32, 1448, 0);
        later_fragment[VNET_HDR_BYTES + ETH_HDR_BYTES + 7] = 0xb9;
        assert!(!data(later_fragment), "a later fragment has no TCP header");
        assert!(!data(
            tcp(PSH_ACK, 32, 1448, 0)[..VNET_HDR_BYTES + 40].to_vec()
        ));
        assert!(!data(buffer([0x08, 0x06], [0; 4], [0; 4], 0)), "ARP");
    }

    #[test]
    fn endpoints_are_found_by_address() {
        let e = |ip| Endpoint {
            ip,
            forward_delay_ns: 1,
            reverse_delay_ns: 2,
            drop_at_ns: vec![],
        };
        let t = EndpointTable::new(&[e(Ipv4Addr::new(10, 0, 0, 9)), e(Ipv4Addr::new(10, 0, 0, 1))]);
        assert_eq!(t.find(Some(Ipv4Addr::new(10, 0, 0, 1))), Some(1));
        assert_eq!(t.find(Some(Ipv4Addr::new(10, 0, 0, 9))), Some(0));
        assert_eq!(t.find(Some(Ipv4Addr::new(10, 0, 0, 2))), None);
        assert_eq!(t.find(None), None);
    }
}
