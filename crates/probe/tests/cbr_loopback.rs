//! `cbr` and `cbr-sink` as the lab runs them: two processes of the built binary, real
//! sockets, over loopback.

use std::fs;
use std::io::{BufRead, BufReader};
use std::net::UdpSocket;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};

use serde_json::Value;

const PROBE: &str = env!("CARGO_BIN_EXE_tcpeval-probe");
const RATE_BPS: f64 = 10e6;
const TOLERANCE: f64 = 0.05;

/// A fresh directory per test, removed when it ends (passing or not).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("tcpeval-cbr-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }

    fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

/// Starts a sink on an ephemeral loopback port; returns it and the address it printed.
fn start_sink(duration_ms: u64, out: &Path) -> (Child, String) {
    let mut sink = Command::new(PROBE)
        .args(["cbr-sink", "--listen", "127.0.0.1:0", "--duration-ms"])
        .arg(duration_ms.to_string())
        .arg("--out")
        .arg(out)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(sink.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let addr = line.trim().strip_prefix("listening on ").unwrap();
    assert!(!addr.ends_with(":0"), "the actual port is printed: {line}");
    (sink, addr.to_string())
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&fs::read_to_string(path).unwrap()).unwrap()
}

fn number(report: &Value, field: &str) -> f64 {
    report[field]
        .as_f64()
        .unwrap_or_else(|| panic!("{field} in {report}"))
}

#[test]
fn ten_megabits_for_one_second_arrive_whole_and_on_rate() {
    let scratch = Scratch::new("rate");
    let (mut sink, addr) = start_sink(1500, &scratch.path("sink.json"));
    // Not ours: too short, then long enough but without the magic.
    let stranger = UdpSocket::bind("127.0.0.1:0").unwrap();
    stranger.send_to(b"hello", &addr).unwrap();
    stranger.send_to(&[0u8; 100], &addr).unwrap();
    let sender = Command::new(PROBE)
        .args(["cbr", "--to", &addr, "--rate-bps", "10000000"])
        .args(["--size-bytes", "1472", "--duration-ms", "1000", "--out"])
        .arg(scratch.path("cbr.json"))
        .status()
        .unwrap();
    assert!(sender.success(), "{sender}");
    let status = sink.wait().unwrap();
    assert!(status.success(), "{status}");

    let sent = json(&scratch.path("cbr.json"));
    let got = json(&scratch.path("sink.json"));
    // 1472 + 28 bytes at 10 Mb/s: one every 1.2 ms, 834 slots start within the second (a
    // stalled sender may skip a few rather than burst).
    let pkts = number(&sent, "sent_pkts");
    assert_eq!(pkts + number(&sent, "skipped_slots"), 834.0, "{sent}");
    assert_eq!(number(&sent, "sent_bytes"), pkts * 1472.0);
    assert_eq!(number(&sent, "send_errors"), 0.0);
    assert_eq!(
        number(&got, "received_pkts"),
        number(&sent, "sent_pkts"),
        "{got}"
    );
    assert_eq!(number(&got, "received_bytes"), number(&sent, "sent_bytes"));
    for field in ["lost_pkts", "reordered_pkts", "duplicates"] {
        assert_eq!(number(&got, field), 0.0, "{field}: {got}");
    }
    assert_eq!(number(&got, "foreign_pkts"), 2.0, "{got}");
    for rate in [number(&got, "rate_bps"), number(&sent, "achieved_rate_bps")] {
        assert!(
            (rate / RATE_BPS - 1.0).abs() < TOLERANCE,
            "{rate} b/s, sender {sent}, sink {got}"
        );
    }
    let span_ns = number(&got, "last_ns") - number(&got, "first_ns");
    assert!((0.95e9..1.05e9).contains(&span_ns), "{span_ns} ns");
}

#[test]
fn sigterm_stops_the_sink_and_it_still_writes_its_report() {
    let scratch = Scratch::new("term");
    let (sink, _) = start_sink(60_000, &scratch.path("sink.json"));
    let kill = Command::new("kill")
        .args(["-TERM", &sink.id().to_string()])
        .status()
        .unwrap();
    assert!(kill.success());
    let output = sink.wait_with_output().unwrap();
    assert_eq!(output.status.code(), Some(130));
    let report = json(&scratch.path("sink.json"));
    assert_eq!(report["interrupted"], true);
    assert_eq!(report["received_pkts"], 0);
    assert!(report["first_ns"].is_null());
}

fn run(args: &[&str]) -> Output {
    Command::new(PROBE).args(args).output().unwrap()
}

#[test]
fn bad_flags_are_one_line_naming_flag_and_value_with_exit_2() {
    let cases: [(&[&str], &str); 5] = [
        (&["--rate-bps", "999"], "rate_bps: '999'"),
        (&["--rate-bps", "10000000001"], "rate_bps: '10000000001'"),
        (&["--size-bytes", "27"], "size_bytes: '27'"),
        (&["--size-bytes", "65508"], "size_bytes: '65508'"),
        (&["--duration-ms", "0"], "duration_ms: '0'"),
    ];
    for (bad, want) in cases {
        let mut args = vec!["cbr", "--to", "127.0.0.1:9", "--out", "/nonexistent/x.json"];
        let defaults = [("--rate-bps", "1000000"), ("--duration-ms", "10")];
        for (flag, value) in defaults.iter().filter(|(f, _)| !bad.contains(f)) {
            args.extend([*flag, *value]);
        }
        args.extend(bad);
        let output = run(&args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.starts_with(&format!("error: {want}")), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    let output = run(&[
        "cbr-sink",
        "--listen",
        "127.0.0.1:0",
        "--duration-ms",
        "0",
        "--out",
        "x.json",
    ]);
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).starts_with("error: duration_ms: '0'"));
}
