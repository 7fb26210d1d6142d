//! UDPmon-style trains: `count` datagrams at a fixed spacing, one train per spacing.
//!
//! The receiver reports, per train, the received rate, loss, reordering, RFC 3550 jitter and
//! the spread of one-way delay. A train spaced closer than the bottleneck serialises them
//! arrives at the bottleneck's rate and, once the queue fills, loses the excess: the path's
//! capacity seen without TCP in the way.

use std::io::IoSliceMut;
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use nix::cmsg_space;
use nix::sys::socket::{recvmsg, setsockopt, sockopt, ControlMessageOwned, MsgFlags};
use nix::sys::time::{TimeSpec, TimeValLike};
use nix::time::{clock_gettime, ClockId};
use serde::{Deserialize, Serialize};
use socket2::Type;

use crate::auth::{self, Secret};
use crate::client::{self, expect, unexpected};
use crate::error::{ProbeError, Result};
use crate::proto::{self, Message, UdpRequest};
use crate::report::{self, PeerReport, TrainReport};
use crate::server::{self, Limits, Refusal};
use crate::stop_watch::StopWatch;

const MAGIC: u32 = 0x7463_7075; // "tcpu"
const GAP_BETWEEN_TRAINS: Duration = Duration::from_millis(200);
const MAX_SPACING_NS: u64 = 1_000_000_000;
pub const RECEIVE_BUFFER_BYTES: usize = 32 << 20;

/// One arrival: what the datagram said and when it came.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Arrival {
    pub seq: u32,
    pub send_ns: u64,
    pub recv_ns: u64,
}

/// The header every probe datagram starts with: magic, session, sequence number, send time,
/// big-endian. Each mode has its own magic, so one never counts another's datagrams.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Stamp {
    pub session: [u8; 8],
    pub seq: u64,
    pub send_ns: u64,
}

pub const STAMP_BYTES: usize = 28;

/// Writes the stamp into the first `STAMP_BYTES` of `buf` (callers size it; at least 28).
pub fn write_stamp(buf: &mut [u8], magic: u32, stamp: &Stamp) {
    buf[0..4].copy_from_slice(&magic.to_be_bytes());
    buf[4..12].copy_from_slice(&stamp.session);
    buf[12..20].copy_from_slice(&stamp.seq.to_be_bytes());
    buf[20..28].copy_from_slice(&stamp.send_ns.to_be_bytes());
}

/// The stamp of a datagram, or `None` if it is too short or carries another magic.
pub fn read_stamp(buf: &[u8], magic: u32) -> Option<Stamp> {
    if buf.len() < STAMP_BYTES || buf[0..4] != magic.to_be_bytes() {
        return None;
    }
    let word = |at: usize| {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&buf[at..at + 8]);
        u64::from_be_bytes(bytes)
    };
    let mut session = [0u8; 8];
    session.copy_from_slice(&buf[4..12]);
    Some(Stamp {
        session,
        seq: word(12),
        send_ns: word(20),
    })
}

// A train's datagram carries the train in the high half of the sequence number: on the wire,
// the train's and the datagram's big-endian u32s, as protocol version 1 has always sent them.
fn encode(buf: &mut [u8], session: &[u8; 8], train: u32, seq: u32, send_ns: u64) {
    let seq = u64::from(train) << 32 | u64::from(seq);
    write_stamp(
        buf,
        MAGIC,
        &Stamp {
            session: *session,
            seq,
            send_ns,
        },
    );
}

fn decode(buf: &[u8], session: &[u8; 8]) -> Option<(u32, u32, u64)> {
    let stamp = read_stamp(buf, MAGIC).filter(|s| &s.session == session)?;
    Some(((stamp.seq >> 32) as u32, stamp.seq as u32, stamp.send_ns))
}

fn session_of(token: &str) -> [u8; 8] {
    let bytes = auth::from_hex(token).unwrap_or_default();
    let mut session = [0u8; 8];
    for (slot, byte) in session.iter_mut().zip(bytes) {
        *slot = byte;
    }
    session
}

/// The statistics of one train from its arrivals, in arrival order. A sequence number the
/// train never had (≥ `sent`) is not counted: received ≤ sent holds whatever arrives.
pub fn summarize(spacing_ns: u64, sent: u32, size_bytes: u32, arrivals: &[Arrival]) -> TrainReport {
    let arrivals: Vec<Arrival> = arrivals.iter().filter(|a| a.seq < sent).copied().collect();
    let mut seen = std::collections::HashSet::new();
    let (mut reordered, mut duplicates, mut highest) = (0, 0, None::<u32>);
    let mut jitter_ns = 0.0f64;
    let mut in_order = InOrder::default();
    for (i, a) in arrivals.iter().enumerate() {
        if !seen.insert(a.seq) {
            duplicates += 1;
            continue;
        }
        if highest.is_some_and(|h| a.seq < h) {
            reordered += 1;
        } else {
            in_order.arrive(a.recv_ns);
        }
        highest = highest.max(Some(a.seq));
        if i > 0 {
            // RFC 3550 §6.4.1: J += (|D| − J)/16, D the change in transit time.
            let p = arrivals[i - 1];
            let d = (a.recv_ns as f64 - p.recv_ns as f64) - (a.send_ns as f64 - p.send_ns as f64);
            jitter_ns += (d.abs() - jitter_ns) / 16.0;
        }
    }
    let received = seen.len() as u32;
    let span = |f: fn(&Arrival) -> u64| {
        let (lo, hi) = arrivals
            .iter()
            .map(f)
            .fold((u64::MAX, 0), |(lo, hi), t| (lo.min(t), hi.max(t)));
        hi.saturating_sub(lo)
    };
    let rate = |span_ns: u64| {
        if received < 2 || span_ns == 0 {
            return 0.0;
        }
        f64::from(received - 1) * f64::from(size_bytes) * 8.0 / (span_ns as f64 / 1e9)
    };
    let transit = arrivals
        .iter()
        .map(|a| a.recv_ns as i128 - a.send_ns as i128);
    let owd_variation_ns = match (transit.clone().min(), transit.max()) {
        (Some(lo), Some(hi)) => (hi - lo) as u64,
        _ => 0,
    };
    let received_span_ns = span(|a| a.recv_ns);
    TrainReport {
        spacing_ns,
        sent,
        received,
        lost: sent.saturating_sub(received),
        reordered,
        duplicates,
        size_bytes,
        received_span_ns,
        received_rate_bps: rate(received_span_ns),
        in_order_rate_bps: in_order.rate_bps(size_bytes),
        sent_rate_bps: rate(span(|a| a.send_ns)),
        jitter_ns,
        owd_variation_ns,
    }
}

/// The datagrams that arrived in order: how many, and the first and last arrival.
#[derive(Default)]
struct InOrder {
    count: u32,
    first_ns: Option<u64>,
    last_ns: u64,
}

impl InOrder {
    fn arrive(&mut self, recv_ns: u64) {
        self.count += 1;
        self.first_ns.get_or_insert(recv_ns);
        self.last_ns = self.last_ns.max(recv_ns);
    }

    fn rate_bps(&self, size_bytes: u32) -> f64 {
        let span_ns = self
            .first_ns
            .map_or(0, |first| self.last_ns.saturating_sub(first));
        if self.count < 2 || span_ns == 0 {
            return 0.0;
        }
        f64::from(self.count - 1) * f64::from(size_bytes) * 8.0 / (span_ns as f64 / 1e9)
    }
}

fn validate(request: &UdpRequest, limits: &Limits) -> std::result::Result<(), Refusal> {
    if !(STAMP_BYTES as u32..=65_507).contains(&request.size_bytes) {
        return Err(Refusal::new(
            "size_bytes",
            request.size_bytes,
            "must be 28..=65507",
        ));
    }
    let total = u64::from(request.count) * request.spacings_ns.len() as u64;
    if request.count == 0 || request.spacings_ns.is_empty() || total > limits.max_udp_datagrams {
        return Err(Refusal::new(
            "count",
            request.count,
            format!(
                "trains × count must be 1..={} on this server",
                limits.max_udp_datagrams
            ),
        ));
    }
    let kept_bytes = kept_bytes(request);
    if kept_bytes > limits.max_udp_memory_bytes {
        return Err(Refusal::new(
            "count",
            request.count,
            format!(
                "the trains' arrivals would take {kept_bytes} bytes of the server's memory; it gives a test at most {}",
                limits.max_udp_memory_bytes
            ),
        ));
    }
    if let Some(s) = request.spacings_ns.iter().find(|s| **s > MAX_SPACING_NS) {
        return Err(Refusal::new(
            "spacings_ns",
            s,
            format!("must be at most {MAX_SPACING_NS}"),
        ));
    }
    let planned_ns: u64 = request
        .spacings_ns
        .iter()
        .map(|s| s * u64::from(request.count))
        .sum();
    if planned_ns > limits.max_duration.as_nanos() as u64 {
        return Err(Refusal::new(
            "spacings_ns",
            planned_ns,
            "the trains would outlast the server's max duration",
        ));
    }
    Ok(())
}

/// Arrivals a train keeps at most: each datagram once, and as many duplicates again.
fn kept_per_train(count: u32) -> usize {
    2 * count as usize
}

/// The memory the arrivals of a test may take at most.
fn kept_bytes(request: &UdpRequest) -> u64 {
    let trains = request.spacings_ns.len() as u64;
    let arrivals = trains * kept_per_train(request.count) as u64;
    arrivals * std::mem::size_of::<Arrival>() as u64
}

pub fn serve(mut control: TcpStream, request: &UdpRequest, limits: &Limits) -> Result<()> {
    if let Err(refusal) = validate(request, limits) {
        proto::send(&mut control, &refusal.message())?;
        return Ok(());
    }
    let socket = server::data_listener(&control, &Default::default(), Type::DGRAM)?;
    // A train at line rate arrives faster than one thread drains it; a deep receive buffer
    // keeps the losses on the path, not in this socket (capped by net.core.rmem_max).
    let _ = socket.set_recv_buffer_size(RECEIVE_BUFFER_BYTES);
    let socket: UdpSocket = socket.into();
    let stamps = ArrivalClock::stamp_arrivals(&socket);
    let token = auth::to_hex(&auth::random_bytes::<16>());
    let data_port = socket
        .local_addr()
        .map_err(|e| ProbeError::io("udp port", e))?
        .port();
    proto::send(
        &mut control,
        &Message::Ready {
            data_port,
            token: token.clone(),
        },
    )?;
    proto::send(&mut control, &Message::Begin {})?;
    let start = Instant::now();
    let until = start + limits.max_duration + Duration::from_secs(5);
    let watch = StopWatch::start(&control, until);
    let arrivals = collect(
        &socket,
        &session_of(&token),
        request,
        watch.flag(),
        until,
        &ArrivalClock::new(stamps, start),
    );
    drop(watch);
    let trains = request
        .spacings_ns
        .iter()
        .zip(&arrivals)
        .map(|(spacing, a)| summarize(*spacing, request.count, request.size_bytes, a))
        .collect();
    let report = PeerReport {
        kernel: report::kernel_release(),
        trains,
        ..PeerReport::default()
    };
    proto::send(&mut control, &Message::Results(Box::new(report)))?;
    Ok(())
}

/// The arrivals of each train until the client stops. Memory is bounded by the request:
/// a datagram of a train or sequence number the request did not have is not kept, nor more
/// than `kept_per_train` of one train.
fn collect(
    socket: &UdpSocket,
    session: &[u8; 8],
    request: &UdpRequest,
    stop: &AtomicBool,
    until: Instant,
    clock: &ArrivalClock,
) -> Vec<Vec<Arrival>> {
    let mut trains: Vec<Vec<Arrival>> = request.spacings_ns.iter().map(|_| Vec::new()).collect();
    let mut buf = vec![0u8; 65_536];
    let _ = socket.set_read_timeout(Some(Duration::from_millis(20)));
    let most = kept_per_train(request.count);
    while !stop.load(Ordering::Relaxed) && Instant::now() < until {
        let Some((n, recv_ns)) = clock.receive(socket, &mut buf) else {
            continue;
        };
        let Some((train, seq, send_ns)) = decode(&buf[..n], session) else {
            continue;
        };
        let list = trains.get_mut(train as usize);
        if let Some(list) = list.filter(|list| seq < request.count && list.len() < most) {
            list.push(Arrival {
                seq,
                send_ns,
                recv_ns,
            });
        }
    }
    trains
}

/// When each datagram arrived, in ns since the test began. The kernel stamps a datagram as it
/// reaches the socket (`SO_TIMESTAMPNS`, socket(7)); the time `recv` returns is later by however
/// long this process waited to run, and on a busy host that spread a train's arrivals by 10%.
/// Without the stamp, the time `recv` returned.
struct ArrivalClock {
    start: Instant,
    /// `start` on the kernel's stamp clock (CLOCK_REALTIME), when the socket stamps.
    start_realtime: Option<TimeSpec>,
}

impl ArrivalClock {
    /// Ask the kernel to stamp the socket's arrivals; whether it will. Do it as the socket
    /// opens: the first socket to ask turns stamping on a moment later (deferred work in Linux
    /// `net_enable_timestamp`), and a datagram that came before is stamped when it is read.
    fn stamp_arrivals(socket: &UdpSocket) -> bool {
        setsockopt(socket, sockopt::ReceiveTimestampns, &true).is_ok()
    }

    /// The clock of a test that began at `start`, from stamps if `stamps`.
    fn new(stamps: bool, start: Instant) -> Self {
        let now = clock_gettime(ClockId::CLOCK_REALTIME).ok();
        let since_start = TimeSpec::from_duration(start.elapsed());
        Self {
            start,
            start_realtime: now.filter(|_| stamps).map(|now| now - since_start),
        }
    }

    /// One datagram into `buf`: its length and arrival time, or `None` on timeout or error.
    fn receive(&self, socket: &UdpSocket, buf: &mut [u8]) -> Option<(usize, u64)> {
        let mut space = cmsg_space!(TimeSpec);
        let mut iov = [IoSliceMut::new(buf)];
        let message = recvmsg::<()>(
            socket.as_raw_fd(),
            &mut iov,
            Some(&mut space),
            MsgFlags::empty(),
        )
        .ok()?;
        // A datagram whose stamp cannot be read is still counted, at the time it was read.
        let stamp = message.cmsgs().ok().and_then(|mut messages| {
            messages.find_map(|c| match c {
                ControlMessageOwned::ScmTimestampns(stamp) => Some(stamp),
                _ => None,
            })
        });
        let stamped_ns = stamp
            .zip(self.start_realtime)
            .and_then(|(stamp, start)| u64::try_from((stamp - start).num_nanoseconds()).ok());
        let arrived_ns = stamped_ns.unwrap_or_else(|| self.start.elapsed().as_nanos() as u64);
        Some((message.bytes, arrived_ns))
    }
}

pub struct UdpOptions {
    pub server: String,
    pub secret: Secret,
    pub request: UdpRequest,
    pub out: PathBuf,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct UdpRunReport {
    pub tool: String,
    pub mode: String,
    pub server: String,
    pub kernel: String,
    pub request: UdpRequest,
    pub interrupted: bool,
    pub trains: Vec<TrainReport>,
    pub warnings: Vec<String>,
}

pub fn run(options: &UdpOptions, interrupted: &AtomicBool) -> Result<UdpRunReport> {
    let server = client::resolve(&options.server)?;
    let mut control = client::connect_control(server, &options.secret)?;
    proto::send(&mut control, &Message::StartUdp(options.request.clone()))?;
    let (data_port, token) = match expect(&mut control, "ready")? {
        Message::Ready { data_port, token } => (data_port, token),
        other => return Err(unexpected(other, "ready")),
    };
    let socket = connected_socket(SocketAddr::new(server.ip(), data_port))?;
    match expect(&mut control, "begin")? {
        Message::Begin {} => {}
        other => return Err(unexpected(other, "begin")),
    }
    let mut warnings = Vec::new();
    let send_errors = send_trains(&socket, &session_of(&token), &options.request, interrupted);
    if send_errors > 0 {
        warnings.push(format!(
            "{send_errors} datagrams could not be sent (local buffer full)"
        ));
    }
    thread::sleep(GAP_BETWEEN_TRAINS);
    proto::send(&mut control, &Message::Stop {})?;
    let trains = match client::expect(&mut control, "results")? {
        Message::Results(report) => report.trains,
        other => return Err(unexpected(other, "results")),
    };
    check_counts(&trains, &options.request)?;
    let report = UdpRunReport {
        tool: "tcpeval-probe".into(),
        mode: "udp".into(),
        server: options.server.clone(),
        kernel: report::kernel_release(),
        request: options.request.clone(),
        interrupted: interrupted.load(Ordering::Relaxed),
        trains,
        warnings,
    };
    report::write_json(&options.out, "udp.json", &report)?;
    Ok(report)
}

/// A server's report is checked before it is written: no train can have more datagrams
/// received than sent, and none can be missing.
fn check_counts(trains: &[TrainReport], request: &UdpRequest) -> Result<()> {
    if trains.len() != request.spacings_ns.len() {
        let reason = format!(
            "{} trains sent, {} reported",
            request.spacings_ns.len(),
            trains.len()
        );
        return Err(ProbeError::invalid("trains", trains.len(), reason));
    }
    for (i, train) in trains.iter().enumerate() {
        if train.sent != request.count || train.received > train.sent {
            let reason = format!(
                "the server reported {} received of {} sent in train {i}; {} were sent",
                train.received, train.sent, request.count
            );
            return Err(ProbeError::invalid("trains", i, reason));
        }
    }
    Ok(())
}

/// A UDP socket on an ephemeral port, connected to `to` (so `send` needs no address).
pub fn connected_socket(to: SocketAddr) -> Result<UdpSocket> {
    let any: SocketAddr = if to.is_ipv4() { "0.0.0.0:0" } else { "[::]:0" }
        .parse()
        .expect("literal");
    let socket = UdpSocket::bind(any).map_err(|e| ProbeError::io("udp socket", e))?;
    socket
        .connect(to)
        .map_err(|e| ProbeError::io(format!("udp connect to {to}"), e))?;
    Ok(socket)
}

/// Sends every train, each datagram on its own deadline (`start + seq·spacing`), so the
/// spacing is kept on average even when one send is late. Short waits spin: a sleep cannot
/// hit microsecond spacings.
fn send_trains(
    socket: &UdpSocket,
    session: &[u8; 8],
    request: &UdpRequest,
    interrupted: &AtomicBool,
) -> u64 {
    let mut buf = vec![0u8; request.size_bytes as usize];
    let epoch = Instant::now();
    let mut errors = 0;
    for (train, spacing_ns) in request.spacings_ns.iter().enumerate() {
        let start = Instant::now();
        for seq in 0..request.count {
            if interrupted.load(Ordering::Relaxed) {
                return errors;
            }
            wait_until(start + Duration::from_nanos(spacing_ns * u64::from(seq)));
            encode(
                &mut buf,
                session,
                train as u32,
                seq,
                epoch.elapsed().as_nanos() as u64,
            );
            if socket.send(&buf).is_err() {
                errors += 1;
            }
        }
        thread::sleep(GAP_BETWEEN_TRAINS);
    }
    errors
}

/// Sleeps, then spins the last stretch: a sleep alone overshoots by tens of microseconds.
pub fn wait_until(deadline: Instant) {
    loop {
        let now = Instant::now();
        if now >= deadline {
            return;
        }
        let left = deadline - now;
        if left > Duration::from_micros(200) {
            thread::sleep(left - Duration::from_micros(100));
        } else {
            std::hint::spin_loop();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arrival_is_timed_when_the_datagram_came_not_when_it_was_read() {
        // Loopback only. A datagram read 100 ms after it came must be timed at its arrival, by
        // the kernel's stamp. The kernel turns stamping on a moment after the first socket asks
        // (deferred work), so the first datagrams may be stamped as read: up to 20 tries.
        let receiver = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let sender = UdpSocket::bind("127.0.0.1:0").expect("bind");
        let start = Instant::now();
        let clock = ArrivalClock::new(ArrivalClock::stamp_arrivals(&receiver), start);
        let to = receiver.local_addr().expect("address");
        let mut delays_ns = Vec::new();
        for _ in 0..20 {
            sender.send_to(b"probe", to).expect("send");
            let sent_ns = start.elapsed().as_nanos() as u64;
            thread::sleep(Duration::from_millis(100));
            let mut buf = [0u8; 16];
            let (n, arrived_ns) = clock.receive(&receiver, &mut buf).expect("a datagram");
            let read_ns = start.elapsed().as_nanos() as u64;
            assert_eq!(&buf[..n], b"probe");
            assert!(arrived_ns >= sent_ns.saturating_sub(1_000_000) && arrived_ns <= read_ns);
            delays_ns.push(read_ns - arrived_ns);
            if read_ns - arrived_ns >= 90_000_000 {
                return;
            }
        }
        panic!("every datagram was timed as read, ns after arrival: {delays_ns:?}");
    }

    fn arrivals(list: &[(u32, u64, u64)]) -> Vec<Arrival> {
        list.iter()
            .map(|&(seq, send_ns, recv_ns)| Arrival {
                seq,
                send_ns,
                recv_ns,
            })
            .collect()
    }

    #[test]
    fn counts_loss_reordering_and_duplicates() {
        let a = arrivals(&[(0, 0, 100), (2, 20, 120), (1, 10, 130), (2, 20, 140)]);
        let r = summarize(10, 5, 1000, &a);
        assert_eq!(
            (r.received, r.lost, r.reordered, r.duplicates),
            (3, 2, 1, 1)
        );
        // Transit times 100, 100, 120, 120 ns: a spread of 20.
        assert_eq!(r.owd_variation_ns, 20);
    }

    #[test]
    fn a_datagram_held_back_does_not_stretch_the_in_order_rate() {
        // 1 Gb/s on arrival (1250 B every 10 µs), and datagram 5 held back 1 ms by the path.
        let mut a: Vec<Arrival> = (0..11)
            .filter(|&i| i != 5)
            .map(|i| Arrival {
                seq: i,
                send_ns: 0,
                recv_ns: u64::from(i) * 10_000,
            })
            .collect();
        a.push(Arrival {
            seq: 5,
            send_ns: 0,
            recv_ns: 1_100_000,
        });
        let r = summarize(0, 11, 1250, &a);
        assert_eq!(r.reordered, 1);
        // All eleven over 1.1 ms: a tenth of the rate; the ten in order over 100 µs: 0.9 Gb/s
        // (nine gaps' worth of bits, one gap being the missing datagram's).
        assert!(r.received_rate_bps < 0.1e9, "{}", r.received_rate_bps);
        assert!(
            (r.in_order_rate_bps - 0.9e9).abs() < 1.0,
            "{}",
            r.in_order_rate_bps
        );
    }

    #[test]
    fn sequence_numbers_the_train_never_had_are_not_counted() {
        // One datagram sent; a hostile client sends 1000 distinct sequence numbers.
        let a: Vec<Arrival> = (0..1000)
            .map(|seq| Arrival {
                seq,
                send_ns: 0,
                recv_ns: 1,
            })
            .collect();
        let r = summarize(0, 1, 1000, &a);
        assert_eq!((r.sent, r.received, r.lost), (1, 1, 0));
    }

    #[test]
    fn the_memory_a_test_may_keep_is_refused_by_count_above_the_cap() {
        let limits = Limits {
            max_udp_memory_bytes: 48_000,
            ..crate::server::tests::limits()
        };
        let request = |count: u32| UdpRequest {
            size_bytes: 100,
            count,
            spacings_ns: vec![0],
        };
        // 1000 datagrams keep at most 2000 arrivals of 24 bytes: 48 000 bytes.
        assert_eq!(std::mem::size_of::<Arrival>(), 24);
        assert!(validate(&request(1000), &limits).is_ok());
        let refused = validate(&request(1001), &limits).err().unwrap();
        assert_eq!((refused.field, refused.value.as_str()), ("count", "1001"));
    }

    #[test]
    fn received_rate_is_bits_over_the_arrival_span() {
        // 11 datagrams of 1250 bytes, 10 µs apart on arrival: 10 × 10 kbit / 100 µs = 1 Gb/s.
        let a: Vec<Arrival> = (0..11)
            .map(|i| Arrival {
                seq: i,
                send_ns: 0,
                recv_ns: u64::from(i) * 10_000,
            })
            .collect();
        let r = summarize(0, 11, 1250, &a);
        assert!(
            (r.received_rate_bps - 1e9).abs() < 1.0,
            "{}",
            r.received_rate_bps
        );
    }

    #[test]
    fn header_round_trips_and_foreign_datagrams_are_ignored() {
        let mut buf = [0u8; 64];
        let session = [7u8; 8];
        encode(&mut buf, &session, 3, 42, 99);
        assert_eq!(decode(&buf, &session), Some((3, 42, 99)));
        assert_eq!(decode(&buf, &[8u8; 8]), None);
        assert_eq!(decode(&buf[..10], &session), None);
    }

    #[test]
    fn train_datagrams_keep_the_version_1_layout() {
        let mut buf = [0u8; 28];
        encode(&mut buf, &[7u8; 8], 3, 42, 99);
        let mut want = Vec::new();
        want.extend(MAGIC.to_be_bytes());
        want.extend([7u8; 8]);
        want.extend(3u32.to_be_bytes());
        want.extend(42u32.to_be_bytes());
        want.extend(99u64.to_be_bytes());
        assert_eq!(buf.as_slice(), want.as_slice());
    }

    #[test]
    fn a_stamp_round_trips_only_under_its_own_magic() {
        let stamp = Stamp {
            session: [1, 2, 3, 4, 5, 6, 7, 8],
            seq: u64::MAX - 1,
            send_ns: 1_700_000_000_123_456_789,
        };
        let mut buf = [0u8; STAMP_BYTES];
        write_stamp(&mut buf, 0x1234_5678, &stamp);
        assert_eq!(read_stamp(&buf, 0x1234_5678), Some(stamp));
        assert_eq!(read_stamp(&buf, MAGIC), None);
        assert_eq!(read_stamp(&buf[..STAMP_BYTES - 1], 0x1234_5678), None);
    }
}
