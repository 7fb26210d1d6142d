//! TCPmon-style request-response on one connection: latency per exchange, and the cwnd the
//! responder starts each response with, which shows slow-start restart after idle
//! (RFC 2861; Linux `tcp_cwnd_restart`, `net.ipv4.tcp_slow_start_after_idle`).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::auth::Secret;
use crate::client::{self, expect, unexpected};
use crate::error::Result;
use crate::proto::{self, Message, RrRequest};
use crate::report::{self, PeerReport, ResponseStart};
use crate::sample;
use crate::server::{self, Limits, Refusal};
use crate::sockopt::{self, Asked};

fn validate(request: &RrRequest, limits: &Limits) -> std::result::Result<(), Refusal> {
    if request.count == 0 || request.count > limits.max_rr_count {
        return Err(Refusal::new(
            "count",
            request.count,
            format!("must be 1..={} on this server", limits.max_rr_count),
        ));
    }
    if request.request_bytes == 0 || request.request_bytes > 1 << 20 {
        return Err(Refusal::new(
            "request_bytes",
            request.request_bytes,
            "must be 1..=1048576",
        ));
    }
    if request.response_bytes == 0 || request.response_bytes > limits.max_response_bytes {
        return Err(Refusal::new(
            "response_bytes",
            request.response_bytes,
            format!("must be 1..={} on this server", limits.max_response_bytes),
        ));
    }
    if let Some(cc) = &request.cc {
        if sockopt::check_cc(cc).is_err() {
            return Err(Refusal::new("cc", cc, "is not available on the server"));
        }
    }
    Ok(())
}

pub fn serve(mut control: TcpStream, request: &RrRequest, limits: &Limits) -> Result<()> {
    if let Err(refusal) = validate(request, limits) {
        proto::send(&mut control, &refusal.message())?;
        return Ok(());
    }
    let asked = Asked {
        cc: request.cc.clone(),
        ..Asked::default()
    };
    let mut joined = server::open_data_connections(&mut control, &asked, 1, limits)?;
    let stream = joined.remove(0);
    // The first segment of a response must leave at once, so the cwnd read after it is the
    // one the response starts with.
    let _ = stream.set_nodelay(true);
    proto::send(&mut control, &Message::Begin {})?;
    let responses = respond(&stream, request, limits);
    let report = PeerReport {
        kernel: report::kernel_release(),
        responses,
        ..PeerReport::default()
    };
    proto::send(&mut control, &Message::Results(Box::new(report)))?;
    Ok(())
}

fn respond(mut stream: &TcpStream, request: &RrRequest, limits: &Limits) -> Vec<ResponseStart> {
    let deadline = Instant::now() + limits.max_duration;
    let _ = stream.set_read_timeout(Some(limits.idle_timeout));
    let mut request_buf = vec![0u8; request.request_bytes as usize];
    let response = vec![0xa5u8; request.response_bytes.min(1 << 20) as usize];
    let mut responses = Vec::new();
    let mut last_end = Instant::now();
    for index in 0..request.count {
        if Instant::now() > deadline || stream.read_exact(&mut request_buf).is_err() {
            break;
        }
        let idle_ns = last_end.elapsed().as_nanos() as u64;
        let Some((start, first)) = write_first_segment(stream, request, &response, index, idle_ns)
        else {
            break;
        };
        responses.push(start);
        if write_rest(stream, request.response_bytes - first, &response).is_err() {
            break;
        }
        last_end = Instant::now();
    }
    responses
}

/// Writes one MSS worth and reads TCP_INFO: a slow-start restart happens as that segment is
/// sent (`tcp_event_data_sent`), so this is the cwnd the response really starts from.
fn write_first_segment(
    mut stream: &TcpStream,
    request: &RrRequest,
    response: &[u8],
    index: u32,
    idle_ns: u64,
) -> Option<(ResponseStart, u64)> {
    let mss = sample::read(0, stream, 0).map_or(1448, |s| s.snd_mss_bytes.max(1));
    let first = (mss as u64).min(request.response_bytes) as usize;
    stream.write_all(&response[..first]).ok()?;
    let after = sample::read(0, stream, 0)?;
    let start = ResponseStart {
        index,
        cwnd_pkts: after.snd_cwnd_pkts,
        ssthresh_pkts: after.snd_ssthresh_pkts,
        idle_ns,
        rto_us: after.rto_us,
        mss_bytes: after.snd_mss_bytes,
        peer_window_bytes: after.snd_wnd_bytes,
    };
    Some((start, first as u64))
}

fn write_rest(mut stream: &TcpStream, mut left: u64, response: &[u8]) -> std::io::Result<()> {
    while left > 0 {
        let n = left.min(response.len() as u64) as usize;
        stream.write_all(&response[..n])?;
        left -= n as u64;
    }
    Ok(())
}

pub struct RrOptions {
    pub server: String,
    pub secret: Secret,
    pub request: RrRequest,
    pub think_ns: Vec<u64>,
    pub out: PathBuf,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct Exchange {
    pub index: u32,
    pub think_ns: u64,
    pub latency_ns: u64,
    pub cwnd_at_start_pkts: Option<u32>,
    pub ssthresh_at_start_pkts: Option<u32>,
    /// The responder's RTO and MSS at the start of the response, and the window this end had
    /// advertised to it (absent from an older server).
    pub rto_at_start_us: Option<u32>,
    pub mss_bytes: Option<u32>,
    pub window_at_start_bytes: Option<u32>,
}

#[derive(Serialize, Deserialize, Debug)]
pub struct RrRunReport {
    pub tool: String,
    pub mode: String,
    pub server: String,
    pub kernel: String,
    pub request: RrRequest,
    pub interrupted: bool,
    pub exchanges: Vec<Exchange>,
    pub latency_percentiles_ns: Vec<(f64, u64)>,
    pub warnings: Vec<String>,
}

pub fn run(options: &RrOptions, interrupted: &AtomicBool) -> Result<RrRunReport> {
    let request = &options.request;
    if let Some(cc) = &request.cc {
        sockopt::check_cc(cc)?;
    }
    let server = client::resolve(&options.server)?;
    let mut control = client::connect_control(server, &options.secret)?;
    proto::send(&mut control, &Message::StartRr(request.clone()))?;
    let (data_port, token) = match expect(&mut control, "ready")? {
        Message::Ready { data_port, token } => (data_port, token),
        other => return Err(unexpected(other, "ready")),
    };
    let asked = Asked {
        cc: request.cc.clone(),
        ..Asked::default()
    };
    let mut stream = client::open_stream(SocketAddr::new(server.ip(), data_port), &asked)?;
    let _ = stream.set_nodelay(true);
    proto::send(&mut stream, &Message::Join { token, stream: 0 })?;
    match expect(&mut control, "begin")? {
        Message::Begin {} => {}
        other => return Err(unexpected(other, "begin")),
    }
    let latencies = exchange_all(&stream, request, &options.think_ns, interrupted);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut warnings = Vec::new();
    let starts = match client::expect(&mut control, "results") {
        Ok(Message::Results(report)) => report.responses,
        Ok(other) => return Err(unexpected(other, "results")),
        Err(e) => {
            warnings.push(format!("no results from the server: {e}"));
            Vec::new()
        }
    };
    let exchanges: Vec<Exchange> = latencies
        .iter()
        .enumerate()
        .map(|(i, &(think_ns, latency_ns))| {
            let start = starts.iter().find(|s| s.index as usize == i);
            Exchange {
                index: i as u32,
                think_ns,
                latency_ns,
                cwnd_at_start_pkts: start.map(|s| s.cwnd_pkts),
                ssthresh_at_start_pkts: start.map(|s| s.ssthresh_pkts),
                rto_at_start_us: start.map(|s| s.rto_us).filter(|&us| us > 0),
                mss_bytes: start.map(|s| s.mss_bytes).filter(|&b| b > 0),
                window_at_start_bytes: start.and_then(|s| s.peer_window_bytes),
            }
        })
        .collect();
    let report = RrRunReport {
        tool: "tcpeval-probe".into(),
        mode: "rr".into(),
        server: options.server.clone(),
        kernel: report::kernel_release(),
        request: request.clone(),
        interrupted: interrupted.load(Ordering::Relaxed),
        latency_percentiles_ns: percentiles(&latencies.iter().map(|l| l.1).collect::<Vec<_>>()),
        exchanges,
        warnings,
    };
    report::write_json(&options.out, "rr.json", &report)?;
    Ok(report)
}

/// Runs the exchanges; returns (think time, latency) per completed exchange.
fn exchange_all(
    mut stream: &TcpStream,
    request: &RrRequest,
    think_ns: &[u64],
    interrupted: &AtomicBool,
) -> Vec<(u64, u64)> {
    let request_buf = vec![0x3cu8; request.request_bytes as usize];
    let mut response = vec![0u8; 1 << 20];
    let mut done = Vec::new();
    for i in 0..request.count as usize {
        let think = think_ns
            .get(i % think_ns.len().max(1))
            .copied()
            .unwrap_or(0);
        thread::sleep(Duration::from_nanos(think));
        if interrupted.load(Ordering::Relaxed) {
            break;
        }
        let t0 = Instant::now();
        if stream.write_all(&request_buf).is_err() {
            break;
        }
        let mut left = request.response_bytes;
        while left > 0 {
            let n = left.min(response.len() as u64) as usize;
            if stream.read_exact(&mut response[..n]).is_err() {
                return done;
            }
            left -= n as u64;
        }
        done.push((think, t0.elapsed().as_nanos() as u64));
    }
    done
}

/// Nearest-rank percentiles (p50, p90, p99, max) of the latencies.
pub fn percentiles(latencies_ns: &[u64]) -> Vec<(f64, u64)> {
    let mut sorted = latencies_ns.to_vec();
    sorted.sort_unstable();
    if sorted.is_empty() {
        return Vec::new();
    }
    [50.0, 90.0, 99.0, 100.0]
        .iter()
        .map(|&p| {
            let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
            (p, sorted[rank - 1])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        let values: Vec<u64> = (1..=100).collect();
        assert_eq!(
            percentiles(&values),
            vec![(50.0, 50), (90.0, 90), (99.0, 99), (100.0, 100)]
        );
        assert!(percentiles(&[]).is_empty());
    }
}
