//! Socket settings a test asks for, applied with socket2 and read back from the kernel.
//!
//! The kernel may grant less than asked: `SO_SNDBUF`/`SO_RCVBUF` are capped by
//! `net.core.wmem_max`/`rmem_max` and reported doubled (socket(7): the kernel keeps room for
//! its bookkeeping), `TCP_MAXSEG` is clamped by the path. What was granted is recorded next
//! to what was asked and every shortfall becomes a warning.

use std::fs;
use std::os::fd::AsFd;

use serde::{Deserialize, Serialize};
use socket2::Socket;

use crate::error::{ProbeError, Result};
use crate::sys;

const AVAILABLE_CC: &str = "/proc/sys/net/ipv4/tcp_available_congestion_control";

/// What the user asked for one socket; `None` leaves the kernel's default (and autotuning).
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Asked {
    pub cc: Option<String>,
    pub window_bytes: Option<u64>,
    pub mss_bytes: Option<u32>,
    pub pacing_bps: Option<u64>,
}

/// What the kernel reports back for one connected socket.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
pub struct Granted {
    pub cc: String,
    /// `SO_SNDBUF` as read back, halved to be comparable with what was asked.
    pub sndbuf_bytes: u64,
    pub rcvbuf_bytes: u64,
    pub mss_bytes: u32,
    /// `SO_MAX_PACING_RATE` in bits/s; None means unlimited.
    pub max_pacing_bps: Option<u64>,
}

pub fn available_cc() -> Vec<String> {
    fs::read_to_string(AVAILABLE_CC)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Refuses a congestion control the kernel does not offer, naming the ones it does.
pub fn check_cc(name: &str) -> Result<()> {
    let available = available_cc();
    if available.iter().any(|cc| cc == name) {
        return Ok(());
    }
    Err(ProbeError::UnknownCc {
        name: name.to_string(),
        available: available.join(" "),
    })
}

/// Settings that must be in place before the handshake (window scale and MSS are negotiated
/// in the SYN; RFC 7323 §2.2), so they go on the socket before `connect` or `listen`.
pub fn apply_before_handshake(socket: &Socket, asked: &Asked) -> Result<()> {
    if let Some(cc) = &asked.cc {
        check_cc(cc)?;
        socket
            .set_tcp_congestion(cc.as_bytes())
            .map_err(|e| ProbeError::io(format!("TCP_CONGESTION '{cc}'"), e))?;
    }
    if let Some(window) = asked.window_bytes {
        let size = usize::try_from(window)
            .map_err(|_| ProbeError::invalid("window", window, "is too large"))?;
        socket
            .set_send_buffer_size(size)
            .map_err(|e| ProbeError::io("SO_SNDBUF", e))?;
        socket
            .set_recv_buffer_size(size)
            .map_err(|e| ProbeError::io("SO_RCVBUF", e))?;
    }
    if let Some(mss) = asked.mss_bytes {
        socket
            .set_tcp_mss(mss)
            .map_err(|e| ProbeError::io(format!("TCP_MAXSEG {mss}"), e))?;
    }
    Ok(())
}

/// Pacing may be set at any time; it caps the rate TCP (or fq) paces this socket at.
pub fn apply_pacing(socket: &Socket, asked: &Asked) -> Result<()> {
    if let Some(bps) = asked.pacing_bps {
        sys::set_max_pacing_rate(socket.as_fd(), bps / 8)
            .map_err(|e| ProbeError::io("SO_MAX_PACING_RATE", e))?;
    }
    Ok(())
}

pub fn read_granted(socket: &Socket) -> Result<Granted> {
    let io = |what: &'static str| move |e| ProbeError::io(what, e);
    let cc = socket.tcp_congestion().map_err(io("TCP_CONGESTION"))?;
    let cc = String::from_utf8_lossy(&cc)
        .trim_end_matches('\0')
        .to_string();
    let pacing_bytes_per_s =
        sys::max_pacing_rate(socket.as_fd()).map_err(io("SO_MAX_PACING_RATE"))?;
    let unlimited = pacing_bytes_per_s == u64::MAX || pacing_bytes_per_s == u32::MAX as u64;
    Ok(Granted {
        cc,
        sndbuf_bytes: socket.send_buffer_size().map_err(io("SO_SNDBUF"))? as u64 / 2,
        rcvbuf_bytes: socket.recv_buffer_size().map_err(io("SO_RCVBUF"))? as u64 / 2,
        mss_bytes: socket.tcp_mss().map_err(io("TCP_MAXSEG"))?,
        max_pacing_bps: (!unlimited).then(|| pacing_bytes_per_s.saturating_mul(8)),
    })
}

/// One line per setting the kernel did not grant as asked.
pub fn shortfalls(stream: u32, asked: &Asked, granted: &Granted) -> Vec<String> {
    let mut warnings = Vec::new();
    if let Some(window) = asked.window_bytes {
        if granted.sndbuf_bytes < window {
            warnings.push(format!(
                "stream {stream}: SO_SNDBUF {window} bytes asked, {} granted (capped by net.core.wmem_max)",
                granted.sndbuf_bytes
            ));
        }
        if granted.rcvbuf_bytes < window {
            warnings.push(format!(
                "stream {stream}: SO_RCVBUF {window} bytes asked, {} granted (capped by net.core.rmem_max)",
                granted.rcvbuf_bytes
            ));
        }
    }
    if let Some(mss) = asked.mss_bytes {
        if granted.mss_bytes != mss {
            warnings.push(format!(
                "stream {stream}: MSS {mss} bytes asked, {} in use (clamped by the path or peer)",
                granted.mss_bytes
            ));
        }
    }
    if let Some(cc) = &asked.cc {
        if &granted.cc != cc {
            warnings.push(format!(
                "stream {stream}: cc {cc} asked, {} in use",
                granted.cc
            ));
        }
    }
    if let (Some(asked_bps), Some(granted_bps)) = (asked.pacing_bps, granted.max_pacing_bps) {
        if granted_bps + 8 < asked_bps {
            warnings.push(format!(
                "stream {stream}: pacing {asked_bps} bit/s asked, {granted_bps} granted"
            ));
        }
    }
    warnings
}

#[cfg(test)]
mod tests {
    use super::*;
    use socket2::{Domain, Protocol, Type};

    fn tcp_socket() -> Socket {
        Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)).unwrap()
    }

    #[test]
    fn unknown_cc_names_it_and_lists_the_available_ones() {
        let err = check_cc("no-such-cc").unwrap_err().to_string();
        assert!(err.contains("'no-such-cc'"), "{err}");
        assert!(err.contains("reno"), "{err}");
    }

    #[test]
    fn buffers_and_cc_are_applied_and_read_back() {
        let socket = tcp_socket();
        let asked = Asked {
            cc: Some("reno".into()),
            window_bytes: Some(256 * 1024),
            mss_bytes: None,
            pacing_bps: Some(80_000_000),
        };
        apply_before_handshake(&socket, &asked).unwrap();
        apply_pacing(&socket, &asked).unwrap();
        let granted = read_granted(&socket).unwrap();
        assert_eq!(granted.cc, "reno");
        assert_eq!(granted.sndbuf_bytes, 256 * 1024);
        assert_eq!(granted.rcvbuf_bytes, 256 * 1024);
        assert_eq!(granted.max_pacing_bps, Some(80_000_000));
        assert!(shortfalls(0, &asked, &granted).is_empty());
    }

    #[test]
    fn a_capped_buffer_is_a_warning() {
        let asked = Asked {
            window_bytes: Some(64 << 20),
            ..Asked::default()
        };
        let granted = Granted {
            sndbuf_bytes: 4 << 20,
            rcvbuf_bytes: 4 << 20,
            ..Granted::default()
        };
        let warnings = shortfalls(3, &asked, &granted);
        assert_eq!(warnings.len(), 2);
        assert!(warnings[0].contains("wmem_max"), "{warnings:?}");
    }
}
