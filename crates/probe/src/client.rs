//! The measuring client: `tcp` tests against a tcpeval-probe server.

use std::io::Write;
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use socket2::{Domain, Protocol, SockRef, Socket, Type};

use crate::auth::{self, Secret};
use crate::cpu::{CpuReport, CpuSampler};
use crate::datapath::{self, Counters};
use crate::error::{ProbeError, ProtoError, Result};
use crate::escape::{self, escape};
use crate::interval::IntervalReporter;
use crate::proto::{self, Message, TcpRequest, MAX_RESULTS_FRAME_BYTES, PROTOCOL_VERSION};
use crate::report::{self, ClientStream, PeerReport, TcpRunReport};
use crate::sample::{self, History, Sample, Sampler};
use crate::sockopt::{self, Asked, Granted};

pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// How often the supervisor looks at the clock, Ctrl-C and the streams.
pub const SUPERVISE_TICK: Duration = Duration::from_millis(10);
const CONTROL_TIMEOUT: Duration = Duration::from_secs(15);
/// How long the client waits for the server's results after the data has stopped.
const RESULTS_TIMEOUT: Duration = Duration::from_secs(30);

pub struct TcpOptions {
    pub server: String,
    /// None only in iperf3 mode, where iperf3 has no such secret.
    pub secret: Option<Secret>,
    pub request: TcpRequest,
    pub out: PathBuf,
    pub progress: bool,
    /// Keep the sockets open this long after the final sample (for `ss -ti`).
    pub hold_open: Duration,
    /// Speak iperf3's control protocol to a stock `iperf3 -s` (iperf3.rs).
    pub iperf3: bool,
    /// False only to measure the sampler's own cost.
    pub sample: bool,
    /// Print a machine-readable report this often (interval.rs).
    pub interval: Option<Duration>,
}

pub fn resolve(server: &str) -> Result<SocketAddr> {
    server
        .to_socket_addrs()
        .ok()
        .and_then(|mut addrs| addrs.next())
        .ok_or_else(|| ProbeError::invalid("host", server, "does not resolve to an address"))
}

/// Connects the control channel and answers the server's challenge.
pub fn connect_control(server: SocketAddr, secret: &Secret) -> Result<TcpStream> {
    let mut control = TcpStream::connect_timeout(&server, CONNECT_TIMEOUT)
        .map_err(|e| ProbeError::io(format!("connecting to {server}"), e))?;
    let _ = control.set_nodelay(true);
    let challenge = match expect(&mut control, "hello")? {
        Message::Hello { version, challenge } if version == PROTOCOL_VERSION => challenge,
        Message::Hello { version, .. } => {
            return Err(ProtoError::Version {
                got: version,
                want: PROTOCOL_VERSION,
            }
            .into())
        }
        other => return Err(unexpected(other, "hello")),
    };
    let challenge = auth::from_hex(&challenge)
        .ok_or_else(|| ProtoError::Malformed("challenge is not hex".into()))?;
    let mac = auth::to_hex(&secret.answer(&challenge));
    proto::send(
        &mut control,
        &Message::Auth {
            version: PROTOCOL_VERSION,
            mac,
        },
    )?;
    match expect(&mut control, "welcome")? {
        Message::Welcome {} => Ok(control),
        other => Err(unexpected(other, "welcome")),
    }
}

/// Reads the next control message; a refusal or rejection becomes its error.
pub fn expect(control: &mut TcpStream, want: &'static str) -> Result<Message> {
    let deadline = Instant::now() + CONTROL_TIMEOUT;
    receive_until(control, want, deadline)
}

/// The longest reason of a server's refusal the client prints (a list of congestion
/// controls can be long; a hostile server's novel cannot).
const REASON_BYTES: usize = 1024;

/// Like `expect`, to a deadline. A refusal's words come from the server, so they are
/// escaped before they can reach the user's terminal.
pub fn receive_until(
    control: &mut TcpStream,
    want: &'static str,
    deadline: Instant,
) -> Result<Message> {
    match proto::receive(control, MAX_RESULTS_FRAME_BYTES, deadline, want)? {
        Message::Refused { reason } => Err(ProbeError::Refused(escape(&reason, REASON_BYTES))),
        Message::Rejected {
            field,
            value,
            reason,
        } => Err(ProbeError::Rejected {
            field: escape::peer(&field),
            value: escape::peer(&value),
            reason: escape(&reason, REASON_BYTES),
        }),
        message => Ok(message),
    }
}

pub fn unexpected(message: Message, want: &'static str) -> ProbeError {
    ProtoError::Unexpected {
        got: message.name().into(),
        want,
    }
    .into()
}

/// Opens one data connection with the asked settings in place before the handshake.
pub fn open_stream(server: SocketAddr, asked: &Asked) -> Result<TcpStream> {
    let socket = Socket::new(
        Domain::for_address(server),
        Type::STREAM,
        Some(Protocol::TCP),
    )
    .map_err(|e| ProbeError::io("data socket", e))?;
    sockopt::apply_before_handshake(&socket, asked)?;
    socket
        .connect_timeout(&server.into(), CONNECT_TIMEOUT)
        .map_err(|e| ProbeError::io(format!("data connection to {server}"), e))?;
    sockopt::apply_pacing(&socket, asked)?;
    Ok(socket.into())
}

pub(crate) fn client_asked(request: &TcpRequest) -> Asked {
    Asked {
        cc: request.cc.clone().filter(|_| !request.reverse),
        window_bytes: request.window_bytes,
        mss_bytes: request.mss_bytes,
        pacing_bps: request.pacing_bps.filter(|_| !request.reverse),
    }
}

pub fn run_tcp(options: &TcpOptions, interrupted: &Arc<AtomicBool>) -> Result<TcpRunReport> {
    let request = &options.request;
    let asked = client_asked(request);
    if let Some(cc) = &asked.cc {
        sockopt::check_cc(cc)?;
    }
    let server = resolve(&options.server)?;
    let secret = options
        .secret
        .as_ref()
        .ok_or_else(|| ProbeError::invalid("secret_file", "", "is required"))?;
    let mut control = connect_control(server, secret)?;
    proto::send(&mut control, &Message::StartTcp(request.clone()))?;
    let streams = join_streams(&mut control, server, &asked, request.streams)?;
    let granted = read_all_granted(&streams)?;
    match expect(&mut control, "begin")? {
        Message::Begin {} => {}
        other => return Err(unexpected(other, "begin")),
    }
    let wall = Instant::now();
    let local = run_local_streams(&streams, request, options, interrupted);
    let peer = finish_session(&mut control, &streams, request, &local, options);
    let report = build_report(options, &asked, granted, local, peer, wall);
    write_outputs(options, &report)?;
    Ok(report.0)
}

/// Waits for the server's `Ready` and opens `count` data connections to the port it names,
/// each introduced by the test's token.
pub fn join_streams(
    control: &mut TcpStream,
    server: SocketAddr,
    asked: &Asked,
    count: u32,
) -> Result<Vec<TcpStream>> {
    let (data_port, token) = match expect(control, "ready")? {
        Message::Ready { data_port, token } => (data_port, token),
        other => return Err(unexpected(other, "ready")),
    };
    let data_addr = SocketAddr::new(server.ip(), data_port);
    (0..count)
        .map(|id| {
            let mut stream = open_stream(data_addr, asked)?;
            let token = token.clone();
            proto::send(&mut stream, &Message::Join { token, stream: id })?;
            Ok(stream)
        })
        .collect()
}

pub(crate) fn read_all_granted(streams: &[TcpStream]) -> Result<Vec<Granted>> {
    streams
        .iter()
        .map(|s| sockopt::read_granted(&SockRef::from(s)))
        .collect()
}

/// What the client measured on its own sockets.
pub(crate) struct LocalRun {
    pub(crate) counters: Vec<Counters>,
    pub(crate) end_ns: Vec<u64>,
    history: History,
    final_samples: Vec<Option<Sample>>,
    interrupted: bool,
    /// A stream's data was still unacknowledged after the drain (a path that delivers
    /// nothing, such as a path-MTU black hole): its end would never reach the server.
    undrained: bool,
    /// The wall-clock time the stream and sample times count from.
    start_unix_ns: u64,
    cpu: CpuReport,
}

pub(crate) fn run_local_streams(
    streams: &[TcpStream],
    request: &TcpRequest,
    options: &TcpOptions,
    interrupted: &AtomicBool,
) -> LocalRun {
    let start = Instant::now();
    let start_unix_ns = report::unix_now_ns();
    let clones = streams
        .iter()
        .enumerate()
        .filter_map(|(i, s)| Some((i as u32, s.try_clone().ok()?)))
        .collect();
    let interval = Duration::from_nanos(request.sample_interval_ns);
    let sampler = options
        .sample
        .then(|| Sampler::start(clones, start, interval));
    let cpu = CpuSampler::start(start);
    let counters: Vec<Counters> = streams.iter().map(|_| Counters::default()).collect();
    let stop = AtomicBool::new(false);
    let per_stream_bytes = request
        .bytes
        .map(|b| b.div_ceil(u64::from(request.streams)));
    let mut end_ns = vec![0u64; streams.len()];
    let undrained = AtomicBool::new(false);
    thread::scope(|scope| {
        let handles: Vec<_> = streams
            .iter()
            .zip(&counters)
            .map(|(socket, counters)| {
                let (stop, undrained) = (&stop, &undrained);
                scope.spawn(move || {
                    if request.reverse {
                        datapath::receive(
                            socket,
                            u64::MAX,
                            Duration::from_secs(3600),
                            stop,
                            counters,
                            start,
                        );
                    } else {
                        datapath::send(socket, per_stream_bytes, stop, counters, start);
                        if !datapath::drain(socket, Duration::from_secs(3)) {
                            undrained.store(true, Ordering::Relaxed);
                        }
                    }
                    start.elapsed().as_nanos() as u64
                })
            })
            .collect();
        let lanes = Lanes {
            streams,
            counters: &counters,
            stop: &stop,
        };
        supervise(&handles, options, &lanes, interrupted, start);
        for (slot, handle) in end_ns.iter_mut().zip(handles) {
            *slot = handle.join().unwrap_or_default();
        }
    });
    let history = sampler.map(Sampler::finish).unwrap_or_default();
    let cpu = cpu.finish();
    let t_ns = start.elapsed().as_nanos() as u64;
    let final_samples = streams
        .iter()
        .enumerate()
        .map(|(i, s)| sample::read(i as u32, s, t_ns))
        .collect();
    LocalRun {
        counters,
        end_ns,
        history,
        final_samples,
        interrupted: interrupted.load(Ordering::Relaxed),
        undrained: undrained.load(Ordering::Relaxed),
        start_unix_ns,
        cpu,
    }
}

/// The streams as the supervisor sees them.
struct Lanes<'a> {
    streams: &'a [TcpStream],
    counters: &'a [Counters],
    stop: &'a AtomicBool,
}

/// Waits for the streams, printing progress once a second and interval reports if asked;
/// stops them at the duration or on Ctrl-C.
fn supervise(
    handles: &[thread::ScopedJoinHandle<'_, u64>],
    options: &TcpOptions,
    lanes: &Lanes,
    interrupted: &AtomicBool,
    start: Instant,
) {
    // In reverse tests the server times the test; the client stops only on Ctrl-C, or long
    // after a server that never ends the test should have.
    let (request, progress) = (&options.request, options.progress);
    let slack = if request.reverse && !options.iperf3 {
        Duration::from_secs(10)
    } else {
        Duration::ZERO
    };
    let limit = request
        .duration_ns
        .map(|ns| Duration::from_nanos(ns) + slack);
    let mut intervals = options
        .interval
        .map(|every| IntervalReporter::new(every, lanes.streams.len(), request.reverse));
    let (streams, counters) = (lanes.streams, lanes.counters);
    let mut next_report = Duration::from_secs(1);
    let mut last_bytes: Vec<u64> = counters.iter().map(Counters::total).collect();
    while !handles.iter().all(|h| h.is_finished()) {
        let elapsed = start.elapsed();
        if limit.is_some_and(|l| elapsed >= l) || interrupted.load(Ordering::Relaxed) {
            lanes.stop.store(true, Ordering::Relaxed);
        }
        if let Some(reporter) = intervals.as_mut() {
            reporter.tick(elapsed, streams, counters);
            // The data has stopped: what follows (waiting for the last ACKs) is no interval.
            if lanes.stop.load(Ordering::Relaxed) {
                reporter.finish(elapsed, streams, counters);
            }
        }
        if progress && elapsed >= next_report {
            print_progress(elapsed, counters, &mut last_bytes);
            next_report += Duration::from_secs(1);
        }
        // Coarse on purpose: on a 2-core host every wake-up is taken from the data path.
        thread::sleep(SUPERVISE_TICK);
    }
    if let Some(reporter) = intervals.as_mut() {
        reporter.finish(start.elapsed(), streams, counters);
    }
}

pub fn print_progress(elapsed: Duration, counters: &[Counters], last_bytes: &mut [u64]) {
    let rates: Vec<f64> = counters
        .iter()
        .zip(last_bytes.iter_mut())
        .map(|(c, last)| {
            let now = c.total();
            let delta = now - *last;
            *last = now;
            delta as f64 * 8.0 / 1e6
        })
        .collect();
    let shown: Vec<String> = rates.iter().take(8).map(|r| format!("{r:.1}")).collect();
    let more = if rates.len() > 8 { " …" } else { "" };
    // A reader gone away must not end the test: eprintln! would panic.
    let _ = writeln!(
        std::io::stderr(),
        "[{:6.1}s] {:9.1} Mb/s total | per stream Mb/s: {}{more}",
        elapsed.as_secs_f64(),
        rates.iter().sum::<f64>(),
        shown.join(" ")
    );
}

/// Ends the test with the server and collects its report; a failure here loses only the
/// server's half, never what the client measured.
fn finish_session(
    control: &mut TcpStream,
    streams: &[TcpStream],
    request: &TcpRequest,
    local: &LocalRun,
    options: &TcpOptions,
) -> std::result::Result<PeerReport, String> {
    if !options.hold_open.is_zero() {
        eprintln!(
            "final sample taken; holding sockets open for {} ms",
            options.hold_open.as_millis()
        );
        thread::sleep(options.hold_open);
    }
    // The server reads a forward stream until its end, which a stream that never drained
    // will not send: stop it, as Ctrl-C stops a reverse test.
    if (request.reverse && local.interrupted) || local.undrained {
        let _ = proto::send(control, &Message::Stop {});
    }
    for stream in streams {
        let _ = stream.shutdown(Shutdown::Write);
    }
    match receive_until(control, "results", Instant::now() + RESULTS_TIMEOUT) {
        Ok(Message::Results(report)) => Ok(*report),
        Ok(other) => Err(unexpected(other, "results").to_string()),
        Err(e) => Err(e.to_string()),
    }
}

#[allow(clippy::type_complexity)]
pub(crate) fn build_report(
    options: &TcpOptions,
    asked: &Asked,
    granted: Vec<Granted>,
    local: LocalRun,
    peer: std::result::Result<PeerReport, String>,
    wall: Instant,
) -> (TcpRunReport, Vec<Sample>, Vec<Sample>) {
    let request = &options.request;
    let mut warnings = Vec::new();
    for (id, g) in granted.iter().enumerate() {
        warnings.extend(sockopt::shortfalls(id as u32, asked, g));
    }
    let peer = match peer {
        Ok(mut p) => {
            p.cpu = p.cpu.map(CpuReport::sanitized);
            Some(p)
        }
        Err(e) => {
            warnings.push(format!("no results from the server: {e}"));
            None
        }
    };
    if let Some(p) = &peer {
        warnings.extend(p.warnings.iter().map(|w| format!("server: {w}")));
        if p.cut_by_limits {
            warnings.push("server: the test was cut short by the server's limits".into());
        }
    }
    let streams = client_streams(request, asked, granted, &local, peer.as_ref());
    let duration_ns = streams.iter().map(|s| s.end_ns).max().unwrap_or(0);
    let (mut sender_samples, receiver_samples, missed) = match (&peer, request.reverse) {
        (Some(p), true) => (
            p.samples.clone(),
            local.history.samples.clone(),
            p.missed_ticks,
        ),
        (None, true) => (
            Vec::new(),
            local.history.samples.clone(),
            local.history.missed_ticks,
        ),
        (peer, false) => (
            local.history.samples.clone(),
            peer.as_ref().map(|p| p.samples.clone()).unwrap_or_default(),
            local.history.missed_ticks,
        ),
    };
    // The final reading (after the last byte was acknowledged) closes each history.
    sender_samples.extend(streams.iter().filter_map(|s| s.final_sample.clone()));
    let report = TcpRunReport {
        tool: "tcpeval-probe".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        mode: "tcp".into(),
        server: options.server.clone(),
        iperf3: options.iperf3,
        kernel: report::kernel_release(),
        request: request.clone(),
        sender: if request.reverse { "server" } else { "client" }.into(),
        interrupted: local.interrupted,
        wall_ns: wall.elapsed().as_nanos() as u64,
        start_unix_ns: local.start_unix_ns,
        duration_ns,
        sample_count: sender_samples.len() as u64,
        missed_ticks: missed,
        warnings,
        streams,
        peer: peer.map(|mut p| {
            p.samples.clear();
            p
        }),
        cpu: Some(local.cpu),
        extra: serde_json::Value::Null,
    };
    (report, sender_samples, receiver_samples)
}

fn client_streams(
    request: &TcpRequest,
    asked: &Asked,
    granted: Vec<Granted>,
    local: &LocalRun,
    peer: Option<&PeerReport>,
) -> Vec<ClientStream> {
    granted
        .into_iter()
        .enumerate()
        .map(|(i, granted)| {
            let counters = &local.counters[i];
            let theirs = peer.and_then(|p| p.streams.get(i));
            let (bytes_sent, bytes_received, delivered, end_ns) = if request.reverse {
                let (_, last) = counters.span();
                (0, counters.total(), counters.total(), last.unwrap_or(0))
            } else {
                let delivered = theirs.map_or(counters.total(), |s| s.bytes_received);
                (counters.total(), 0, delivered, local.end_ns[i])
            };
            ClientStream {
                id: i as u32,
                asked: asked.clone(),
                granted,
                bytes_sent,
                bytes_received,
                bytes_delivered: delivered,
                start_ns: 0,
                end_ns,
                final_sample: if request.reverse {
                    theirs.and_then(|s| s.final_sample.clone())
                } else {
                    local.final_samples[i].clone()
                },
            }
        })
        .collect()
}

pub(crate) fn write_outputs(
    options: &TcpOptions,
    report: &(TcpRunReport, Vec<Sample>, Vec<Sample>),
) -> Result<()> {
    let (summary, sender, receiver) = report;
    report::write_samples(&options.out, "samples.csv", sender)?;
    report::write_samples(&options.out, "receiver_samples.csv", receiver)?;
    // summary.json last: its presence says the run's files are complete.
    report::write_json(&options.out, "summary.json", summary)
}
