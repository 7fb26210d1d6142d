//! What can go wrong between a scenario's `cc` table and a stack registered in the kernel,
//! each naming what is at fault.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum BpfError {
    #[error("cc: '{name}' is not a BPF stack of tcpeval (its BPF stacks: {known})")]
    UnknownStack { name: String, known: String },
    #[error("cc.{field}: {value} {reason}")]
    Param {
        field: String,
        value: String,
        reason: String,
    },
    #[error("name: '{0}' is not a congestion-control name (1–15 of a–z, 0–9, '_')")]
    Name(String),
    #[error("a congestion control named '{0}' is already registered in this kernel")]
    Registered(String),
    #[error("this kernel cannot run BPF congestion controls: {0}")]
    Unsupported(String),
    #[error("{what}: {source}")]
    Libbpf {
        what: &'static str,
        source: libbpf_rs::Error,
    },
    #[error("{what}: {source}")]
    Io {
        what: &'static str,
        source: std::io::Error,
    },
}

impl BpfError {
    pub fn libbpf(what: &'static str) -> impl FnOnce(libbpf_rs::Error) -> Self {
        move |source| Self::Libbpf { what, source }
    }
}

pub type Result<T> = std::result::Result<T, BpfError>;
