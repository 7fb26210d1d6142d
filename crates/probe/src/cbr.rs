//! Constant-bit-rate UDP: a paced sender (`cbr`) and a sink that only listens (`cbr-sink`),
//! the background traffic of the namespace lab.
//!
//! Every datagram starts with a stamp (`udp::Stamp`): the sender's random session, a sequence
//! number counted from 0 over the datagrams actually sent, and the sender's wall clock. No
//! control connection: the sink never sends anything, so it cannot be used to amplify.

use std::io::Write as _;
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::Serialize;
use socket2::SockRef;

use crate::auth;
use crate::error::{ProbeError, Result};
use crate::report;
use crate::udp::{self, read_stamp, write_stamp, Stamp, STAMP_BYTES};

const MAGIC: u32 = 0x7463_7063; // "tcpc"
pub const MIN_RATE_BPS: u64 = 1_000;
pub const MAX_RATE_BPS: u64 = 10_000_000_000;
/// The largest UDP payload an IPv4 datagram can carry (65535 − 20 − 8).
pub const MAX_SIZE_BYTES: u32 = 65_507;
/// Slots a late sender may still send back to back; older ones are skipped, not burst.
const MAX_BURST_PKTS: u64 = 4;
/// Sequence numbers below the highest seen that the sink can still tell apart (8 KiB).
const REORDER_WINDOW_PKTS: u64 = 1 << 16;
/// Thirty days: long enough for any background load, short enough that no deadline overflows.
const MAX_DURATION: Duration = Duration::from_secs(30 * 86_400);
/// How often a waiting sender or sink looks at its deadline and at Ctrl-C / SIGTERM.
const POLL: Duration = Duration::from_millis(20);

/// UDP header plus the IP header of the address family: what a payload rides in on the path.
fn ip_overhead_bytes(ip: IpAddr) -> u64 {
    let v4 = match ip {
        IpAddr::V4(_) => true,
        IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
    };
    8 + if v4 { 20 } else { 40 }
}

fn bits_per_s(bytes: u64, span_ns: u64) -> f64 {
    if span_ns == 0 {
        return 0.0;
    }
    bytes as f64 * 8.0 / (span_ns as f64 / 1e9)
}

/// When each datagram is due: slot k at exactly k·bits/rate after the start. Computed from k,
/// never by adding intervals, so rounding cannot accumulate into drift.
#[derive(Clone, Copy, Debug)]
pub struct Schedule {
    rate_bps: u64,
    bits_per_pkt: u64,
}

impl Schedule {
    pub fn new(rate_bps: u64, ip_bytes_per_pkt: u64) -> Self {
        Schedule {
            rate_bps,
            bits_per_pkt: ip_bytes_per_pkt * 8,
        }
    }

    /// Nanoseconds from the start to slot `slot` (rounded down).
    pub fn offset_ns(&self, slot: u64) -> u64 {
        let ns = u128::from(slot) * u128::from(self.bits_per_pkt) * 1_000_000_000
            / u128::from(self.rate_bps);
        u64::try_from(ns).unwrap_or(u64::MAX)
    }

    /// How many slots are due `elapsed_ns` after the start: those with `offset_ns ≤ elapsed_ns`.
    pub fn due(&self, elapsed_ns: u64) -> u64 {
        // offset_ns(k) ≤ e  ⇔  k·bits·1e9 < (e + 1)·rate, so the count is ⌈(e + 1)·rate / (bits·1e9)⌉.
        let numerator = (u128::from(elapsed_ns) + 1) * u128::from(self.rate_bps);
        let per_slot = u128::from(self.bits_per_pkt) * 1_000_000_000;
        u64::try_from(numerator.div_ceil(per_slot)).unwrap_or(u64::MAX)
    }

    /// The slot to send now: `next` if the sender is on time, else the oldest of the last
    /// `MAX_BURST_PKTS` slots due, so a stall costs slots, never a burst.
    pub fn catch_up(&self, next: u64, elapsed_ns: u64) -> u64 {
        next.max(self.due(elapsed_ns).saturating_sub(MAX_BURST_PKTS))
    }
}

pub struct CbrOptions {
    pub to: SocketAddr,
    pub rate_bps: u64,
    pub size_bytes: u32,
    pub duration: Duration,
    pub out: PathBuf,
}

/// What the sender writes to `--out`.
#[derive(Serialize, Debug, Default, PartialEq)]
pub struct CbrReport {
    pub tool: String,
    pub mode: String,
    pub to: String,
    pub asked_rate_bps: u64,
    pub size_bytes: u32,
    /// Added to each payload for pacing and rates: UDP 8 + IPv4 20 (or IPv6 40).
    pub ip_overhead_bytes: u64,
    pub interrupted: bool,
    pub sent_pkts: u64,
    /// UDP payload bytes sent.
    pub sent_bytes: u64,
    pub send_errors: u64,
    /// Slots given up after a stall, so as not to burst (see `Schedule::catch_up`).
    pub skipped_slots: u64,
    pub duration_ns: u64,
    /// IP packets' bits sent over `duration_ns`.
    pub achieved_rate_bps: f64,
    pub warnings: Vec<String>,
}

fn validate_cbr(options: &CbrOptions) -> Result<()> {
    if !(MIN_RATE_BPS..=MAX_RATE_BPS).contains(&options.rate_bps) {
        return Err(ProbeError::invalid(
            "rate_bps",
            options.rate_bps,
            format!("must be {MIN_RATE_BPS}..={MAX_RATE_BPS} (1 kb/s to 10 Gb/s)"),
        ));
    }
    if !(STAMP_BYTES as u32..=MAX_SIZE_BYTES).contains(&options.size_bytes) {
        return Err(ProbeError::invalid(
            "size_bytes",
            options.size_bytes,
            format!("must be {STAMP_BYTES}..={MAX_SIZE_BYTES}"),
        ));
    }
    validate_duration(options.duration)?;
    report::file_name(&options.out)?;
    if options.to.port() == 0 {
        return Err(ProbeError::invalid("to", options.to, "needs a port"));
    }
    Ok(())
}

fn validate_duration(duration: Duration) -> Result<()> {
    if duration.is_zero() || duration > MAX_DURATION {
        return Err(ProbeError::invalid(
            "duration_ms",
            duration.as_millis(),
            format!("must be 1..={}", MAX_DURATION.as_millis()),
        ));
    }
    Ok(())
}

pub fn run_sender(options: &CbrOptions, interrupted: &AtomicBool) -> Result<CbrReport> {
    validate_cbr(options)?;
    let socket = udp::connected_socket(options.to)?;
    let overhead = ip_overhead_bytes(options.to.ip());
    let schedule = Schedule::new(options.rate_bps, u64::from(options.size_bytes) + overhead);
    let mut report = CbrReport {
        tool: "tcpeval-probe".into(),
        mode: "cbr".into(),
        to: options.to.to_string(),
        asked_rate_bps: options.rate_bps,
        size_bytes: options.size_bytes,
        ip_overhead_bytes: overhead,
        ..CbrReport::default()
    };
    send_paced(&socket, &schedule, options, interrupted, &mut report);
    report.interrupted = interrupted.load(Ordering::Relaxed);
    report.sent_bytes = report.sent_pkts * u64::from(options.size_bytes);
    report.achieved_rate_bps = bits_per_s(
        report.sent_pkts * (u64::from(options.size_bytes) + overhead),
        report.duration_ns,
    );
    report.warnings = shortfall_warnings(&report);
    for warning in &report.warnings {
        eprintln!("warning: {warning}");
    }
    report::write_json_file(&options.out, &report)?;
    Ok(report)
}

/// Why the rate fell short, so a background load that was lighter than asked is noticed.
fn shortfall_warnings(report: &CbrReport) -> Vec<String> {
    let mut warnings = Vec::new();
    if report.skipped_slots > 0 {
        warnings.push(format!(
            "{} slots skipped: this host could not send fast enough (achieved {:.0} of {} b/s)",
            report.skipped_slots, report.achieved_rate_bps, report.asked_rate_bps
        ));
    }
    if report.send_errors > 0 {
        warnings.push(format!(
            "{} datagrams could not be sent (local buffer full or the sink unreachable)",
            report.send_errors
        ));
    }
    warnings
}

/// Sends slot by slot on absolute deadlines until the duration is up, then waits out the rest
/// of it, so `duration_ns` is the span the rate is averaged over.
fn send_paced(
    socket: &UdpSocket,
    schedule: &Schedule,
    options: &CbrOptions,
    interrupted: &AtomicBool,
    report: &mut CbrReport,
) {
    let mut buf = vec![0u8; options.size_bytes as usize];
    let session = auth::random_bytes::<8>();
    let end_ns = options.duration.as_nanos() as u64;
    let start = Instant::now();
    let start_unix_ns = report::unix_now_ns();
    let mut next = 0;
    while !interrupted.load(Ordering::Relaxed) && schedule.offset_ns(next) < end_ns {
        if !wait(
            start + Duration::from_nanos(schedule.offset_ns(next)),
            interrupted,
        ) {
            break;
        }
        let elapsed_ns = start.elapsed().as_nanos() as u64;
        let slot = schedule.catch_up(next, elapsed_ns);
        if schedule.offset_ns(slot) >= end_ns {
            break;
        }
        report.skipped_slots += slot - next;
        next = slot + 1;
        let stamp = Stamp {
            session,
            // Numbered by datagrams sent, not slots: a skipped slot or a failed send is not a
            // loss on the path.
            seq: report.sent_pkts,
            send_ns: start_unix_ns + elapsed_ns,
        };
        write_stamp(&mut buf, MAGIC, &stamp);
        match socket.send(&buf) {
            Ok(_) => report.sent_pkts += 1,
            Err(_) => report.send_errors += 1,
        }
    }
    wait(start + options.duration, interrupted);
    report.duration_ns = start.elapsed().as_nanos() as u64;
}

/// Waits for `deadline` unless interrupted first (at low rates a slot can be minutes away);
/// false if interrupted.
fn wait(deadline: Instant, interrupted: &AtomicBool) -> bool {
    while deadline.saturating_duration_since(Instant::now()) > POLL {
        if interrupted.load(Ordering::Relaxed) {
            return false;
        }
        std::thread::sleep(POLL);
    }
    udp::wait_until(deadline);
    !interrupted.load(Ordering::Relaxed)
}

/// Loss, reordering and duplicates from sequence numbers in constant memory: a bitmap of the
/// `REORDER_WINDOW_PKTS` numbers up to the highest seen. An arrival older than that window
/// cannot be told from a duplicate; it is counted as reordered.
pub struct SeqTally {
    highest: Option<u64>,
    seen: Vec<u64>,
    window_pkts: u64,
    received: u64,
    reordered: u64,
    duplicates: u64,
}

impl SeqTally {
    /// `window_pkts` must be a power of two (a sequence number's bit is `seq mod window`).
    pub fn new(window_pkts: u64) -> Self {
        assert!(window_pkts.is_power_of_two() && window_pkts >= 64);
        SeqTally {
            highest: None,
            seen: vec![0; (window_pkts / 64) as usize],
            window_pkts,
            received: 0,
            reordered: 0,
            duplicates: 0,
        }
    }

    pub fn arrive(&mut self, seq: u64) {
        self.received += 1;
        match self.highest {
            Some(h) if seq <= h => {
                if h - seq < self.window_pkts && self.test_and_set(seq) {
                    self.duplicates += 1;
                } else {
                    self.reordered += 1;
                }
            }
            _ => self.advance(seq),
        }
    }

    /// Moves the window's top to `seq`: the bits of the numbers it now covers anew held
    /// numbers that fell out of it, so they are cleared first.
    fn advance(&mut self, seq: u64) {
        let from = self.highest.map_or(0, |h| h + 1);
        let fresh = (seq - from).saturating_add(1).min(self.window_pkts);
        for s in seq - (fresh - 1)..=seq {
            let (word, bit) = self.position(s);
            self.seen[word] &= !bit;
        }
        self.test_and_set(seq);
        self.highest = Some(seq);
    }

    fn position(&self, seq: u64) -> (usize, u64) {
        let index = seq & (self.window_pkts - 1);
        ((index / 64) as usize, 1 << (index % 64))
    }

    /// True if `seq` was already marked.
    fn test_and_set(&mut self, seq: u64) -> bool {
        let (word, bit) = self.position(seq);
        let was = self.seen[word] & bit != 0;
        self.seen[word] |= bit;
        was
    }

    /// Numbers up to the highest seen that never arrived (the sender counts from 0; a loss
    /// after the last arrival cannot be seen).
    pub fn lost(&self) -> u64 {
        let expected = self.highest.map_or(0, |h| h.saturating_add(1));
        expected.saturating_sub(self.received - self.duplicates)
    }
}

pub struct SinkOptions {
    pub listen: SocketAddr,
    pub duration: Duration,
    pub out: PathBuf,
}

/// What the sink writes to `--out`.
#[derive(Serialize, Debug, Default, PartialEq)]
pub struct SinkReport {
    pub tool: String,
    pub mode: String,
    pub listen: String,
    pub interrupted: bool,
    /// Our datagrams, duplicates included.
    pub received_pkts: u64,
    /// Their UDP payload bytes.
    pub received_bytes: u64,
    pub lost_pkts: u64,
    /// Arrived after one with a higher sequence number.
    pub reordered_pkts: u64,
    pub duplicates: u64,
    /// Too short, another magic, or another sender's session.
    pub foreign_pkts: u64,
    /// The sink's wall clock (ns since the Unix epoch) at the first and last arrival.
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    /// IP packets' bits (payload + UDP/IP headers) after the first, over first → last arrival:
    /// the level the sender paces at.
    pub rate_bps: f64,
}

/// The sink's running state: bounded whatever arrives.
struct Sink {
    session: Option<[u8; 8]>,
    tally: SeqTally,
    received_bytes: u64,
    ip_bytes: u64,
    first_ip_bytes: u64,
    foreign: u64,
    first: Option<(Instant, u64)>,
    last: Option<Instant>,
}

impl Sink {
    fn new() -> Self {
        Sink {
            session: None,
            tally: SeqTally::new(REORDER_WINDOW_PKTS),
            received_bytes: 0,
            ip_bytes: 0,
            first_ip_bytes: 0,
            foreign: 0,
            first: None,
            last: None,
        }
    }

    /// The sink follows the first sender it hears; anything else is foreign.
    fn take(&mut self, datagram: &[u8], from: IpAddr, now: Instant) {
        let Some(stamp) = read_stamp(datagram, MAGIC) else {
            self.foreign += 1;
            return;
        };
        if *self.session.get_or_insert(stamp.session) != stamp.session {
            self.foreign += 1;
            return;
        }
        let ip_bytes = datagram.len() as u64 + ip_overhead_bytes(from);
        if self.first.is_none() {
            self.first = Some((now, report::unix_now_ns()));
            self.first_ip_bytes = ip_bytes;
        }
        self.last = Some(now);
        self.tally.arrive(stamp.seq);
        self.received_bytes += datagram.len() as u64;
        self.ip_bytes += ip_bytes;
    }

    fn deadline(&self, duration: Duration) -> Option<Instant> {
        self.first.map(|(at, _)| at + duration)
    }

    fn report(&self, listen: SocketAddr, interrupted: bool) -> SinkReport {
        let span_ns = match (self.first, self.last) {
            (Some((first, _)), Some(last)) => (last - first).as_nanos() as u64,
            _ => 0,
        };
        let first_ns = self.first.map(|(_, unix)| unix);
        SinkReport {
            tool: "tcpeval-probe".into(),
            mode: "cbr-sink".into(),
            listen: listen.to_string(),
            interrupted,
            received_pkts: self.tally.received,
            received_bytes: self.received_bytes,
            lost_pkts: self.tally.lost(),
            reordered_pkts: self.tally.reordered,
            duplicates: self.tally.duplicates,
            foreign_pkts: self.foreign,
            first_ns,
            last_ns: first_ns.map(|ns| ns + span_ns),
            rate_bps: bits_per_s(self.ip_bytes - self.first_ip_bytes, span_ns),
        }
    }
}

pub fn run_sink(options: &SinkOptions, interrupted: &AtomicBool) -> Result<SinkReport> {
    validate_duration(options.duration)?;
    report::file_name(&options.out)?;
    let socket = UdpSocket::bind(options.listen)
        .map_err(|e| ProbeError::io(format!("binding {}", options.listen), e))?;
    // A deep receive buffer keeps the losses on the path, not in this socket (capped by
    // net.core.rmem_max).
    let _ = SockRef::from(&socket).set_recv_buffer_size(udp::RECEIVE_BUFFER_BYTES);
    socket
        .set_read_timeout(Some(POLL))
        .map_err(|e| ProbeError::io("udp read timeout", e))?;
    let local = socket
        .local_addr()
        .map_err(|e| ProbeError::io("local address", e))?;
    // Scripts that bind port 0 read the port from this line, so it must not sit in a buffer.
    println!("listening on {local}");
    let _ = std::io::stdout().flush();
    let sink = receive(&socket, options.duration, interrupted);
    let report = sink.report(local, interrupted.load(Ordering::Relaxed));
    report::write_json_file(&options.out, &report)?;
    Ok(report)
}

fn receive(socket: &UdpSocket, duration: Duration, interrupted: &AtomicBool) -> Sink {
    let mut sink = Sink::new();
    let mut buf = vec![0u8; 65_536];
    while !interrupted.load(Ordering::Relaxed) {
        let over = |sink: &Sink, now: Instant| sink.deadline(duration).is_some_and(|d| now >= d);
        if over(&sink, Instant::now()) {
            break;
        }
        // Timeouts, and ICMP errors queued on the socket, just mean: look again.
        let Ok((n, from)) = socket.recv_from(&mut buf) else {
            continue;
        };
        let now = Instant::now();
        if over(&sink, now) {
            break;
        }
        sink.take(&buf[..n], from.ip(), now);
    }
    sink
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const V4: IpAddr = IpAddr::V4(std::net::Ipv4Addr::LOCALHOST);

    fn tally(seqs: &[u64]) -> SeqTally {
        let mut t = SeqTally::new(64);
        for &s in seqs {
            t.arrive(s);
        }
        t
    }

    #[test]
    fn a_1500_byte_packet_at_12_mbps_is_due_every_millisecond() {
        let s = Schedule::new(12_000_000, 1500);
        assert_eq!(s.offset_ns(0), 0);
        assert_eq!(s.offset_ns(1), 1_000_000);
        assert_eq!(s.offset_ns(1000), 1_000_000_000);
        assert_eq!(s.due(0), 1);
        assert_eq!(s.due(999_999), 1);
        assert_eq!(s.due(1_000_000), 2);
    }

    #[test]
    fn the_schedule_does_not_drift_when_the_interval_is_fractional() {
        // 56 bytes at 10 Gb/s: 44.8 ns apart; a rounded interval would be 2 % off.
        let s = Schedule::new(10_000_000_000, 56);
        assert_eq!(s.offset_ns(5), 224);
        // 22 321 428 × 44.8 ns: 44 or 45 ns steps would be off by 18 ms or 4 ms here.
        assert_eq!(s.offset_ns(22_321_428), 999_999_974);
        assert_eq!(s.due(999_999_999), 22_321_429);
    }

    #[test]
    fn a_late_sender_catches_up_at_most_a_few_packets() {
        let s = Schedule::new(12_000_000, 1500);
        assert_eq!(s.catch_up(3, 3_500_000), 3, "on time");
        // 10 ms late for slot 3: slots 0..=13 are due; only the last four are kept.
        assert_eq!(s.catch_up(3, 13_000_000), 10);
    }

    proptest! {
        #[test]
        fn due_counts_exactly_the_slots_whose_offset_has_passed(
            rate in MIN_RATE_BPS..=MAX_RATE_BPS,
            ip_bytes in 28u64..=65_535,
            elapsed in 0u64..10_000_000_000,
        ) {
            let s = Schedule::new(rate, ip_bytes);
            let due = s.due(elapsed);
            prop_assert!(due >= 1);
            prop_assert!(s.offset_ns(due - 1) <= elapsed);
            prop_assert!(s.offset_ns(due) > elapsed);
        }
    }

    #[test]
    fn in_order_arrivals_are_clean() {
        let t = tally(&[0, 1, 2, 3]);
        assert_eq!(
            (t.received, t.lost(), t.reordered, t.duplicates),
            (4, 0, 0, 0)
        );
    }

    #[test]
    fn gaps_are_losses_until_the_late_ones_arrive() {
        let mut t = tally(&[0, 1, 4, 5]);
        assert_eq!(t.lost(), 2);
        t.arrive(2);
        assert_eq!((t.lost(), t.reordered, t.duplicates), (1, 1, 0));
    }

    #[test]
    fn a_leading_gap_is_loss_because_the_sender_counts_from_zero() {
        assert_eq!(tally(&[3, 4]).lost(), 3);
    }

    #[test]
    fn duplicates_are_told_from_reordering() {
        let t = tally(&[0, 2, 2, 1, 1, 0]);
        assert_eq!(
            (t.received, t.lost(), t.reordered, t.duplicates),
            (6, 0, 1, 3)
        );
    }

    #[test]
    fn the_window_forgets_old_numbers_so_memory_stays_bounded() {
        // After 0..200, 150 is a duplicate still inside the 64-number window; 10 is not and
        // counts as reordered.
        let mut t = tally(&(0..200).collect::<Vec<_>>());
        t.arrive(150);
        t.arrive(10);
        assert_eq!((t.duplicates, t.reordered), (1, 1));
        // A jump far ahead clears the whole window: 990 was never seen, so it is late, not a
        // duplicate.
        t.arrive(1000);
        t.arrive(990);
        assert_eq!(t.duplicates, 1);
        assert_eq!(t.seen.len(), 1);
    }

    #[test]
    fn the_sink_counts_foreign_datagrams_and_follows_one_session() {
        let mut sink = Sink::new();
        let now = Instant::now();
        let mut buf = [0u8; 100];
        let ours = Stamp {
            session: [1; 8],
            seq: 0,
            send_ns: 0,
        };
        sink.take(&buf[..10], V4, now);
        sink.take(&buf, V4, now);
        write_stamp(&mut buf, MAGIC, &ours);
        sink.take(&buf, V4, now);
        write_stamp(
            &mut buf,
            MAGIC,
            &Stamp {
                session: [2; 8],
                ..ours
            },
        );
        sink.take(&buf, V4, now);
        let report = sink.report("127.0.0.1:9".parse().unwrap(), false);
        assert_eq!((report.received_pkts, report.foreign_pkts), (1, 3));
        assert_eq!(report.received_bytes, 100);
    }

    #[test]
    fn the_sink_rate_counts_ip_packets_over_the_arrival_span() {
        // 11 packets of 1222 + 28 bytes, 1 ms apart: 10 × 10 kbit over 10 ms = 10 Mb/s.
        let mut sink = Sink::new();
        let start = Instant::now();
        let mut buf = vec![0u8; 1222];
        for seq in 0..11 {
            let stamp = Stamp {
                session: [1; 8],
                seq,
                send_ns: 0,
            };
            write_stamp(&mut buf, MAGIC, &stamp);
            sink.take(&buf, V4, start + Duration::from_millis(seq));
        }
        let report = sink.report("127.0.0.1:9".parse().unwrap(), false);
        assert!((report.rate_bps - 10e6).abs() < 1.0, "{}", report.rate_bps);
        assert_eq!(
            report.last_ns.unwrap() - report.first_ns.unwrap(),
            10_000_000
        );
    }

    #[test]
    fn bad_settings_name_the_flag_and_the_value() {
        let ok = CbrOptions {
            to: "127.0.0.1:9".parse().unwrap(),
            rate_bps: 10_000_000,
            size_bytes: 1472,
            duration: Duration::from_secs(1),
            out: PathBuf::from("x.json"),
        };
        assert!(validate_cbr(&ok).is_ok());
        let cases = [
            (
                CbrOptions {
                    rate_bps: 999,
                    ..clone(&ok)
                },
                "rate_bps: '999'",
            ),
            (
                CbrOptions {
                    rate_bps: MAX_RATE_BPS + 1,
                    ..clone(&ok)
                },
                "rate_bps: '10000000001'",
            ),
            (
                CbrOptions {
                    size_bytes: 27,
                    ..clone(&ok)
                },
                "size_bytes: '27'",
            ),
            (
                CbrOptions {
                    size_bytes: 65_508,
                    ..clone(&ok)
                },
                "size_bytes: '65508'",
            ),
            (
                CbrOptions {
                    duration: Duration::ZERO,
                    ..clone(&ok)
                },
                "duration_ms: '0'",
            ),
            (
                CbrOptions {
                    to: "127.0.0.1:0".parse().unwrap(),
                    ..clone(&ok)
                },
                "to: '127.0.0.1:0'",
            ),
        ];
        for (options, want) in cases {
            let e = validate_cbr(&options).unwrap_err();
            assert!(matches!(e, ProbeError::Invalid { .. }));
            assert!(e.to_string().starts_with(want), "{e}");
        }
    }

    fn clone(o: &CbrOptions) -> CbrOptions {
        CbrOptions {
            out: o.out.clone(),
            ..*o
        }
    }

    #[test]
    fn ipv6_paths_carry_forty_byte_ip_headers() {
        assert_eq!(ip_overhead_bytes(V4), 28);
        assert_eq!(ip_overhead_bytes("::1".parse().unwrap()), 48);
        assert_eq!(ip_overhead_bytes("::ffff:10.0.0.1".parse().unwrap()), 28);
    }
}
