//! The server: safe to leave running on a data-transfer node.
//!
//! Every connection gets one thread, counted against `max_clients` before anything is read.
//! It must authenticate (HMAC challenge-response, `auth.rs`) within the handshake timeout or
//! it gets one refusal message and is closed. Requests are checked against the limits and a
//! refused field is named. Data connections go to a fresh port per test and must present the
//! test's random token first; each test is cut off at the duration and byte limits.

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::auth::{self, Secret, CHALLENGE_BYTES};
use crate::cpu::{CpuReport, CpuSampler};
use crate::datapath::{self, Counters};
use crate::disk_remote;
use crate::error::{ProbeError, ProtoError, Result};
use crate::proto::{self, Message, TcpRequest, MAX_REQUEST_FRAME_BYTES, PROTOCOL_VERSION};
use crate::report::{self, PeerReport, StreamReport};
use crate::root::Root;
use crate::sample::{self, Sampler};
use crate::sockopt::{self, Asked};
use crate::{copy_server, rr, udp};

#[derive(Debug, Clone)]
pub struct Limits {
    pub max_streams: u32,
    pub max_duration: Duration,
    pub max_bytes: u64,
    pub max_clients: usize,
    pub handshake_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_udp_datagrams: u64,
    pub max_rr_count: u32,
    pub max_response_bytes: u64,
    /// TCP_INFO samples one reverse test may keep (streams × duration / interval): the
    /// history lives in the server's memory until it is sent (~200 bytes a sample).
    pub max_samples: u64,
}

/// A check of one request field against a limit: the refusal names it.
pub struct Refusal {
    pub field: &'static str,
    pub value: String,
    pub reason: String,
}

impl Refusal {
    pub fn new(field: &'static str, value: impl ToString, reason: impl Into<String>) -> Self {
        Refusal {
            field,
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub fn message(self) -> Message {
        Message::Rejected {
            field: self.field.into(),
            value: self.value,
            reason: self.reason,
        }
    }
}

/// `root`: the directory copies may use; without one, copies are rejected.
pub fn serve(listen: SocketAddr, secret: Secret, limits: Limits, root: Option<Root>) -> Result<()> {
    let listener = TcpListener::bind(listen)
        .map_err(|e| ProbeError::io(format!("listening on {listen}"), e))?;
    let local = listener
        .local_addr()
        .map_err(|e| ProbeError::io("local address", e))?;
    // Scripts that bind port 0 read the port from this line.
    println!("listening on {local}");
    let active = Arc::new(AtomicUsize::new(0));
    let secret = Arc::new(secret);
    let limits = Arc::new(limits);
    let root = Arc::new(root);
    for connection in listener.incoming() {
        let Ok(mut control) = connection else {
            continue;
        };
        if active.fetch_add(1, Ordering::SeqCst) >= limits.max_clients {
            active.fetch_sub(1, Ordering::SeqCst);
            let _ = proto::send(&mut control, &refused("server busy"));
            continue;
        }
        let (active, secret, limits, root) = (
            Arc::clone(&active),
            Arc::clone(&secret),
            Arc::clone(&limits),
            Arc::clone(&root),
        );
        thread::spawn(move || {
            let peer = control
                .peer_addr()
                .map(|a| a.to_string())
                .unwrap_or_default();
            if let Err(e) = handle_client(control, &secret, &limits, root.as_ref().as_ref()) {
                eprintln!("client {peer}: {e}");
            }
            active.fetch_sub(1, Ordering::SeqCst);
        });
    }
    Ok(())
}

/// Closing a socket with unread bytes makes the kernel send a reset, which can destroy the
/// refusal before the peer reads it (RFC 1122 §4.2.2.13); so say we are done, then swallow a
/// little of what the peer still sends, briefly, before closing.
fn close_gracefully(stream: &mut TcpStream) {
    use std::io::Read;
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let _ = stream.set_read_timeout(Some(Duration::from_millis(100)));
    let mut sink = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_millis(300);
    let mut swallowed = 0;
    while Instant::now() < deadline && swallowed < 64 * 1024 {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(n) => swallowed += n,
        }
    }
}

fn refused(reason: &str) -> Message {
    Message::Refused {
        reason: reason.into(),
    }
}

fn handle_client(
    mut control: TcpStream,
    secret: &Secret,
    limits: &Limits,
    root: Option<&Root>,
) -> Result<()> {
    let _ = control.set_nodelay(true);
    authenticate(&mut control, secret, limits)?;
    proto::send(&mut control, &Message::Welcome {})?;
    let deadline = Instant::now() + limits.idle_timeout;
    let request = match proto::receive(
        &mut control,
        MAX_REQUEST_FRAME_BYTES,
        deadline,
        "a test request",
    ) {
        Ok(message) => message,
        Err(e) => {
            let _ = proto::send(&mut control, &rejected_frame(&e));
            return Err(e.into());
        }
    };
    match request {
        Message::StartTcp(request) => serve_tcp(control, &request, limits),
        Message::StartUdp(request) => udp::serve(control, &request, limits),
        Message::StartRr(request) => rr::serve(control, &request, limits),
        Message::StartPut(request) => copy_server::serve_put(control, &request, limits, root),
        Message::StartGet(request) => copy_server::serve_get(control, &request, limits, root),
        Message::StartDisk(request) => disk_remote::serve(control, &request, limits, root),
        other => {
            let e = ProtoError::Unexpected {
                got: other.name().into(),
                want: "start_tcp, start_udp, start_rr, start_put, start_get or start_disk",
            };
            let _ = proto::send(&mut control, &rejected_frame(&e));
            Err(e.into())
        }
    }
}

fn rejected_frame(e: &ProtoError) -> Message {
    Message::Rejected {
        field: "message".into(),
        value: String::new(),
        reason: e.to_string(),
    }
}

/// One refusal, whatever went wrong: a stranger learns nothing about why.
fn authenticate(control: &mut TcpStream, secret: &Secret, limits: &Limits) -> Result<()> {
    let challenge = auth::random_bytes::<CHALLENGE_BYTES>();
    proto::send(
        control,
        &Message::Hello {
            version: PROTOCOL_VERSION,
            challenge: auth::to_hex(&challenge),
        },
    )?;
    let deadline = Instant::now() + limits.handshake_timeout;
    let answer = proto::receive(control, MAX_REQUEST_FRAME_BYTES, deadline, "authentication");
    let good = matches!(&answer, Ok(Message::Auth { version, mac })
        if *version == PROTOCOL_VERSION
            && auth::from_hex(mac).is_some_and(|m| secret.verify(&challenge, &m)));
    if good {
        return Ok(());
    }
    let _ = proto::send(control, &refused("not authorised"));
    close_gracefully(control);
    Err(ProbeError::Refused(match answer {
        Err(e) => format!("not authorised ({e})"),
        Ok(_) => "not authorised (bad answer to the challenge)".into(),
    }))
}

/// The TCP_INFO samples a test's history would hold at its longest.
fn planned_samples(request: &TcpRequest, limits: &Limits) -> u64 {
    let planned_ns = request
        .duration_ns
        .unwrap_or(limits.max_duration.as_nanos() as u64);
    u64::from(request.streams) * (planned_ns / request.sample_interval_ns.max(1))
}

pub fn validate_tcp(request: &TcpRequest, limits: &Limits) -> std::result::Result<(), Refusal> {
    if request.streams == 0 || request.streams > limits.max_streams {
        return Err(Refusal::new(
            "streams",
            request.streams,
            format!("must be 1..={} on this server", limits.max_streams),
        ));
    }
    let max_ns = limits.max_duration.as_nanos() as u64;
    match (request.duration_ns, request.bytes) {
        (Some(ns), None) if ns > 0 && ns <= max_ns => {}
        (None, Some(bytes)) if bytes > 0 && bytes <= limits.max_bytes => {}
        (Some(ns), None) => {
            return Err(Refusal::new(
                "duration_ns",
                ns,
                format!("must be 1..={max_ns} on this server"),
            ))
        }
        (None, Some(bytes)) => {
            return Err(Refusal::new(
                "bytes",
                bytes,
                format!("must be 1..={} on this server", limits.max_bytes),
            ))
        }
        _ => {
            return Err(Refusal::new(
                "duration_ns",
                "",
                "give exactly one of duration_ns and bytes",
            ))
        }
    }
    if request.sample_interval_ns < 1_000_000 {
        return Err(Refusal::new(
            "sample_interval_ns",
            request.sample_interval_ns,
            "must be at least 1 ms",
        ));
    }
    let samples = planned_samples(request, limits);
    if request.reverse && samples > limits.max_samples {
        return Err(Refusal::new(
            "sample_interval_ns",
            request.sample_interval_ns,
            format!(
                "would keep {samples} samples; this server keeps at most {}",
                limits.max_samples
            ),
        ));
    }
    if let Some(cc) = request.cc.as_deref().filter(|_| request.reverse) {
        if sockopt::check_cc(cc).is_err() {
            return Err(Refusal::new(
                "cc",
                cc,
                format!(
                    "is not available on the server; available: {}",
                    sockopt::available_cc().join(" ")
                ),
            ));
        }
    }
    Ok(())
}

/// The server's share of the socket settings: it sends in reverse tests, receives otherwise.
fn server_asked(request: &TcpRequest) -> Asked {
    Asked {
        cc: request.cc.clone().filter(|_| request.reverse),
        window_bytes: request.window_bytes,
        mss_bytes: request.mss_bytes,
        pacing_bps: request.pacing_bps.filter(|_| request.reverse),
    }
}

/// A fresh listener for one test's data connections, on the address the client reached.
pub fn data_listener(control: &TcpStream, asked: &Asked, kind: Type) -> Result<Socket> {
    let local = control
        .local_addr()
        .map_err(|e| ProbeError::io("local address", e))?;
    let protocol = if kind == Type::STREAM {
        Protocol::TCP
    } else {
        Protocol::UDP
    };
    let socket = Socket::new(Domain::for_address(local), kind, Some(protocol))
        .map_err(|e| ProbeError::io("data socket", e))?;
    if kind == Type::STREAM {
        sockopt::apply_before_handshake(&socket, asked)?;
    }
    socket
        .bind(&SocketAddr::new(local.ip(), 0).into())
        .map_err(|e| ProbeError::io("binding the data port", e))?;
    if kind == Type::STREAM {
        socket
            .listen(256)
            .map_err(|e| ProbeError::io("listen", e))?;
    }
    Ok(socket)
}

pub fn local_port(socket: &Socket) -> Result<u16> {
    socket
        .local_addr()
        .ok()
        .and_then(|a| a.as_socket())
        .map(|a| a.port())
        .ok_or_else(|| ProbeError::io("data port", std::io::Error::other("no address")))
}

/// Accepts `count` data connections that present `token`, before `deadline`; strangers
/// and latecomers are closed. Returns them ordered by stream number.
pub fn accept_joins(
    listener: &Socket,
    token: &str,
    count: u32,
    deadline: Instant,
    peer: IpAddr,
) -> Result<Vec<TcpStream>> {
    listener
        .set_nonblocking(true)
        .map_err(|e| ProbeError::io("data listener", e))?;
    let mut joined: Vec<Option<TcpStream>> = (0..count).map(|_| None).collect();
    let mut missing = count;
    while missing > 0 {
        if Instant::now() >= deadline {
            return Err(ProtoError::Timeout("data connections").into());
        }
        let (socket, addr) = match listener.accept() {
            Ok(pair) => pair,
            Err(e) if datapath::is_retry(&e) => {
                thread::sleep(Duration::from_millis(2));
                continue;
            }
            Err(e) => return Err(ProbeError::io("accepting data connections", e)),
        };
        if addr.as_socket().map(|a| a.ip()) != Some(peer) {
            continue;
        }
        let mut stream: TcpStream = socket.into();
        let _ = stream.set_nonblocking(false);
        let join_deadline = (Instant::now() + Duration::from_secs(2)).min(deadline);
        if let Ok(Message::Join {
            token: t,
            stream: id,
        }) = proto::receive(&mut stream, MAX_REQUEST_FRAME_BYTES, join_deadline, "join")
        {
            if t == token && id < count && joined[id as usize].is_none() {
                joined[id as usize] = Some(stream);
                missing -= 1;
            }
        }
    }
    Ok(joined.into_iter().flatten().collect())
}

/// Opens a fresh port for one test, tells the client (`Ready`), and returns the `count`
/// data connections that joined with the test's token.
pub fn open_data_connections(
    control: &mut TcpStream,
    asked: &Asked,
    count: u32,
    limits: &Limits,
) -> Result<Vec<TcpStream>> {
    let listener = data_listener(control, asked, Type::STREAM)?;
    let token = auth::to_hex(&auth::random_bytes::<16>());
    let data_port = local_port(&listener)?;
    proto::send(
        control,
        &Message::Ready {
            data_port,
            token: token.clone(),
        },
    )?;
    let peer = control
        .peer_addr()
        .map_err(|e| ProbeError::io("peer address", e))?
        .ip();
    let deadline = Instant::now() + limits.idle_timeout;
    accept_joins(&listener, &token, count, deadline, peer)
}

/// Sets `stop` when the client sends `Stop` (its user pressed Ctrl-C) or the control
/// connection closes.
pub fn watch_for_stop(control: &TcpStream, stop: Arc<AtomicBool>, until: Instant) {
    let Ok(mut watcher) = control.try_clone() else {
        return;
    };
    thread::spawn(move || {
        let got = proto::receive(&mut watcher, MAX_REQUEST_FRAME_BYTES, until, "stop");
        if !matches!(got, Err(ProtoError::Timeout(_))) {
            stop.store(true, Ordering::Relaxed);
        }
    });
}

fn serve_tcp(mut control: TcpStream, request: &TcpRequest, limits: &Limits) -> Result<()> {
    if let Err(refusal) = validate_tcp(request, limits) {
        proto::send(&mut control, &refusal.message())?;
        return Ok(());
    }
    let asked = server_asked(request);
    let joined = open_data_connections(&mut control, &asked, request.streams, limits)?;
    let mut warnings = Vec::new();
    let mut granted = Vec::new();
    for (id, stream) in joined.iter().enumerate() {
        let socket = socket2::SockRef::from(stream);
        sockopt::apply_pacing(&socket, &asked)?;
        let g = sockopt::read_granted(&socket)?;
        warnings.extend(sockopt::shortfalls(id as u32, &asked, &g));
        granted.push(g);
    }
    proto::send(&mut control, &Message::Begin {})?;
    let start = Instant::now();
    let hard_stop = start + limits.max_duration + Duration::from_secs(5);
    let stop = Arc::new(AtomicBool::new(false));
    watch_for_stop(&control, Arc::clone(&stop), hard_stop);
    let run = run_tcp_streams(&joined, request, limits, &stop, start);
    let streams = joined
        .iter()
        .zip(&run.counters)
        .zip(granted)
        .enumerate()
        .map(|(id, ((socket, counters), granted))| {
            let (first, last) = counters.span();
            let total = counters.total();
            StreamReport {
                id: id as u32,
                bytes_sent: if request.reverse { total } else { 0 },
                bytes_received: if request.reverse { 0 } else { total },
                first_byte_ns: first,
                last_byte_ns: last,
                granted,
                final_sample: sample::read(id as u32, socket, start.elapsed().as_nanos() as u64),
            }
        })
        .collect();
    let report = PeerReport {
        kernel: report::kernel_release(),
        streams,
        samples: run.history.samples,
        missed_ticks: run.history.missed_ticks,
        warnings,
        cut_by_limits: run.cut_by_limits,
        cpu: Some(run.cpu),
        ..PeerReport::default()
    };
    proto::send(&mut control, &Message::Results(Box::new(report)))?;
    Ok(())
}

struct StreamsRun {
    counters: Vec<Counters>,
    history: sample::History,
    cut_by_limits: bool,
    cpu: CpuReport,
}

/// Runs the server's end of every stream until the client ends, stops, or a limit is hit.
fn run_tcp_streams(
    joined: &[TcpStream],
    request: &TcpRequest,
    limits: &Limits,
    client_stopped: &AtomicBool,
    start: Instant,
) -> StreamsRun {
    let stop = &AtomicBool::new(false);
    let counters: Vec<Counters> = joined.iter().map(|_| Counters::default()).collect();
    // The sender's history is the test's; the receiver's is kept too (its advertised window,
    // its receive-buffer autotuning) when it fits the server's bound, refused otherwise only
    // for the sender (validate_tcp).
    let keep_history = request.reverse || planned_samples(request, limits) <= limits.max_samples;
    let sampler = keep_history.then(|| {
        let clones = joined
            .iter()
            .enumerate()
            .filter_map(|(i, s)| Some((i as u32, s.try_clone().ok()?)))
            .collect();
        Sampler::start(
            clones,
            start,
            Duration::from_nanos(request.sample_interval_ns),
        )
    });
    let limit_ns = request
        .duration_ns
        .unwrap_or(u64::MAX)
        .min(limits.max_duration.as_nanos() as u64);
    let per_stream_bytes = request
        .bytes
        .map(|b| b.div_ceil(u64::from(request.streams)));
    let done = AtomicUsize::new(0);
    let mut cut_by_limits = false;
    let cpu = CpuSampler::start(start);
    thread::scope(|scope| {
        for (socket, counters) in joined.iter().zip(&counters) {
            let done = &done;
            scope.spawn(move || {
                if request.reverse {
                    datapath::send(socket, per_stream_bytes, stop, counters, start);
                    // A client that said stop no longer reads: waiting for its ACKs would
                    // only hold the test open.
                    if !client_stopped.load(Ordering::Relaxed) {
                        datapath::drain(socket, Duration::from_secs(3));
                    }
                    let _ = socket.shutdown(std::net::Shutdown::Write);
                } else {
                    datapath::receive(
                        socket,
                        limits.max_bytes,
                        limits.idle_timeout,
                        stop,
                        counters,
                        start,
                    );
                }
                done.fetch_add(1, Ordering::SeqCst);
            });
        }
        let grace_ns = if request.reverse { 0 } else { 5_000_000_000 };
        while done.load(Ordering::SeqCst) < joined.len() {
            let elapsed_ns = start.elapsed().as_nanos() as u64;
            let total: u64 = counters.iter().map(Counters::total).sum();
            if client_stopped.load(Ordering::Relaxed) {
                stop.store(true, Ordering::Relaxed);
            }
            if elapsed_ns > limit_ns.saturating_add(grace_ns) || total > limits.max_bytes {
                cut_by_limits = !request.reverse || total > limits.max_bytes;
                stop.store(true, Ordering::Relaxed);
            }
            thread::sleep(Duration::from_millis(20));
        }
    });
    let history = sampler.map(Sampler::finish).unwrap_or_default();
    StreamsRun {
        counters,
        history,
        cut_by_limits,
        cpu: cpu.finish(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_streams: 128,
            max_duration: Duration::from_secs(60),
            max_bytes: 1 << 30,
            max_clients: 4,
            handshake_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
            max_udp_datagrams: 1000,
            max_rr_count: 10,
            max_response_bytes: 1 << 20,
            max_samples: 100_000,
        }
    }

    fn request() -> TcpRequest {
        TcpRequest {
            streams: 128,
            duration_ns: Some(10_000_000_000),
            bytes: None,
            reverse: false,
            cc: None,
            window_bytes: None,
            mss_bytes: None,
            pacing_bps: None,
            sample_interval_ns: 10_000_000,
        }
    }

    fn refused_field(request: &TcpRequest) -> Option<&'static str> {
        validate_tcp(request, &limits()).err().map(|r| r.field)
    }

    #[test]
    fn limits_name_the_field_they_refuse() {
        assert_eq!(refused_field(&request()), None);
        assert_eq!(
            refused_field(&TcpRequest {
                streams: 129,
                ..request()
            }),
            Some("streams")
        );
        assert_eq!(
            refused_field(&TcpRequest {
                streams: 0,
                ..request()
            }),
            Some("streams")
        );
        let long = TcpRequest {
            duration_ns: Some(61_000_000_000),
            ..request()
        };
        assert_eq!(refused_field(&long), Some("duration_ns"));
        let both = TcpRequest {
            bytes: Some(1),
            ..request()
        };
        assert_eq!(refused_field(&both), Some("duration_ns"));
        let big = TcpRequest {
            duration_ns: None,
            bytes: Some(2 << 30),
            ..request()
        };
        assert_eq!(refused_field(&big), Some("bytes"));
        let fast = TcpRequest {
            sample_interval_ns: 1000,
            ..request()
        };
        assert_eq!(refused_field(&fast), Some("sample_interval_ns"));
    }

    #[test]
    fn a_reverse_history_too_large_to_keep_is_refused() {
        // 128 streams × 1000 samples = 128 000 > 100 000; forward tests keep none here.
        let reverse = TcpRequest {
            reverse: true,
            ..request()
        };
        assert_eq!(refused_field(&reverse), Some("sample_interval_ns"));
        let coarser = TcpRequest {
            sample_interval_ns: 20_000_000,
            ..reverse.clone()
        };
        assert_eq!(refused_field(&coarser), None);
        let missing_cc = TcpRequest {
            cc: Some("no-such-cc".into()),
            ..coarser
        };
        assert_eq!(refused_field(&missing_cc), Some("cc"));
    }
}
