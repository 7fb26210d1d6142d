//! Request-response exchanges (the event-filter pattern of the studies): the client writes a
//! request on one flow; once the server holds it whole it writes the response on another;
//! once the client holds that whole and a think time has passed, the next request goes out.
//! The latency of an exchange runs from the request's write to the response's last byte at
//! the client.

use crate::engine::FlowId;
use crate::scenario;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Waiting for the next request (or finished).
    Idle,
    /// The request is on its way; the server has it once its receiver reaches `end`.
    Request { began_ns: u64, end: u64 },
    /// The response is on its way; the client has it once its receiver reaches `end`.
    Response { began_ns: u64, end: u64 },
}

/// What the simulation must do for an exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Nothing,
    /// Write this many bytes on the flow, then report the end segment with `written`.
    Write {
        flow: FlowId,
        bytes: u64,
    },
    /// Start the next exchange at this time.
    NextAt(u64),
}

#[derive(Debug, Clone)]
pub struct Exchange {
    pub spec: scenario::Exchange,
    phase: Phase,
    pub latencies_ns: Vec<u64>,
}

impl Exchange {
    pub fn new(spec: &scenario::Exchange) -> Self {
        Self {
            spec: spec.clone(),
            phase: Phase::Idle,
            latencies_ns: Vec::new(),
        }
    }

    /// Time for the next request.
    pub fn begin(&mut self, now_ns: u64) -> Action {
        if self.latencies_ns.len() >= self.spec.count as usize {
            return Action::Nothing;
        }
        self.phase = Phase::Request {
            began_ns: now_ns,
            end: u64::MAX,
        };
        Action::Write {
            flow: self.spec.request_flow,
            bytes: self.spec.request_bytes,
        }
    }

    /// The message asked for by the last `Write` ends at segment `end` of its flow.
    pub fn written(&mut self, end: u64) {
        match &mut self.phase {
            Phase::Request { end: e, .. } | Phase::Response { end: e, .. } => *e = end,
            Phase::Idle => {}
        }
    }

    /// `flow`'s receiver now holds `rcv_nxt` segments in order.
    pub fn on_delivered(&mut self, now_ns: u64, flow: FlowId, rcv_nxt: u64) -> Action {
        match self.phase {
            Phase::Request { began_ns, end }
                if flow == self.spec.request_flow && rcv_nxt >= end =>
            {
                self.phase = Phase::Response {
                    began_ns,
                    end: u64::MAX,
                };
                Action::Write {
                    flow: self.spec.response_flow,
                    bytes: self.spec.response_bytes,
                }
            }
            Phase::Response { began_ns, end }
                if flow == self.spec.response_flow && rcv_nxt >= end =>
            {
                self.latencies_ns.push(now_ns - began_ns);
                self.phase = Phase::Idle;
                Action::NextAt(now_ns + self.spec.think_ns)
            }
            _ => Action::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec() -> scenario::Exchange {
        scenario::Exchange {
            request_flow: 0,
            response_flow: 1,
            request_bytes: 64,
            response_bytes: 1_000_000,
            think_ns: 5,
            count: 2,
        }
    }

    #[test]
    fn an_exchange_is_a_request_then_a_response_then_a_think_time() {
        let mut x = Exchange::new(&spec());
        assert_eq!(x.begin(100), Action::Write { flow: 0, bytes: 64 });
        x.written(1);
        assert_eq!(x.on_delivered(150, 1, 1), Action::Nothing, "the wrong flow");
        assert_eq!(
            x.on_delivered(150, 0, 1),
            Action::Write {
                flow: 1,
                bytes: 1_000_000
            }
        );
        x.written(691);
        assert_eq!(
            x.on_delivered(300, 1, 690),
            Action::Nothing,
            "not all of it yet"
        );
        assert_eq!(x.on_delivered(400, 1, 691), Action::NextAt(405));
        assert_eq!(x.latencies_ns, [300]);
    }

    #[test]
    fn it_stops_after_count_exchanges() {
        let mut x = Exchange::new(&spec());
        for _ in 0..2 {
            x.begin(0);
            x.written(1);
            x.on_delivered(1, 0, u64::MAX);
            x.written(2);
            x.on_delivered(2, 1, u64::MAX);
        }
        assert_eq!(x.begin(10), Action::Nothing);
        assert_eq!(x.latencies_ns.len(), 2);
    }
}
