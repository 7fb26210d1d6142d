//! LINKS.csv: the queue and cumulative counters of each direction every `sample_interval_ns`,
//! kept in a preallocated table and written when the run ends.

use std::io::{self, Write};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Row {
    /// Since `start_realtime_ns`.
    pub t_ns: u64,
    pub forward: bool,
    pub queue_pkts: u64,
    pub queue_bytes: u64,
    /// Cumulative, every cause.
    pub drops: u64,
    /// Cumulative.
    pub sent_bytes: u64,
}

pub struct Samples {
    rows: Vec<Row>,
}

impl Samples {
    /// Room for a run of `max_duration_ns` (two rows per sample, one spare sample).
    pub fn new(max_duration_ns: u64, interval_ns: u64) -> Self {
        let samples = (max_duration_ns / interval_ns + 2) as usize;
        Self {
            rows: Vec::with_capacity(2 * samples),
        }
    }

    /// Appends; never grows past the preallocated room (a sample beyond it is not kept).
    pub fn push(&mut self, row: Row) {
        if self.rows.len() < self.rows.capacity() {
            self.rows.push(row);
        }
    }

    pub fn write(&self, out: &mut impl Write) -> io::Result<()> {
        writeln!(
            out,
            "t_ns,direction,queue_pkts,queue_bytes,drops,sent_bytes"
        )?;
        for r in &self.rows {
            let dir = if r.forward { "forward" } else { "reverse" };
            writeln!(
                out,
                "{},{dir},{},{},{},{}",
                r.t_ns, r.queue_pkts, r.queue_bytes, r.drops, r.sent_bytes
            )?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_are_written_under_the_header_and_bounded() {
        let mut s = Samples::new(10, 10);
        let row = |t_ns, forward| Row {
            t_ns,
            forward,
            queue_pkts: 3,
            queue_bytes: 4500,
            drops: 1,
            sent_bytes: 9000,
        };
        for t in 0..10 {
            s.push(row(t, t % 2 == 0));
        }
        let mut out = Vec::new();
        s.write(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            "t_ns,direction,queue_pkts,queue_bytes,drops,sent_bytes"
        );
        assert_eq!(lines[1], "0,forward,3,4500,1,9000");
        assert_eq!(lines[2], "1,reverse,3,4500,1,9000");
        assert_eq!(lines.len(), 1 + 6);
    }
}
