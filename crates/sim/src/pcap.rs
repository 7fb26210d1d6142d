//! Packet capture of one link: a classic pcap file built in memory, sans-IO.
//!
//! The simulator never touches the file system: it appends records here and hands the finished
//! bytes to Python, which writes them (docs/contract.md, "Conditions"). The format is the
//! classic libpcap file (draft-ietf-opsawg-pcap; "Libpcap File Format" of the Wireshark wiki):
//! a 24-byte global header, then per packet a 16-byte record header and the captured bytes.
//! We write it little-endian with the nanosecond magic, and link type 101 (LINKTYPE_RAW), so
//! each record starts directly with an IPv4 header: there is no Ethernet in the simulator.
//!
//! Each record is a real IPv4 header (RFC 791 §3.1) and, for flows, a TCP header (RFC 9293 §3.1) with the
//! timestamp option (RFC 7323 §3) that the simulator's 52 header bytes account for, plus a
//! SACK option (RFC 2018 §3) on ACKs that carry blocks. Only the headers are captured: the
//! payload is never stored (`orig_len` and the IP total length still give the wire size), so a
//! capture of millions of packets stays tens of megabytes.
//!
//! Mapping of the simulator onto the headers (the simulator has no addresses, ports or
//! handshake, so these are fixed conventions, not observations):
//! - Flow `f` is its own connection: sender `10.0.x.y`, receiver `10.1.x.y` with `x.y` the
//!   low 16 bits of `f`; sender port `10000 + (f >> 16)` (so every `u32` flow id below
//!   55536·65536 has its own 4-tuple), receiver port 5001. Data goes sender → receiver, ACKs
//!   receiver → sender. These fake addresses exist only inside the file.
//! - Sequence numbers are bytes: data carries `seq · mss mod 2^32`, an ACK acknowledges
//!   `cum_ack · mss mod 2^32` and its SACK blocks are converted the same way: the first data
//!   byte of a flow is sequence number 0 (no handshake is captured).
//! - The receiver sends no data, so its sequence number stays 0: ACKs carry sequence 0 and data
//!   packets carry the ACK flag with acknowledgement number 0, as a real sender does once the
//!   connection is established (RFC 9293 §3.1: the acknowledgement "is always sent").
//! - Window 65535, unscaled (the simulator's windows are in packets, not advertised bytes);
//!   TSval is the simulated time in ms, TSecr 0; DF set, IP ID 0 and TTL 64, as Linux sends.
//! - Payload bytes are taken as zeros, which add nothing to the ones'-complement sum, so the
//!   TCP and UDP checksums (over a pseudo-header and the whole segment) are correct even
//!   though the payload is not captured.
//! - Datagrams of background sources (`Kind::Udp`) are IPv4/UDP (RFC 768) from `10.2.x.y`
//!   to `10.3.x.y` (`x.y` from the source id, in their own block so they never collide with
//!   flows), port `10000 + (id >> 16)` to the discard port 9, the datagram number in the IP ID.
//! - An ACK with SACK blocks is written as the real ACK would be, 4 + 8·n bytes longer than the
//!   52 bytes the simulator charges the link: wire size = written headers + the packet's
//!   payload (`size_bytes - 52`). Every other packet keeps exactly its `size_bytes`.

use crate::packet::{Kind, Packet, MAX_SACK_BLOCKS};
use crate::scenario::HEADER_BYTES;

/// Nanosecond-resolution pcap (the microsecond magic is 0xa1b2c3d4).
const MAGIC_NANOS: u32 = 0xa1b2_3c4d;
/// Link type 101 = LINKTYPE_RAW: the record begins with the IP header.
const LINKTYPE_RAW: u32 = 101;
const IPV4_HEADER_BYTES: usize = 20;
const TCP_BASE_BYTES: usize = 20;
/// NOP, NOP, kind 8, length 10, TSval, TSecr: the 12 bytes Linux puts on every segment.
const TS_OPTION_BYTES: usize = 12;
/// The longest record: IPv4 + TCP + timestamps + three SACK blocks (the 60-byte TCP maximum).
const MAX_CAPTURED: usize =
    IPV4_HEADER_BYTES + TCP_BASE_BYTES + TS_OPTION_BYTES + 4 + 8 * MAX_SACK_BLOCKS;
/// Snap length in the global header; no record is longer, readers treat shorter ones as cut.
const SNAPLEN: u32 = 96;
const GLOBAL_HEADER_BYTES: usize = 24;
const RECORD_HEADER_BYTES: usize = 16;

const UDP_HEADER_BYTES: usize = 8;

const SENDER_PORT_BASE: u16 = 10000;
const RECEIVER_PORT: u16 = 5001;
const DISCARD_PORT: u16 = 9;
const WINDOW: u16 = 65535;
const TTL: u8 = 64;
const PROTO_TCP: u8 = 6;
const PROTO_UDP: u8 = 17;
const TCP_FLAG_ACK: u8 = 0x10;

const _: () = assert!(MAX_CAPTURED <= SNAPLEN as usize);
const _: () =
    assert!(IPV4_HEADER_BYTES + TCP_BASE_BYTES + TS_OPTION_BYTES == HEADER_BYTES as usize);

/// A pcap file under construction: one growing buffer, no allocation per packet.
#[derive(Debug, Clone)]
pub struct Pcap {
    buf: Vec<u8>,
    records: u64,
}

impl Default for Pcap {
    fn default() -> Self {
        Self::new()
    }
}

impl Pcap {
    /// An empty capture: just the global header.
    pub fn new() -> Self {
        let mut buf = Vec::with_capacity(GLOBAL_HEADER_BYTES);
        buf.extend_from_slice(&MAGIC_NANOS.to_le_bytes());
        buf.extend_from_slice(&2u16.to_le_bytes()); // version 2.4, the only one in use
        buf.extend_from_slice(&4u16.to_le_bytes());
        buf.extend_from_slice(&0i32.to_le_bytes()); // thiszone: timestamps are UTC (0)
        buf.extend_from_slice(&0u32.to_le_bytes()); // sigfigs: always 0
        buf.extend_from_slice(&SNAPLEN.to_le_bytes());
        buf.extend_from_slice(&LINKTYPE_RAW.to_le_bytes());
        Self { buf, records: 0 }
    }

    /// Number of packets recorded so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The file so far: valid pcap at any point.
    pub fn bytes(&self) -> &[u8] {
        &self.buf
    }

    /// The finished file.
    pub fn into_bytes(self) -> Vec<u8> {
        self.buf
    }

    /// Append one packet seen at simulated time `now_ns`; `mss_bytes` is its flow's MSS, which
    /// turns segment numbers into byte sequence numbers (unused for UDP datagrams).
    pub fn record(&mut self, now_ns: u64, pkt: &Packet, mss_bytes: u32) {
        let size = Sizes::of(pkt);
        self.push_record_header(now_ns, &size);
        let ends = Ends::of(pkt);
        self.push_ipv4(size.wire, ends.ident, ends.proto, ends.src, ends.dst);
        let start = self.buf.len();
        let to_bytes = |segment: u64| segment.wrapping_mul(u64::from(mss_bytes)) as u32;
        match pkt.kind {
            Kind::Data => {
                let ports = [ends.port, RECEIVER_PORT];
                self.push_tcp(size.transport, ports, to_bytes(pkt.seq), 0, now_ns);
            }
            Kind::Ack => {
                let ports = [RECEIVER_PORT, ends.port];
                self.push_tcp(size.transport, ports, 0, to_bytes(pkt.seq), now_ns);
                self.push_sack(pkt, to_bytes);
            }
            Kind::Udp => self.push_udp(ends.port, size.wire),
        }
        debug_assert_eq!(self.buf.len() - start, size.transport);
        self.fill_transport_checksum(start, &ends, size.wire);
        self.records += 1;
    }

    /// Record header: timestamp (s, ns), captured length, original length.
    fn push_record_header(&mut self, now_ns: u64, size: &Sizes) {
        self.buf.reserve(RECORD_HEADER_BYTES + size.captured);
        let ts_sec = (now_ns / 1_000_000_000) as u32;
        let ts_nsec = (now_ns % 1_000_000_000) as u32;
        for field in [ts_sec, ts_nsec, size.captured as u32, u32::from(size.wire)] {
            self.buf.extend_from_slice(&field.to_le_bytes());
        }
    }

    /// The SACK option of an ACK that carries blocks: NOP, NOP, kind 5, length, then the
    /// blocks as byte sequence numbers (RFC 2018 §3).
    fn push_sack(&mut self, pkt: &Packet, to_bytes: impl Fn(u64) -> u32) {
        let n_sack = usize::from(pkt.n_sack);
        if n_sack == 0 {
            return;
        }
        self.buf
            .extend_from_slice(&[1, 1, 5, (sack_len(n_sack) - 2) as u8]);
        for (left, right) in pkt.sack_blocks() {
            self.buf.extend_from_slice(&to_bytes(left).to_be_bytes());
            self.buf.extend_from_slice(&to_bytes(right).to_be_bytes());
        }
    }

    /// UDP header, RFC 768; port 9 is the discard service: nobody reads this data.
    fn push_udp(&mut self, port: u16, wire: u16) {
        self.buf.extend_from_slice(&port.to_be_bytes());
        self.buf.extend_from_slice(&DISCARD_PORT.to_be_bytes());
        self.buf
            .extend_from_slice(&(wire - IPV4_HEADER_BYTES as u16).to_be_bytes());
        self.buf.extend_from_slice(&0u16.to_be_bytes()); // checksum, filled in below
    }

    /// Transport checksum over the pseudo-header (addresses, protocol, length) and the
    /// segment, whose uncaptured payload is zeros and so adds nothing (RFC 9293 §3.1, RFC 768).
    fn fill_transport_checksum(&mut self, start: usize, ends: &Ends, wire: u16) {
        let segment_len = u32::from(wire) - IPV4_HEADER_BYTES as u32;
        let pseudo =
            sum_words(&ends.src) + sum_words(&ends.dst) + u32::from(ends.proto) + segment_len;
        let (at, sum) = match ends.proto {
            // A computed 0 is sent as all ones: 0 means "no checksum" in UDP (RFC 768).
            PROTO_UDP => (
                6,
                match checksum(&self.buf[start..], pseudo) {
                    0 => 0xffff,
                    sum => sum,
                },
            ),
            _ => (16, checksum(&self.buf[start..], pseudo)),
        };
        self.buf[start + at..start + at + 2].copy_from_slice(&sum.to_be_bytes());
    }

    /// IPv4 header, RFC 791 §3.1, with its checksum.
    fn push_ipv4(&mut self, total_len: u16, ident: u16, proto: u8, src: [u8; 4], dst: [u8; 4]) {
        let ip = self.buf.len();
        self.buf.push(0x45); // version 4, IHL 5 words: no options
        self.buf.push(0); // DSCP/ECN: not ECN-capable
        self.buf.extend_from_slice(&total_len.to_be_bytes());
        self.buf.extend_from_slice(&ident.to_be_bytes());
        self.buf.extend_from_slice(&0x4000u16.to_be_bytes()); // DF, fragment offset 0
        self.buf.push(TTL);
        self.buf.push(proto);
        self.buf.extend_from_slice(&0u16.to_be_bytes()); // checksum, filled in below
        self.buf.extend_from_slice(&src);
        self.buf.extend_from_slice(&dst);
        let sum = checksum(&self.buf[ip..], 0);
        self.buf[ip + 10..ip + 12].copy_from_slice(&sum.to_be_bytes());
    }

    /// TCP header, RFC 9293 §3.1, `header_len` bytes long in all, up to and including the
    /// timestamp option (RFC 7323 §3); any SACK option follows. Checksum left 0.
    fn push_tcp(&mut self, header_len: usize, ports: [u16; 2], seq: u32, ack: u32, now_ns: u64) {
        self.buf.extend_from_slice(&ports[0].to_be_bytes());
        self.buf.extend_from_slice(&ports[1].to_be_bytes());
        self.buf.extend_from_slice(&seq.to_be_bytes());
        self.buf.extend_from_slice(&ack.to_be_bytes());
        self.buf.push(((header_len / 4) as u8) << 4); // data offset in 32-bit words
        self.buf.push(TCP_FLAG_ACK);
        self.buf.extend_from_slice(&WINDOW.to_be_bytes());
        self.buf.extend_from_slice(&0u16.to_be_bytes()); // checksum
        self.buf.extend_from_slice(&0u16.to_be_bytes()); // urgent pointer
                                                         // NOP-padded to a word boundary as Linux does; TSecr 0: there is nothing to echo.
        self.buf.extend_from_slice(&[1, 1, 8, 10]);
        self.buf
            .extend_from_slice(&((now_ns / 1_000_000) as u32).to_be_bytes());
        self.buf.extend_from_slice(&0u32.to_be_bytes());
    }
}

/// How long a packet's record is: the headers written after the IPv4 header, all the headers
/// captured, and the packet's size on the wire.
struct Sizes {
    transport: usize,
    captured: usize,
    wire: u16,
}

impl Sizes {
    fn of(pkt: &Packet) -> Self {
        // Header bytes written after the IPv4 header, and the header bytes the simulator's
        // `size_bytes` includes.
        let (transport, modelled) = match pkt.kind {
            Kind::Data => (TCP_BASE_BYTES + TS_OPTION_BYTES, HEADER_BYTES),
            Kind::Ack => (
                TCP_BASE_BYTES + TS_OPTION_BYTES + sack_len(usize::from(pkt.n_sack)),
                HEADER_BYTES,
            ),
            Kind::Udp => (
                UDP_HEADER_BYTES,
                (IPV4_HEADER_BYTES + UDP_HEADER_BYTES) as u32,
            ),
        };
        let captured = IPV4_HEADER_BYTES + transport;
        // The simulated payload is whatever lies beyond the modelled header bytes.
        let payload = pkt.size_bytes.saturating_sub(modelled);
        // IPv4 total length is 16 bits; a larger packet cannot exist on an IPv4 wire.
        let wire = u16::try_from(captured as u32 + payload).unwrap_or(u16::MAX);
        Self {
            transport,
            captured,
            wire,
        }
    }
}

/// Who a packet is from and to, in the file's conventions (the module's doc): addresses,
/// protocol, the flow's or source's own port, the IP ID.
struct Ends {
    src: [u8; 4],
    dst: [u8; 4],
    proto: u8,
    port: u16,
    ident: u16,
}

impl Ends {
    fn of(pkt: &Packet) -> Self {
        let [_, _, hi, lo] = pkt.flow.to_be_bytes();
        let sender = [10, 0, hi, lo];
        let receiver = [10, 1, hi, lo];
        let (src, dst, proto) = match pkt.kind {
            Kind::Data => (sender, receiver, PROTO_TCP),
            Kind::Ack => (receiver, sender, PROTO_TCP),
            Kind::Udp => ([10, 2, hi, lo], [10, 3, hi, lo], PROTO_UDP),
        };
        // Datagram numbers go into the IP ID so that losses of cross traffic stay visible;
        // TCP segments carry their own sequence numbers.
        let ident = match pkt.kind {
            Kind::Udp => pkt.seq as u16,
            Kind::Data | Kind::Ack => 0,
        };
        Self {
            src,
            dst,
            proto,
            port: SENDER_PORT_BASE.wrapping_add((pkt.flow >> 16) as u16),
            ident,
        }
    }
}

/// Bytes of the SACK option for `n` blocks: NOP, NOP, kind, length, 8 per block (RFC 2018 §3).
fn sack_len(n: usize) -> usize {
    if n == 0 {
        0
    } else {
        4 + 8 * n
    }
}

/// Sum of big-endian 16-bit words (an odd tail is padded with a zero byte), unfolded.
fn sum_words(bytes: &[u8]) -> u32 {
    bytes
        .chunks(2)
        .map(|w| u32::from(u16::from_be_bytes([w[0], *w.get(1).unwrap_or(&0)])))
        .sum()
}

/// The Internet checksum (RFC 1071): ones'-complement of the ones'-complement sum.
fn checksum(bytes: &[u8], initial: u32) -> u16 {
    let mut sum = initial + sum_words(bytes);
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    !(sum as u16)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::packet::SackBlock;
    use crate::scenario::ACK_BYTES;

    const MSS: u32 = 1448;

    fn be16(b: &[u8], at: usize) -> u16 {
        u16::from_be_bytes([b[at], b[at + 1]])
    }
    fn be32(b: &[u8], at: usize) -> u32 {
        u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
    }
    fn le32(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    /// One parsed record: (ts_sec, ts_nsec, orig_len, captured bytes); checks both checksums.
    fn parse_record(file: &[u8], at: usize) -> (u32, u32, u32, &[u8]) {
        let incl = le32(file, at + 8) as usize;
        let data = &file[at + 16..at + 16 + incl];
        assert_eq!(checksum(&data[..20], 0), 0, "IPv4 header checksum");
        let proto = data[9];
        let segment_len = u32::from(be16(data, 2)) - 20;
        let pseudo = sum_words(&data[12..20]) + u32::from(proto) + segment_len;
        assert_eq!(checksum(&data[20..], pseudo), 0, "transport checksum");
        (
            le32(file, at),
            le32(file, at + 4),
            le32(file, at + 12),
            data,
        )
    }

    #[test]
    fn global_header() {
        let pcap = Pcap::new();
        assert_eq!(pcap.records(), 0);
        assert_eq!(
            pcap.into_bytes(),
            [
                0x4d, 0x3c, 0xb2, 0xa1, // magic, nanoseconds, little-endian
                2, 0, 4, 0, // version 2.4
                0, 0, 0, 0, // thiszone
                0, 0, 0, 0, // sigfigs
                96, 0, 0, 0, // snaplen
                101, 0, 0, 0, // LINKTYPE_RAW
            ]
        );
    }

    #[test]
    fn data_record() {
        let mut pcap = Pcap::new();
        // Flow 258 = 0x0102, segment 3_000_000: byte offset 4_344_000_000 wraps past 2^32.
        let pkt = Packet::data(258, 3_000_000, MSS + HEADER_BYTES);
        pcap.record(2_500_000_123, &pkt, MSS);
        let file = pcap.into_bytes();
        assert_eq!(file.len(), 24 + 16 + 52);
        let (sec, nsec, orig, d) = parse_record(&file, 24);
        assert_eq!((sec, nsec, orig, d.len()), (2, 500_000_123, 1500, 52));
        // IPv4
        assert_eq!(d[0], 0x45);
        assert_eq!(be16(d, 2), 1500);
        assert_eq!((d[8], d[9]), (64, 6));
        assert_eq!(&d[12..16], &[10, 0, 1, 2]);
        assert_eq!(&d[16..20], &[10, 1, 1, 2]);
        // TCP
        let t = &d[20..];
        assert_eq!((be16(t, 0), be16(t, 2)), (10000, 5001));
        assert_eq!(be32(t, 4), (3_000_000u64 * 1448 % (1 << 32)) as u32);
        assert_eq!(be32(t, 8), 0);
        assert_eq!(t[12] >> 4, 8, "data offset: 32 bytes");
        assert_eq!(t[13], TCP_FLAG_ACK);
        assert_eq!(be16(t, 14), WINDOW);
        assert_eq!(&t[20..24], &[1, 1, 8, 10]);
        assert_eq!(be32(t, 24), 2500, "TSval in ms");
    }

    #[test]
    fn ack_record_with_sack() {
        let mut pcap = Pcap::new();
        let mut pkt = Packet::ack(7, 100, ACK_BYTES);
        pkt.n_sack = 2;
        pkt.sack[0] = SackBlock { start: 5, end: 8 };
        pkt.sack[1] = SackBlock { start: 2, end: 3 };
        pcap.record(1_000_000, &pkt, MSS);
        let file = pcap.into_bytes();
        let (_, _, orig, d) = parse_record(&file, 24);
        // 20 IP + 20 TCP + 12 timestamps + 4 + 2·8 SACK, no payload.
        assert_eq!((orig, d.len(), be16(d, 2)), (72, 72, 72));
        assert_eq!(&d[12..16], &[10, 1, 0, 7], "ACKs come from the receiver");
        assert_eq!(&d[16..20], &[10, 0, 0, 7]);
        let t = &d[20..];
        assert_eq!((be16(t, 0), be16(t, 2)), (5001, 10000));
        assert_eq!(be32(t, 4), 0);
        assert_eq!(be32(t, 8), 100 * MSS);
        assert_eq!(t[12] >> 4, 13, "data offset: 52 bytes");
        assert_eq!(t[13], TCP_FLAG_ACK);
        assert_eq!(be32(t, 24), 1, "TSval in ms");
        assert_eq!(&t[32..36], &[1, 1, 5, 18]);
        let blocks: Vec<u32> = (0..4).map(|i| be32(t, 36 + 4 * i)).collect();
        assert_eq!(blocks, [105 * MSS, 108 * MSS, 102 * MSS, 103 * MSS]);
    }

    #[test]
    fn plain_ack_keeps_its_size() {
        let mut pcap = Pcap::new();
        pcap.record(0, &Packet::ack(0, 1, ACK_BYTES), MSS);
        let file = pcap.into_bytes();
        let (_, _, orig, d) = parse_record(&file, 24);
        assert_eq!((orig, d.len(), be16(d, 2)), (ACK_BYTES, 52, 52));
        assert_eq!(d[32] >> 4, 8);
    }

    #[test]
    fn udp_record() {
        let mut pcap = Pcap::new();
        pcap.record(0, &Packet::udp(3, 70_001, 1500), MSS);
        let file = pcap.into_bytes();
        let (_, _, orig, d) = parse_record(&file, 24);
        assert_eq!((orig, d.len(), be16(d, 2)), (1500, 28, 1500));
        assert_eq!((be16(d, 4), d[9]), ((70_001 % 65_536) as u16, 17));
        assert_eq!(&d[12..16], &[10, 2, 0, 3]);
        assert_eq!(&d[16..20], &[10, 3, 0, 3]);
        assert_eq!((be16(d, 20), be16(d, 22), be16(d, 24)), (10000, 9, 1480));
        assert_ne!(be16(d, 26), 0, "0 would mean no checksum");
    }

    #[test]
    fn many_records() {
        let mut pcap = Pcap::new();
        let n = 10_000u64;
        for i in 0..n {
            let flow = (i % 3) as u32;
            if i % 2 == 0 {
                pcap.record(i * 1000, &Packet::data(flow, i, MSS + HEADER_BYTES), MSS);
            } else {
                pcap.record(i * 1000, &Packet::ack(flow, i, ACK_BYTES), MSS);
            }
        }
        assert_eq!(pcap.records(), n);
        let file = pcap.into_bytes();
        assert_eq!(file.len(), 24 + n as usize * (16 + 52));
        // Walk the file record by record: every one parses and checks out, times are in order.
        let (mut at, mut count, mut last) = (24, 0, 0);
        while at < file.len() {
            let (sec, nsec, _, d) = parse_record(&file, at);
            let t = u64::from(sec) * 1_000_000_000 + u64::from(nsec);
            assert!(t >= last);
            last = t;
            at += 16 + d.len();
            count += 1;
        }
        assert_eq!((at, count), (file.len(), n));
    }

    #[test]
    fn large_flow_ids_stay_distinct() {
        let mut pcap = Pcap::new();
        pcap.record(0, &Packet::data(0x0001_0005, 0, 1500), MSS);
        let file = pcap.into_bytes();
        let (_, _, _, d) = parse_record(&file, 24);
        assert_eq!(&d[12..16], &[10, 0, 0, 5]);
        assert_eq!(be16(d, 20), 10001, "high bits of the flow go into the port");
    }
}
