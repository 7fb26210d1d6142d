//! What a test reports: the server's side (sent back over the control connection) and the
//! run report the client writes to `--out` (docs/probe.md, "Output").

use std::fs;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::cpu::CpuReport;
use crate::error::{ProbeError, Result};
use crate::proto::TcpRequest;
use crate::sample::{self, Sample};
use crate::sockopt::{Asked, Granted};

/// One stream as seen by one end.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct StreamReport {
    pub id: u32,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Times relative to that end's `Begin`.
    pub first_byte_ns: Option<u64>,
    pub last_byte_ns: Option<u64>,
    pub granted: Granted,
    pub final_sample: Option<Sample>,
}

/// One UDP train as the receiver saw it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct TrainReport {
    pub spacing_ns: u64,
    pub sent: u32,
    pub received: u32,
    pub lost: u32,
    /// Datagrams that arrived after one with a higher sequence number.
    pub reordered: u32,
    pub duplicates: u32,
    pub size_bytes: u32,
    /// Receiver's span from first to last arrival.
    pub received_span_ns: u64,
    pub received_rate_bps: f64,
    /// The received rate of the datagrams that arrived in order: one held back by the path
    /// arrives late, stretching the span without saying anything of the bottleneck's rate.
    #[serde(default)]
    pub in_order_rate_bps: f64,
    /// Sender's span from first to last departure (carried in the datagrams).
    pub sent_rate_bps: f64,
    /// RFC 3550 §6.4.1 interarrival jitter at the end of the train.
    pub jitter_ns: f64,
    /// Spread of one-way delay within the train (max − min); clocks need not be synchronised.
    pub owd_variation_ns: u64,
}

/// One request-response exchange, as the server (the responder) saw it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct ResponseStart {
    pub index: u32,
    /// cwnd right after the first segment of the response was handed to TCP, i.e. after
    /// any slow-start restart (RFC 2861 / `tcp_cwnd_restart`).
    pub cwnd_pkts: u32,
    pub ssthresh_pkts: u32,
    pub idle_ns: u64,
    /// The retransmission timeout then: an idle gap longer than it restarts slow start
    /// (RFC 5681 §4.1), so it tells whether a restart was due.
    #[serde(default)]
    pub rto_us: u32,
    #[serde(default)]
    pub mss_bytes: u32,
    /// The window the requester last advertised (`tcpi_snd_wnd`): a response larger than it
    /// waits for the requester's reads, whatever the congestion window.
    #[serde(default)]
    pub peer_window_bytes: Option<u32>,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
pub struct PeerReport {
    pub kernel: String,
    pub streams: Vec<StreamReport>,
    /// The server's TCP_INFO history when it was the sender (reverse tests).
    pub samples: Vec<Sample>,
    pub missed_ticks: u64,
    pub trains: Vec<TrainReport>,
    pub responses: Vec<ResponseStart>,
    pub warnings: Vec<String>,
    /// True when the server ended the test on its own limits.
    pub cut_by_limits: bool,
    /// The server's CPUs during a TCP test.
    #[serde(default)]
    pub cpu: Option<CpuReport>,
}

/// The client's stream: what it asked, what it got, what it moved.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ClientStream {
    pub id: u32,
    pub asked: Asked,
    pub granted: Granted,
    pub bytes_sent: u64,
    pub bytes_received: u64,
    /// Bytes the receiving end counted (the server's count in forward tests).
    pub bytes_delivered: u64,
    pub start_ns: u64,
    pub end_ns: u64,
    pub final_sample: Option<Sample>,
}

/// `summary.json` of a `tcp` run.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct TcpRunReport {
    pub tool: String,
    pub version: String,
    pub mode: String,
    pub server: String,
    pub iperf3: bool,
    pub kernel: String,
    pub request: TcpRequest,
    /// Which end's TCP_INFO is in `samples.csv`: "client" or "server".
    pub sender: String,
    pub interrupted: bool,
    pub wall_ns: u64,
    /// When the streams began, in ns since the Unix epoch: what their times count from, so a
    /// caller running several tests (the lab) can put them on one clock.
    pub start_unix_ns: u64,
    pub duration_ns: u64,
    pub sample_count: u64,
    pub missed_ticks: u64,
    pub warnings: Vec<String>,
    pub streams: Vec<ClientStream>,
    pub peer: Option<PeerReport>,
    /// This end's CPUs during the test (the server's are in `peer`).
    pub cpu: Option<CpuReport>,
    /// Extra figures a mode reports (iperf3's own numbers in `--iperf3` mode).
    pub extra: serde_json::Value,
}

pub fn unix_now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

pub fn kernel_release() -> String {
    fs::read_to_string("/proc/sys/kernel/osrelease")
        .map(|s| s.trim().to_string())
        .unwrap_or_default()
}

pub fn write_json<T: Serialize>(dir: &Path, name: &str, value: &T) -> Result<()> {
    write_json_file(&dir.join(name), value)
}

/// Writes `value` as JSON to the file `path`, atomically.
pub fn write_json_file<T: Serialize>(path: &Path, value: &T) -> Result<()> {
    let name = file_name(path)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let text = serde_json::to_string_pretty(value).expect("reports are plain data");
    write_atomically(dir, name, text.as_bytes())
}

/// The file name of an `--out FILE`: checked before a run, not after it.
pub fn file_name(path: &Path) -> Result<&str> {
    path.file_name()
        .and_then(|n| n.to_str())
        .ok_or_else(|| ProbeError::invalid("out", path.display(), "must name a file"))
}

pub fn write_samples(dir: &Path, name: &str, samples: &[Sample]) -> Result<()> {
    write_atomically(dir, name, sample::to_csv(samples).as_bytes())
}

/// Writes beside the target and renames, so a reader never sees half a file.
fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> Result<()> {
    fs::create_dir_all(dir)
        .map_err(|e| ProbeError::io(format!("creating {}", dir.display()), e))?;
    let tmp = dir.join(format!(".{name}.tmp"));
    let target = dir.join(name);
    fs::write(&tmp, bytes).map_err(|e| ProbeError::io(format!("writing {}", tmp.display()), e))?;
    fs::rename(&tmp, &target)
        .map_err(|e| ProbeError::io(format!("writing {}", target.display()), e))
}
