//! The control protocol: length-prefixed JSON frames.
//!
//! A frame is a 4-byte big-endian length followed by that many bytes of UTF-8 JSON, one
//! `Message`. The length is checked against a hard limit *before* anything is allocated, and
//! a frame must arrive whole before a deadline, so a slow or hostile peer cannot hold memory
//! or a server slot. Every message carries its `type`; unknown fields are errors.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::error::ProtoError;
use crate::escape;
use crate::transfer::RangeDigest;
use crate::verify::Verdict;

pub const PROTOCOL_VERSION: u32 = 1;
/// What the server accepts from a client: requests are small.
pub const MAX_REQUEST_FRAME_BYTES: usize = 64 * 1024;
/// What a client accepts from its server: results carry every 10 ms sample of reverse tests.
pub const MAX_RESULTS_FRAME_BYTES: usize = 1 << 30;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Message {
    /// Server → client, first on every connection.
    Hello {
        version: u32,
        challenge: String,
    },
    /// Client → server on the control connection: the HMAC of the challenge.
    Auth {
        version: u32,
        mac: String,
    },
    /// Client → server on a data connection: the session token from `Ready`.
    Join {
        token: String,
        stream: u32,
    },
    /// Server → client, the only answer an unauthenticated or unwelcome client gets.
    Refused {
        reason: String,
    },
    Welcome {},
    StartTcp(TcpRequest),
    StartUdp(UdpRequest),
    StartRr(RrRequest),
    /// Client → server: receive a file into the server's root.
    StartPut(PutRequest),
    /// Client → server: send a file from the server's root.
    StartGet(GetRequest),
    /// Client → server: measure the disk of the server's root.
    StartDisk(crate::disk::DiskRequest),
    /// Server → client: what the disk test measured.
    DiskResults(Box<crate::disk::DiskReport>),
    /// Server → client, before `Ready` of a get: the size of the file it will send.
    Source {
        size_bytes: u64,
    },
    /// Receiver → sender, before the data of a resumed copy: per range, the bytes its
    /// partial file holds and their SHA-256.
    Held {
        ranges: Vec<RangeDigest>,
    },
    /// Sender → receiver after a copy's data: per range, the bytes sent and their SHA-256.
    Sent {
        ranges: Vec<RangeDigest>,
    },
    /// Receiver → sender: what is on disk, and whether the file was renamed into place.
    Received(Verdict),
    /// Server → client: a request field out of bounds.
    Rejected {
        field: String,
        value: String,
        reason: String,
    },
    /// Server → client: where to open the data connections.
    Ready {
        data_port: u16,
        token: String,
    },
    /// Server → client: every data connection joined; the clock starts.
    Begin {},
    /// Client → server: stop early (Ctrl-C) and send what was measured.
    Stop {},
    /// Server → client at the end of a test.
    Results(Box<crate::report::PeerReport>),
}

impl Message {
    pub fn name(&self) -> &'static str {
        match self {
            Message::Hello { .. } => "hello",
            Message::Auth { .. } => "auth",
            Message::Join { .. } => "join",
            Message::Refused { .. } => "refused",
            Message::Welcome {} => "welcome",
            Message::StartTcp(_) => "start_tcp",
            Message::StartUdp(_) => "start_udp",
            Message::StartRr(_) => "start_rr",
            Message::StartPut(_) => "start_put",
            Message::StartGet(_) => "start_get",
            Message::StartDisk(_) => "start_disk",
            Message::DiskResults(_) => "disk_results",
            Message::Source { .. } => "source",
            Message::Held { .. } => "held",
            Message::Sent { .. } => "sent",
            Message::Received(_) => "received",
            Message::Rejected { .. } => "rejected",
            Message::Ready { .. } => "ready",
            Message::Begin {} => "begin",
            Message::Stop {} => "stop",
            Message::Results(_) => "results",
        }
    }
}

/// A memory-to-memory TCP test, as the client asks it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct TcpRequest {
    pub streams: u32,
    pub duration_ns: Option<u64>,
    pub bytes: Option<u64>,
    pub reverse: bool,
    pub cc: Option<String>,
    pub window_bytes: Option<u64>,
    pub mss_bytes: Option<u32>,
    pub pacing_bps: Option<u64>,
    pub sample_interval_ns: u64,
}

/// Trains of UDP datagrams, one train per spacing, sent by the client.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct UdpRequest {
    pub size_bytes: u32,
    pub count: u32,
    pub spacings_ns: Vec<u64>,
}

/// Request-response exchanges on one TCP connection.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RrRequest {
    pub request_bytes: u32,
    pub response_bytes: u64,
    pub count: u32,
    pub cc: Option<String>,
}

/// A file the client sends into the server's root (`docs/probe.md`, "Copies").
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PutRequest {
    /// Relative to the server's root (`names.rs`).
    pub name: String,
    pub size_bytes: u64,
    pub streams: u32,
    /// Replace an existing file of that name.
    pub overwrite: bool,
    /// Continue from what the partial file of an earlier copy holds (`resume.rs`).
    pub resume: bool,
}

/// A file the server sends from its root.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct GetRequest {
    pub name: String,
    pub streams: u32,
    /// The client continues from what its partial file holds (it sends `Held`).
    pub resume: bool,
}

/// Parses one frame body; the single entry point for untrusted bytes. The parser's message
/// quotes the peer (an unknown type or field by name), so it is escaped and cut.
pub fn decode(body: &[u8]) -> Result<Message, ProtoError> {
    if body.is_empty() {
        return Err(ProtoError::Empty);
    }
    serde_json::from_slice(body).map_err(|e| ProtoError::Malformed(escape::peer(&e.to_string())))
}

pub fn encode(message: &Message) -> Vec<u8> {
    let body = serde_json::to_vec(message).expect("messages are plain data");
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_be_bytes());
    frame.extend_from_slice(&body);
    frame
}

pub fn send(stream: &mut TcpStream, message: &Message) -> Result<(), ProtoError> {
    stream.write_all(&encode(message))?;
    Ok(())
}

/// Reads one whole frame before `deadline`, refusing lengths above `limit_bytes`.
pub fn receive(
    stream: &mut TcpStream,
    limit_bytes: usize,
    deadline: Instant,
    waiting_for: &'static str,
) -> Result<Message, ProtoError> {
    let mut header = [0u8; 4];
    read_before(stream, &mut header, deadline, waiting_for)?;
    let length_bytes = u32::from_be_bytes(header) as usize;
    if length_bytes > limit_bytes {
        return Err(ProtoError::TooLong {
            length_bytes: length_bytes as u64,
            limit_bytes,
        });
    }
    let mut body = vec![0u8; length_bytes];
    read_before(stream, &mut body, deadline, waiting_for)?;
    decode(&body)
}

/// `read_exact` with one deadline for the whole buffer, not per read: a peer that trickles a
/// byte at a time still runs out of time.
fn read_before(
    stream: &mut TcpStream,
    buf: &mut [u8],
    deadline: Instant,
    waiting_for: &'static str,
) -> Result<(), ProtoError> {
    let mut filled = 0;
    while filled < buf.len() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(ProtoError::Timeout(waiting_for));
        }
        stream.set_read_timeout(Some(left.max(Duration::from_millis(1))))?;
        match stream.read(&mut buf[filled..]) {
            Ok(0) => return Err(ProtoError::Closed),
            Ok(n) => filled += n,
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return Err(ProtoError::Timeout(waiting_for))
            }
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn sample_request() -> Message {
        Message::StartTcp(TcpRequest {
            streams: 8,
            duration_ns: Some(10_000_000_000),
            bytes: None,
            reverse: false,
            cc: Some("cubic".into()),
            window_bytes: Some(1 << 20),
            mss_bytes: None,
            pacing_bps: None,
            sample_interval_ns: 10_000_000,
        })
    }

    /// One valid message of each kind a server parses from a client.
    fn sample_messages() -> [Message; 4] {
        let put = Message::StartPut(PutRequest {
            name: "in/data.bin".into(),
            size_bytes: 1 << 30,
            streams: 4,
            overwrite: false,
            resume: false,
        });
        let digest = RangeDigest {
            bytes: 4096,
            sha256: "ab".repeat(32),
            last_byte_ns: Some(1),
        };
        let sent = Message::Sent {
            ranges: vec![digest; 2],
        };
        [sample_request(), put, sent, sample_results()]
    }

    /// A server's results with what a diagnosis reads: a TCP_INFO sample and the CPU report
    /// (a quota interval, the other processes).
    fn sample_results() -> Message {
        use crate::cpu::{CpuInterval, CpuReport, QuotaInterval};
        use crate::other_processes::OtherProcess;
        use crate::sys::TcpInfoReading;
        let reading = TcpInfoReading {
            len_bytes: std::mem::size_of::<crate::sys::TcpInfo>(),
            ..Default::default()
        };
        let cpu = CpuReport {
            interval_ns: 250_000_000,
            intervals: vec![CpuInterval {
                quota: QuotaInterval {
                    quota_cores: Some(0.5),
                    quota_used: Some(1.0),
                    throttled_periods: Some(0.9),
                },
                ..Default::default()
            }],
            cgroup: Some("/sys/fs/cgroup/cpu/x/cpu.stat".into()),
            others: vec![OtherProcess {
                pid: 7,
                command: "hog".into(),
                cores: 0.98,
            }],
            others_scan_cpu_ns: 3_000_000,
            whole_test_quota: QuotaInterval {
                quota_cores: Some(0.5),
                quota_used: Some(0.99),
                throttled_periods: Some(0.8),
            },
        };
        Message::Results(Box::new(crate::report::PeerReport {
            samples: vec![crate::sample::Sample::from_reading(1, 0, &reading)],
            cpu: Some(cpu),
            ..Default::default()
        }))
    }

    #[test]
    fn messages_round_trip() {
        for message in sample_messages() {
            let frame = encode(&message);
            assert_eq!(decode(&frame[4..]).unwrap(), message);
        }
        let hello = Message::Hello {
            version: 1,
            challenge: "ab".into(),
        };
        assert_eq!(decode(&encode(&hello)[4..]).unwrap(), hello);
    }

    #[test]
    fn unknown_fields_wrong_types_and_garbage_are_errors() {
        for body in [
            &br#"{"type":"welcome","extra":1}"#[..],
            br#"{"type":"auth","version":"one","mac":"00"}"#,
            br#"{"type":"nonsense"}"#,
            br#"{"type":"start_tcp","streams":-1}"#,
            br#"{"type":"start_put","name":"x","size_bytes":-1,"streams":1,"overwrite":false}"#,
            br#"{"type":"start_get","name":"x","streams":1,"resume":true,"overwrite":true}"#,
            br#"{"type":"sent","ranges":[{"bytes":1}]}"#,
            br#"{"type":"start_disk","size_bytes":1,"block_bytes":[1],"direct":false,"x":1}"#,
            b"\xff\xfe garbage",
            b"{",
        ] {
            assert!(
                matches!(decode(body), Err(ProtoError::Malformed(_))),
                "{body:?}"
            );
        }
        assert!(matches!(decode(b""), Err(ProtoError::Empty)));
    }

    #[test]
    fn a_parse_error_quoting_the_peer_is_one_short_line() {
        let long = "y".repeat(65_000);
        let body = format!(r#"{{"type":"x\nclient 10.9.9.9:1: FORGED\u001b[2J{long}"}}"#);
        let Err(ProtoError::Malformed(text)) = decode(body.as_bytes()) else {
            panic!("decoded");
        };
        assert!(
            text.starts_with("unknown variant `x\\u{a}client 10.9.9.9:1: FORGED\\u{1b}[2J"),
            "{text}"
        );
        assert!(!text.chars().any(char::is_control), "{text}");
        assert!(
            text.len() <= escape::PEER_TEXT_BYTES + 32,
            "{} bytes",
            text.len()
        );
    }

    /// How many random inputs the fuzz test below feeds the parser; printed so the count
    /// is on record (at least 10^5 cases are asked for).
    const FUZZ_CASES: u32 = 100_000;

    fn arbitrary_json() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("null".to_string()),
            any::<bool>().prop_map(|b| b.to_string()),
            any::<i64>().prop_map(|n| n.to_string()),
            any::<f64>().prop_map(|n| format!("{n:?}")),
            "[a-z_]{0,12}".prop_map(|s| format!("\"{s}\"")),
            prop_oneof![
                Just("\"start_tcp\""),
                Just("\"auth\""),
                Just("\"join\""),
                Just("\"results\""),
                Just("\"hello\""),
                Just("\"start_put\""),
                Just("\"start_get\""),
                Just("\"start_disk\""),
                Just("\"sent\""),
                Just("\"held\""),
                Just("\"received\""),
            ]
            .prop_map(str::to_string),
        ];
        leaf.prop_recursive(4, 32, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..5)
                    .prop_map(|items| format!("[{}]", items.join(","))),
                prop::collection::vec(
                    (
                        prop_oneof![
                            Just("type".to_string()),
                            Just("streams".to_string()),
                            Just("duration_ns".to_string()),
                            Just("mac".to_string()),
                            Just("version".to_string()),
                            Just("name".to_string()),
                            Just("size_bytes".to_string()),
                            Just("ranges".to_string()),
                            Just("sha256".to_string()),
                            "[a-z_]{1,10}"
                        ],
                        inner
                    ),
                    0..6
                )
                .prop_map(|fields| {
                    let body: Vec<String> =
                        fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
                    format!("{{{}}}", body.join(","))
                }),
            ]
        })
    }

    fn hostile_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            prop::collection::vec(any::<u8>(), 0..256),
            arbitrary_json().prop_map(String::into_bytes),
            // A valid message cut short or with a byte flipped.
            (0usize..4, 0usize..200, any::<u8>(), any::<usize>()).prop_map(
                |(which, cut, byte, at)| {
                    let mut frame = encode(&sample_messages()[which])[4..].to_vec();
                    let at = at % frame.len();
                    frame[at] = byte;
                    frame.truncate(cut.min(frame.len()));
                    frame
                }
            ),
        ]
    }

    /// Feeds the parser random bytes, random JSON and mutated valid frames; a panic fails
    /// the test. Counts the cases actually run and prints the count.
    #[test]
    fn fuzz_decode_never_panics() {
        use proptest::test_runner::TestRunner;
        use std::sync::atomic::{AtomicU64, Ordering};
        let cases = AtomicU64::new(0);
        let mut runner = TestRunner::new(ProptestConfig::with_cases(FUZZ_CASES));
        runner
            .run(&hostile_bytes(), |body| {
                cases.fetch_add(1, Ordering::Relaxed);
                // Any outcome but a panic is fine: the server answers an error, goes on.
                let _ = decode(&body);
                Ok(())
            })
            .expect("the parser never panics");
        let cases = cases.into_inner();
        println!("control-message parser fuzz: {cases} cases, zero panics");
        assert!(cases >= u64::from(FUZZ_CASES));
    }
}
