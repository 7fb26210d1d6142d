//! Interval reports: one machine-readable line on stderr per interval while a `tcp` test
//! runs, for callers that print iperf3-style reports as the test goes (`--interval-ms`).
//!
//! A line is `interval ` followed by one JSON object: the interval's bounds (ns since the
//! streams began) and per stream the bytes this end moved in it and, when this end sends,
//! its sending socket's TCP_INFO at the interval's end (retransmits in the interval, cwnd,
//! smoothed RTT). A receiving end's TCP_INFO says nothing of the sender's window or
//! retransmits, so in reverse tests those fields are null; the sender's full history still
//! arrives with the results.

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

use serde::Serialize;

use crate::datapath::Counters;
use crate::sample;

/// A final interval shorter than this share of the interval is not reported: its rate
/// would rest on a few milliseconds of data.
const SHORTEST_LAST_SHARE: f64 = 0.1;

#[derive(Serialize, Debug, PartialEq)]
pub struct StreamInterval {
    pub id: u32,
    pub bytes: u64,
    pub retransmits: Option<u32>,
    pub cwnd_pkts: Option<u32>,
    pub mss_bytes: Option<u32>,
    pub rtt_us: Option<u32>,
}

#[derive(Serialize, Debug, PartialEq)]
pub struct IntervalLine {
    pub start_ns: u64,
    pub end_ns: u64,
    pub streams: Vec<StreamInterval>,
}

pub struct IntervalReporter {
    every: Duration,
    last_end: Duration,
    last_bytes: Vec<u64>,
    last_retransmits: Vec<u32>,
    /// True in reverse tests: this end receives, its TCP_INFO is not the sender's.
    receiving: bool,
    done: bool,
}

impl IntervalReporter {
    pub fn new(every: Duration, streams: usize, receiving: bool) -> Self {
        IntervalReporter {
            every,
            last_end: Duration::ZERO,
            last_bytes: vec![0; streams],
            last_retransmits: vec![0; streams],
            receiving,
            done: false,
        }
    }

    /// Prints the interval that ended by `elapsed`, if one did.
    pub fn tick(&mut self, elapsed: Duration, streams: &[TcpStream], counters: &[Counters]) {
        if !self.done && elapsed >= self.last_end + self.every {
            let end = self.last_end + self.every;
            let line = self.take(end, streams, counters);
            print(&line);
        }
    }

    /// Prints the last, partial interval up to `elapsed` (the data stopped) unless it is too
    /// short to say anything; no interval follows.
    pub fn finish(&mut self, elapsed: Duration, streams: &[TcpStream], counters: &[Counters]) {
        if !self.done && self.last_is_long_enough(elapsed) {
            let line = self.take(elapsed, streams, counters);
            print(&line);
        }
        self.done = true;
    }

    fn last_is_long_enough(&self, elapsed: Duration) -> bool {
        let partial = elapsed.saturating_sub(self.last_end);
        partial.as_secs_f64() >= SHORTEST_LAST_SHARE * self.every.as_secs_f64()
    }

    fn take(
        &mut self,
        end: Duration,
        streams: &[TcpStream],
        counters: &[Counters],
    ) -> IntervalLine {
        let start_ns = self.last_end.as_nanos() as u64;
        let end_ns = end.as_nanos() as u64;
        let streams = streams
            .iter()
            .zip(counters)
            .enumerate()
            .map(|(i, (socket, counters))| self.stream(i, socket, counters.total(), end_ns))
            .collect();
        self.last_end = end;
        IntervalLine {
            start_ns,
            end_ns,
            streams,
        }
    }

    fn stream(&mut self, i: usize, socket: &TcpStream, total: u64, t_ns: u64) -> StreamInterval {
        let bytes = total - self.last_bytes[i];
        self.last_bytes[i] = total;
        let info = (!self.receiving)
            .then(|| sample::read(i as u32, socket, t_ns))
            .flatten();
        let retransmits = info.as_ref().map(|s| {
            let new = s
                .total_retrans_pkts
                .saturating_sub(self.last_retransmits[i]);
            self.last_retransmits[i] = s.total_retrans_pkts;
            new
        });
        StreamInterval {
            id: i as u32,
            bytes,
            retransmits,
            cwnd_pkts: info.as_ref().map(|s| s.snd_cwnd_pkts),
            mss_bytes: info.as_ref().map(|s| s.snd_mss_bytes),
            rtt_us: info.as_ref().map(|s| s.rtt_us),
        }
    }
}

fn print(line: &IntervalLine) {
    let json = serde_json::to_string(line).expect("an interval is plain data");
    // A reader gone away (the driver killed) must not end the test: eprintln! would panic.
    let _ = writeln!(std::io::stderr(), "interval {json}");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_sockets::connected_pair as pair;
    use std::time::Instant;

    #[test]
    fn intervals_follow_each_other_and_count_only_their_own_bytes() {
        let (client, _server) = pair();
        let counters = vec![Counters::default()];
        let start = Instant::now();
        let mut reporter = IntervalReporter::new(Duration::from_secs(1), 1, false);
        counters[0].add(1000, start);
        let first = reporter.take(
            Duration::from_secs(1),
            std::slice::from_ref(&client),
            &counters,
        );
        counters[0].add(500, start);
        let second = reporter.take(
            Duration::from_secs(2),
            std::slice::from_ref(&client),
            &counters,
        );
        assert_eq!((first.start_ns, first.end_ns), (0, 1_000_000_000));
        assert_eq!(
            (second.start_ns, second.end_ns),
            (1_000_000_000, 2_000_000_000)
        );
        assert_eq!(
            (first.streams[0].bytes, second.streams[0].bytes),
            (1000, 500)
        );
        // A sending socket's TCP_INFO is read: a connected socket has a window.
        assert!(first.streams[0].cwnd_pkts.is_some_and(|c| c > 0));
        assert_eq!(first.streams[0].retransmits, Some(0));
    }

    #[test]
    fn a_last_interval_under_a_tenth_of_one_is_not_reported() {
        let mut reporter = IntervalReporter::new(Duration::from_secs(1), 0, false);
        reporter.take(Duration::from_secs(3), &[], &[]);
        assert!(!reporter.last_is_long_enough(Duration::from_millis(3_099)));
        assert!(reporter.last_is_long_enough(Duration::from_millis(3_100)));
    }

    #[test]
    fn a_receiving_end_reports_no_sender_figures() {
        let (client, _server) = pair();
        let counters = vec![Counters::default()];
        let mut reporter = IntervalReporter::new(Duration::from_secs(1), 1, true);
        let line = reporter.take(
            Duration::from_secs(1),
            std::slice::from_ref(&client),
            &counters,
        );
        let s = &line.streams[0];
        assert_eq!((s.retransmits, s.cwnd_pkts, s.rtt_us), (None, None, None));
    }
}
