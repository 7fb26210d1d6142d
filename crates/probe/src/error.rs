//! Every failure the probe reports, as one typed enum; `main` prints it as one line.

use std::io;

#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// A user setting that cannot be honoured: names the field and the value.
    #[error("{field}: '{value}' {reason}")]
    Invalid {
        field: &'static str,
        value: String,
        reason: String,
    },
    #[error("congestion control '{name}' is not available in this kernel; available: {available} (net.ipv4.tcp_available_congestion_control)")]
    UnknownCc { name: String, available: String },
    #[error("secret file '{path}': {reason}")]
    Secret { path: String, reason: String },
    #[error("control protocol: {0}")]
    Protocol(#[from] ProtoError),
    #[error("server refused: {0}")]
    Refused(String),
    #[error("server rejected {field}: '{value}' {reason}")]
    Rejected {
        field: String,
        value: String,
        reason: String,
    },
    /// A copy that did not reach its final name; the reason names the range.
    #[error("copy not committed: {0}")]
    Copy(String),
    #[error("iperf3 server: {0}")]
    Iperf3(String),
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl ProbeError {
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        ProbeError::Io {
            context: context.into(),
            source,
        }
    }

    pub fn invalid(field: &'static str, value: impl ToString, reason: impl Into<String>) -> Self {
        ProbeError::Invalid {
            field,
            value: value.to_string(),
            reason: reason.into(),
        }
    }
}

/// What can go wrong reading or writing one control frame.
#[derive(Debug, thiserror::Error)]
pub enum ProtoError {
    #[error("frame length {length_bytes} bytes exceeds the limit of {limit_bytes} bytes")]
    TooLong {
        length_bytes: u64,
        limit_bytes: usize,
    },
    #[error("empty frame")]
    Empty,
    #[error("malformed message: {0}")]
    Malformed(String),
    #[error("peer speaks protocol version {got}, this build speaks {want}")]
    Version { got: u32, want: u32 },
    #[error("unexpected message '{got}' while waiting for {want}")]
    Unexpected { got: String, want: &'static str },
    #[error("timed out waiting for {0}")]
    Timeout(&'static str),
    #[error("connection closed by peer")]
    Closed,
    #[error("i/o: {0}")]
    Io(#[from] io::Error),
}

pub type Result<T> = std::result::Result<T, ProbeError>;
