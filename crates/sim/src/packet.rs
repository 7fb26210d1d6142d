//! Packets are small `Copy` values moved through FIFOs: no heap allocation per packet.
//!
//! Sequence numbers count segments, not bytes (windows are in packets throughout); the
//! byte offset of a segment is `seq * mss`.

use tcpeval_netem::{Ecn, Frame};

use crate::engine::FlowId;

/// Most SACK blocks an ACK carries (RFC 2018 §3: three when timestamps are in use, as on Linux).
pub const MAX_SACK_BLOCKS: usize = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Data,
    Ack,
    /// A datagram of a background source (no congestion control, no ACK).
    Udp,
}

/// A SACK block `[start, end)` in segments, relative to the ACK's cumulative acknowledgement
/// (so it fits in 32 bits even after terabytes); signed, because a D-SACK block (RFC 2883)
/// may report a duplicate below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SackBlock {
    pub start: i32,
    pub end: i32,
}

impl SackBlock {
    /// The block `[start, end)` (absolute segment numbers) of an ACK whose cumulative
    /// acknowledgement is `cum_ack`.
    pub fn relative_to(cum_ack: u64, start: u64, end: u64) -> Self {
        let offset = |seq: u64| {
            i32::try_from(seq.wrapping_sub(cum_ack) as i64).expect("a block within 2^31 segments")
        };
        Self {
            start: offset(start),
            end: offset(end),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Packet {
    pub flow: FlowId,
    pub kind: Kind,
    /// Position in the flow's route for this direction.
    pub hop: u8,
    /// Which of the flow's routes it was sent on: 0 the first, n after the n-th change. A
    /// packet finishes the path it started on (`net/routes.rs`).
    pub route: u8,
    pub n_sack: u8,
    /// The IP header's ECN field (RFC 3168 §5); queues may set it to CE on the way.
    pub ecn: Ecn,
    /// TCP's ECN flags (RFC 3168 §6.1): ECE on an ACK echoes CE, CWR on data answers it.
    pub ece: bool,
    pub cwr: bool,
    /// AccECN's ACE field on an ACK: CE packets received, modulo 8 (RFC 9768 §3.2.2).
    pub ace: u8,
    pub size_bytes: u32,
    /// Ack: the receive window advertised, in segments (`u32::MAX`: no limit).
    pub window: u32,
    /// Data: the segment number. Ack: the next segment expected (cumulative ACK).
    pub seq: u64,
    /// The timestamp option (RFC 7323, `tcp/timestamps.rs`). Data: TSval, the sender's clock
    /// when it left (0 if the host sends none). Ack: TSecr, the TSval the receiver echoes.
    pub timestamp: u32,
    pub sack: [SackBlock; MAX_SACK_BLOCKS],
}

impl Packet {
    pub fn data(flow: FlowId, seq: u64, size_bytes: u32) -> Self {
        Self {
            flow,
            kind: Kind::Data,
            hop: 0,
            route: 0,
            n_sack: 0,
            ecn: Ecn::NotEct,
            ece: false,
            cwr: false,
            ace: 0,
            size_bytes,
            window: u32::MAX,
            seq,
            timestamp: 0,
            sack: Default::default(),
        }
    }

    /// The same data segment stamped with TSval `tsval` (RFC 7323 §3).
    pub fn stamped(self, tsval: u32) -> Self {
        Self {
            timestamp: tsval,
            ..self
        }
    }

    /// Datagram number `seq` of background source `source`.
    pub fn udp(source: FlowId, seq: u64, size_bytes: u32) -> Self {
        Self {
            kind: Kind::Udp,
            ..Self::data(source, seq, size_bytes)
        }
    }

    pub fn ack(flow: FlowId, cum_ack: u64, size_bytes: u32) -> Self {
        Self {
            kind: Kind::Ack,
            ..Self::data(flow, cum_ack, size_bytes)
        }
    }

    /// SACK blocks in absolute segment numbers, most recent first (RFC 2018 §4).
    pub fn sack_blocks(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        self.sack[..usize::from(self.n_sack)].iter().map(|b| {
            let at = |offset: i32| self.seq.saturating_add_signed(i64::from(offset));
            (at(b.start), at(b.end))
        })
    }
}

impl Frame for Packet {
    fn size_bytes(&self) -> u32 {
        self.size_bytes
    }

    fn ecn(&self) -> Ecn {
        self.ecn
    }

    fn mark_ce(&mut self) {
        self.ecn = Ecn::Ce;
    }

    fn flow_key(&self) -> u64 {
        // Data, ACKs and datagrams of one number are different flows to a queue.
        u64::from(self.flow) << 2 | self.kind as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_stays_a_small_copy() {
        // Links queue packets by value: 48 bytes before the timestamp option, 56 with it (an
        // ACK carries its window and TSecr; the SACK blocks take 24).
        assert_eq!(std::mem::size_of::<Packet>(), 56);
    }
}
