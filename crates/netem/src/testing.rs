//! A packet for the queue models' unit tests: numbered, of any size, codepoint and flow.

use crate::{Ecn, Frame};

pub const MS: u64 = 1_000_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TestPkt {
    pub seq: u64,
    pub size_bytes: u32,
    pub ecn: Ecn,
    pub flow: u64,
}

impl TestPkt {
    /// Packet `seq`: 1500 bytes, Not-ECT, flow 0.
    pub fn new(seq: u64) -> Self {
        Self {
            seq,
            size_bytes: 1500,
            ecn: Ecn::NotEct,
            flow: 0,
        }
    }

    pub fn with_ecn(self, ecn: Ecn) -> Self {
        Self { ecn, ..self }
    }

    pub fn of_flow(self, flow: u64) -> Self {
        Self { flow, ..self }
    }

    pub fn sized(self, size_bytes: u32) -> Self {
        Self { size_bytes, ..self }
    }
}

impl Frame for TestPkt {
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
        self.flow
    }
}
