//! Client mode against a stock `iperf3 -s`: iperf3's TCP control protocol, our sockets and
//! our 10 ms TCP_INFO histories.
//!
//! The protocol, as iperf3's `iperf_client_api.c` drives it: the client sends a 37-byte
//! cookie (36 printable characters and a NUL) on the control connection; the server then
//! sends one signed state byte at a time. On PARAM_EXCHANGE the client sends the test's
//! parameters as JSON behind a 4-byte big-endian length; on CREATE_STREAMS it opens the data
//! connections, each starting with the same cookie; TEST_START and TEST_RUNNING start the
//! clock; when its time is up the client sends TEST_END; on EXCHANGE_RESULTS each side sends
//! its results JSON (client first); DISPLAY_RESULTS is answered with IPERF_DONE.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

use crate::client::{self, TcpOptions};
use crate::datapath;
use crate::error::{ProbeError, Result};
use crate::report::{PeerReport, StreamReport, TcpRunReport};

const COOKIE_BYTES: usize = 37;
const BLOCK_BYTES: u64 = datapath::BUFFER_BYTES as u64;
/// The largest results JSON accepted from the server.
const MAX_JSON_BYTES: usize = 16 << 20;
const STATE_TIMEOUT: Duration = Duration::from_secs(30);

// States of iperf3's control protocol (iperf_api.h).
const TEST_START: i8 = 1;
const TEST_RUNNING: i8 = 2;
const TEST_END: i8 = 4;
const PARAM_EXCHANGE: i8 = 9;
const CREATE_STREAMS: i8 = 10;
const SERVER_TERMINATE: i8 = 11;
const EXCHANGE_RESULTS: i8 = 13;
const DISPLAY_RESULTS: i8 = 14;
const IPERF_DONE: i8 = 16;
const ACCESS_DENIED: i8 = -1;
const SERVER_ERROR: i8 = -2;

fn cookie() -> [u8; COOKIE_BYTES] {
    // iperf3 draws its cookie from this alphabet; the server only compares it.
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    let random = crate::auth::random_bytes::<COOKIE_BYTES>();
    let mut out = [0u8; COOKIE_BYTES];
    for (slot, r) in out.iter_mut().zip(random).take(COOKIE_BYTES - 1) {
        *slot = ALPHABET[usize::from(r) % ALPHABET.len()];
    }
    out
}

fn io(what: &'static str) -> impl Fn(std::io::Error) -> ProbeError {
    move |e| ProbeError::io(format!("iperf3 {what}"), e)
}

fn read_state(control: &mut TcpStream) -> Result<i8> {
    control
        .set_read_timeout(Some(STATE_TIMEOUT))
        .map_err(io("control"))?;
    let mut byte = [0u8; 1];
    control.read_exact(&mut byte).map_err(io("state"))?;
    Ok(byte[0] as i8)
}

fn send_state(control: &mut TcpStream, state: i8) -> Result<()> {
    control.write_all(&[state as u8]).map_err(io("state"))
}

fn send_json(control: &mut TcpStream, value: &Value) -> Result<()> {
    let body = serde_json::to_vec(value).expect("plain JSON");
    control
        .write_all(&(body.len() as u32).to_be_bytes())
        .map_err(io("json"))?;
    control.write_all(&body).map_err(io("json"))
}

fn read_json(control: &mut TcpStream) -> Result<Value> {
    let mut header = [0u8; 4];
    control.read_exact(&mut header).map_err(io("json"))?;
    let length = u32::from_be_bytes(header) as usize;
    if length > MAX_JSON_BYTES {
        return Err(ProbeError::Iperf3(format!(
            "results of {length} bytes exceed the limit"
        )));
    }
    let mut body = vec![0u8; length];
    control.read_exact(&mut body).map_err(io("json"))?;
    serde_json::from_slice(&body).map_err(|e| ProbeError::Iperf3(format!("bad results JSON: {e}")))
}

/// The parameters iperf3's client sends (`send_parameters` in iperf_api.c), TCP only.
fn parameters(options: &TcpOptions) -> Value {
    let r = &options.request;
    let mut p = json!({
        "tcp": true,
        "omit": 0,
        "time": r.duration_ns.map_or(0, |ns| ns.div_ceil(1_000_000_000)),
        "num": r.bytes.unwrap_or(0),
        "blockcount": 0,
        "parallel": r.streams,
        "len": BLOCK_BYTES,
        "pacing_timer": 1000,
        "client_version": "3.12",
    });
    if r.reverse {
        p["reverse"] = json!(true);
    }
    if let Some(window) = r.window_bytes {
        p["window"] = json!(window);
    }
    if let Some(mss) = r.mss_bytes {
        p["MSS"] = json!(mss);
    }
    if let Some(cc) = &r.cc {
        p["congestion"] = json!(cc);
    }
    if let Some(pacing) = r.pacing_bps {
        p["fqrate"] = json!(pacing);
    }
    p
}

pub fn run(options: &TcpOptions, interrupted: &Arc<AtomicBool>) -> Result<TcpRunReport> {
    let request = &options.request;
    if request
        .duration_ns
        .is_some_and(|ns| ns % 1_000_000_000 != 0)
    {
        return Err(ProbeError::invalid(
            "duration_ms",
            request.duration_ns.unwrap_or(0) / 1_000_000,
            "must be whole seconds for iperf3",
        ));
    }
    let asked = client::client_asked(request);
    let server = client::resolve(&options.server)?;
    let mut control = TcpStream::connect_timeout(&server, client::CONNECT_TIMEOUT)
        .map_err(|e| ProbeError::io(format!("connecting to {server}"), e))?;
    let _ = control.set_nodelay(true);
    let cookie = cookie();
    control.write_all(&cookie).map_err(io("cookie"))?;
    let mut streams = Vec::new();
    let wall = Instant::now();
    loop {
        match read_state(&mut control)? {
            PARAM_EXCHANGE => send_json(&mut control, &parameters(options))?,
            CREATE_STREAMS => streams = open_streams(server, &asked, &cookie, request.streams)?,
            TEST_START => {}
            TEST_RUNNING => break,
            ACCESS_DENIED => {
                return Err(ProbeError::Iperf3(
                    "access denied (the server is busy with another test)".into(),
                ))
            }
            SERVER_ERROR => return Err(ProbeError::Iperf3(server_error(&mut control))),
            SERVER_TERMINATE => {
                return Err(ProbeError::Iperf3("the server terminated the test".into()))
            }
            other => {
                return Err(ProbeError::Iperf3(format!(
                    "unexpected state {other} before the test"
                )))
            }
        }
    }
    let granted = client::read_all_granted(&streams)?;
    let local = client::run_local_streams(&streams, request, options, interrupted);
    send_state(&mut control, TEST_END)?;
    let peer = exchange_results(&mut control, &local, request.reverse, &streams);
    let server_json = peer
        .as_ref()
        .ok()
        .map(|(_, v)| v.clone())
        .unwrap_or(Value::Null);
    let (mut report, sender, receiver) =
        client::build_report(options, &asked, granted, local, peer.map(|(p, _)| p), wall);
    report.extra = json!({ "iperf3_server_results": server_json });
    client::write_outputs(options, &(report.clone(), sender, receiver))?;
    Ok(report)
}

fn server_error(control: &mut TcpStream) -> String {
    let mut codes = [0u8; 8];
    if control.read_exact(&mut codes).is_err() {
        return "server error".into();
    }
    let i_errno = i32::from_be_bytes([codes[0], codes[1], codes[2], codes[3]]);
    let errno = i32::from_be_bytes([codes[4], codes[5], codes[6], codes[7]]);
    format!("server error (iperf3 error {i_errno}, errno {errno})")
}

fn open_streams(
    server: SocketAddr,
    asked: &crate::sockopt::Asked,
    cookie: &[u8],
    count: u32,
) -> Result<Vec<TcpStream>> {
    (0..count)
        .map(|_| {
            let mut stream = client::open_stream(server, asked)?;
            stream.write_all(cookie).map_err(io("data cookie"))?;
            Ok(stream)
        })
        .collect()
}

/// Waits for EXCHANGE_RESULTS, sends ours, reads the server's, answers DISPLAY_RESULTS.
fn exchange_results(
    control: &mut TcpStream,
    local: &client::LocalRun,
    reverse: bool,
    streams: &[TcpStream],
) -> std::result::Result<(PeerReport, Value), String> {
    let state = read_state(control).map_err(|e| e.to_string())?;
    if state != EXCHANGE_RESULTS {
        return Err(format!("expected EXCHANGE_RESULTS, got state {state}"));
    }
    send_json(control, &our_results(local, reverse, streams)).map_err(|e| e.to_string())?;
    let theirs = read_json(control).map_err(|e| e.to_string())?;
    if let Ok(DISPLAY_RESULTS) = read_state(control) {
        let _ = send_state(control, IPERF_DONE);
    }
    Ok((peer_report(&theirs, reverse), theirs))
}

fn our_results(local: &client::LocalRun, reverse: bool, streams: &[TcpStream]) -> Value {
    let list: Vec<Value> = local
        .counters
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let retransmits =
                crate::sample::read(i as u32, &streams[i], 0).map_or(0, |s| s.total_retrans_pkts);
            json!({
                // iperf3 numbers its streams 1, 3, 4, 5, … (iperf_add_stream).
                "id": if i == 0 { 1 } else { i + 2 },
                "bytes": c.total(),
                "retransmits": if reverse { -1 } else { i64::from(retransmits) },
                "jitter": 0, "errors": 0, "omitted_errors": 0, "packets": 0, "omitted_packets": 0,
                "start_time": 0,
                "end_time": local.end_ns.get(i).copied().unwrap_or(0) as f64 / 1e9,
            })
        })
        .collect();
    json!({
        "cpu_util_total": 0, "cpu_util_user": 0, "cpu_util_system": 0,
        "sender_has_retransmits": if reverse { 0 } else { 1 },
        "streams": list,
    })
}

/// The server's per-stream byte counts, in stream order.
fn peer_report(theirs: &Value, reverse: bool) -> PeerReport {
    let streams = theirs["streams"].as_array().cloned().unwrap_or_default();
    PeerReport {
        streams: streams
            .iter()
            .enumerate()
            .map(|(i, s)| {
                let bytes = s["bytes"].as_u64().unwrap_or(0);
                StreamReport {
                    id: i as u32,
                    bytes_sent: if reverse { bytes } else { 0 },
                    bytes_received: if reverse { 0 } else { bytes },
                    ..StreamReport::default()
                }
            })
            .collect(),
        kernel: String::new(),
        ..PeerReport::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_is_36_printable_characters_and_a_nul() {
        let c = cookie();
        assert_eq!(c[36], 0);
        assert!(c[..36].iter().all(|b| b.is_ascii_alphanumeric()));
    }
}
