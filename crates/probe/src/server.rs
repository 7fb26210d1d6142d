//! The server: safe to leave running on a data-transfer node facing strangers.
//!
//! A connection first takes a handshake slot (`admission.rs`: bounded per address, per
//! network and in all) and must authenticate (HMAC challenge-response, `auth.rs`) within the
//! handshake timeout, or it gets one refusal message and is closed. Only then does it take
//! one of the `max_clients` test slots. Requests are checked against the limits and a
//! refused field is named. Data connections go to a fresh port per test and must present the
//! test's random token first; each test is cut off at the duration and byte limits, and
//! nothing it started (threads, descriptors) outlives it. Everything a peer says that reaches
//! the log is escaped and the log is rate-limited per source (`log.rs`).

use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, Socket, Type};

use crate::admission::{Admission, Bounds, Crowded, HandshakeSlot};
use crate::auth::{self, Secret, CHALLENGE_BYTES};
use crate::backoff::Backoff;
use crate::cpu::{CpuReport, CpuSampler};
use crate::datapath::{self, Counters};
use crate::error::{ProbeError, ProtoError, Result};
use crate::escape;
use crate::log::log;
use crate::proto::{self, Message, TcpRequest, MAX_REQUEST_FRAME_BYTES, PROTOCOL_VERSION};
use crate::report::{self, PeerReport, StreamReport};
use crate::root::Root;
use crate::sample::{self, Sampler};
use crate::sockopt::{self, Asked};
use crate::stop_watch::StopWatch;
use crate::{copy_server, disk_remote, housekeeping, rr, udp};

#[derive(Debug, Clone)]
pub struct Limits {
    pub max_streams: u32,
    pub max_duration: Duration,
    pub max_bytes: u64,
    pub max_clients: usize,
    /// Connections not yet authenticated, in all, per address and per /24 or /64.
    pub max_handshakes: usize,
    pub max_handshakes_per_address: usize,
    pub max_handshakes_per_prefix: usize,
    pub handshake_timeout: Duration,
    pub idle_timeout: Duration,
    pub max_udp_datagrams: u64,
    /// The arrivals one UDP test may keep in the server's memory, in bytes.
    pub max_udp_memory_bytes: u64,
    pub max_rr_count: u32,
    pub max_response_bytes: u64,
    /// TCP_INFO samples one reverse test may keep (streams × duration / interval): the
    /// history lives in the server's memory until it is sent (~200 bytes a sample).
    pub max_samples: u64,
    /// Partial files in the root unwritten for longer are removed (`stale.rs`).
    pub stale_partial: Duration,
}

/// A check of one request field against a limit: the refusal names it.
pub struct Refusal {
    pub field: &'static str,
    pub value: String,
    pub reason: String,
}

impl Refusal {
    /// `value` may be the peer's own text (a name, a congestion control): it is escaped and
    /// cut before it goes back or into the log.
    pub fn new(field: &'static str, value: impl ToString, reason: impl Into<String>) -> Self {
        Refusal {
            field,
            value: escape::peer(&value.to_string()),
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

/// What every connection's thread shares.
struct Shared {
    admission: Arc<Admission>,
    secret: Secret,
    limits: Limits,
    root: Arc<Option<Root>>,
}

/// `root`: the directory copies may use; without one, copies are rejected.
pub fn serve(listen: SocketAddr, secret: Secret, limits: Limits, root: Option<Root>) -> Result<()> {
    raise_descriptor_limit();
    let listener = control_listener(listen)?;
    let local = listener
        .local_addr()
        .map_err(|e| ProbeError::io("local address", e))?;
    let root = Arc::new(root);
    housekeeping::start(Arc::clone(&root), limits.stale_partial);
    // Scripts that bind port 0 read the port from this line.
    println!("listening on {local}");
    let shared = Arc::new(Shared {
        admission: Admission::new(Bounds {
            per_address: limits.max_handshakes_per_address,
            per_prefix: limits.max_handshakes_per_prefix,
            handshakes: limits.max_handshakes,
            clients: limits.max_clients,
        }),
        secret,
        limits,
        root,
    });
    let mut backoff = Backoff::default();
    loop {
        match listener.accept() {
            Ok((control, peer)) => {
                backoff.reset();
                admit(control, peer, &shared);
            }
            Err(e) => {
                if let Some(pause) = backoff.after(&e) {
                    log().server(format!("accepting: {e}; pausing {} ms", pause.as_millis()));
                    thread::sleep(pause);
                }
            }
        }
    }
}

/// The connections the kernel completes and queues while the accept loop is busy. Under a
/// flood, a client whose handshake finds the queue full has its SYN dropped and retries a
/// second later; std's queue of 128 is short for a server strangers reach (the kernel caps
/// it at `net.core.somaxconn`).
const ACCEPT_QUEUE: i32 = 1024;

fn control_listener(listen: SocketAddr) -> Result<TcpListener> {
    let io = |e| ProbeError::io(format!("listening on {listen}"), e);
    let socket = Socket::new(
        Domain::for_address(listen),
        Type::STREAM,
        Some(Protocol::TCP),
    )
    .map_err(io)?;
    // As std's listener does: a restarted server binds again though old connections linger.
    socket.set_reuse_address(true).map_err(io)?;
    socket.bind(&listen.into()).map_err(io)?;
    socket.listen(ACCEPT_QUEUE).map_err(io)?;
    Ok(socket.into())
}

/// A server holds two descriptors per handshake (the socket and the admission table's), two
/// per stream (the socket and the sampler's) and a few per test: the common soft limit of
/// 1024 is below what its default bounds allow. Raise it to the hard limit the administrator
/// set.
fn raise_descriptor_limit() {
    use nix::sys::resource::{getrlimit, setrlimit, Resource};
    if let Ok((soft, hard)) = getrlimit(Resource::RLIMIT_NOFILE) {
        if soft < hard {
            let _ = setrlimit(Resource::RLIMIT_NOFILE, hard, hard);
        }
    }
}

/// Gives the connection a handshake slot and a thread, or one refusal at once.
fn admit(control: TcpStream, peer: SocketAddr, shared: &Arc<Shared>) {
    let Ok(handle) = control.try_clone() else {
        return;
    };
    let granted = match shared.admission.handshake(peer, handle) {
        Ok(granted) => granted,
        Err(crowded) => return refuse_crowded(control, peer, crowded),
    };
    if let Some(displaced) = granted.displaced {
        let why = "every handshake slot was taken and its network held the most";
        log().client(displaced, format!("handshake cut off to make room: {why}"));
    }
    let shared_for_thread = Arc::clone(shared);
    let spawned = thread::Builder::new().spawn(move || {
        let slot = granted.slot;
        if let Err(e) = handle_client(control, slot, &shared_for_thread) {
            log().client(peer, e);
        }
    });
    if let Err(e) = spawned {
        log().client(peer, format!("dropped: no thread for it ({e})"));
    }
}

/// The refusal of a connection over its source's bound, from the accept loop itself: the
/// message is small enough for any fresh socket's buffer, so sending it cannot block.
fn refuse_crowded(mut control: TcpStream, peer: SocketAddr, crowded: Crowded) {
    let _ = control.set_nonblocking(true);
    let _ = proto::send(&mut control, &refused(&crowded.to_string()));
    log().client(peer, format!("refused: {crowded}"));
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

fn handle_client(mut control: TcpStream, handshake: HandshakeSlot, shared: &Shared) -> Result<()> {
    let (limits, root) = (&shared.limits, shared.root.as_ref().as_ref());
    let _ = control.set_nodelay(true);
    authenticate(&mut control, &shared.secret, limits)?;
    drop(handshake);
    let Some(_slot) = shared.admission.client() else {
        let _ = proto::send(&mut control, &refused("server busy"));
        close_gracefully(&mut control);
        return Err(ProbeError::Refused("server busy".into()));
    };
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
    check_socket_settings(request)?;
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

/// TCP_MAXSEG's bounds in Linux (`do_tcp_setsockopt`: TCP_MIN_MSS to MAX_TCP_WINDOW).
const MSS_BYTES: std::ops::RangeInclusive<u32> = 88..=32_767;
/// SO_SNDBUF and SO_RCVBUF take an int, which the kernel doubles.
const MAX_WINDOW_BYTES: u64 = i32::MAX as u64 / 2;

/// Settings the kernel would refuse with an error (or silently wrap) are refused by name
/// before any socket is made.
fn check_socket_settings(request: &TcpRequest) -> std::result::Result<(), Refusal> {
    if let Some(mss) = request.mss_bytes.filter(|mss| !MSS_BYTES.contains(mss)) {
        let (lo, hi) = (MSS_BYTES.start(), MSS_BYTES.end());
        return Err(Refusal::new(
            "mss_bytes",
            mss,
            format!("must be {lo}..={hi}"),
        ));
    }
    if let Some(window) = request.window_bytes.filter(|w| *w > MAX_WINDOW_BYTES) {
        let reason = format!("must be at most {MAX_WINDOW_BYTES}");
        return Err(Refusal::new("window_bytes", window, reason));
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
/// data connections that joined with the test's token. If they cannot be had, the client is
/// told why (`rejected`, naming `streams`) before the error is returned.
pub fn open_data_connections(
    control: &mut TcpStream,
    asked: &Asked,
    count: u32,
    limits: &Limits,
) -> Result<Vec<TcpStream>> {
    let joined = join_data_connections(control, asked, count, limits);
    if let Err(e) = &joined {
        let reason = match e {
            ProbeError::Protocol(ProtoError::Timeout(_)) => format!(
                "did not all join within {} ms",
                limits.idle_timeout.as_millis()
            ),
            other => format!("could not be opened: {other}"),
        };
        let _ = proto::send(control, &Refusal::new("streams", count, reason).message());
    }
    joined
}

fn join_data_connections(
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
    let watch = StopWatch::start(&control, hard_stop);
    let run = run_tcp_streams(&joined, request, limits, watch.flag(), start);
    drop(watch);
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
                        let _ = datapath::drain(socket, Duration::from_secs(3));
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
pub(crate) mod tests {
    use super::*;

    pub(crate) fn limits() -> Limits {
        Limits {
            max_streams: 128,
            max_duration: Duration::from_secs(60),
            max_bytes: 1 << 30,
            max_clients: 4,
            max_handshakes: 8,
            max_handshakes_per_address: 2,
            max_handshakes_per_prefix: 4,
            handshake_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(1),
            max_udp_datagrams: 1000,
            max_udp_memory_bytes: 1 << 20,
            max_rr_count: 10,
            max_response_bytes: 1 << 20,
            max_samples: 100_000,
            stale_partial: Duration::from_secs(3600),
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
    fn socket_settings_the_kernel_would_refuse_are_refused_by_name() {
        for (mss, refused) in [
            (4_294_967_295, true),
            (87, true),
            (88, false),
            (32_767, false),
        ] {
            let asked = TcpRequest {
                mss_bytes: Some(mss),
                ..request()
            };
            let want = refused.then_some("mss_bytes");
            assert_eq!(refused_field(&asked), want, "mss {mss}");
        }
        let huge = TcpRequest {
            window_bytes: Some(u64::MAX),
            ..request()
        };
        assert_eq!(refused_field(&huge), Some("window_bytes"));
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
