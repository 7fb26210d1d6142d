//! Whether a received file may take its final name: every range complete, and its SHA-256 as
//! read back from disk equal to the sender's.
//!
//! The receiver flushes the file (`fsync`), drops its pages from the page cache and reads
//! every range back, so the comparison covers the network, the receiver's writes and its
//! disk. Only then is the partial file renamed into place; otherwise it is removed.

use std::fs::File;
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::thread;
use std::time::Instant;

use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::datapath::{Counters, BUFFER_BYTES};
use crate::partial::Partial;
use crate::transfer::{self, Range, RangeDigest};

/// The receiver's answer: what is on disk per range, and whether the file was committed.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Verdict {
    pub ranges: Vec<RangeDigest>,
    pub committed: bool,
    /// Why not, when not committed.
    pub problem: Option<String>,
    pub sync_ns: u64,
    pub verify_ns: u64,
}

impl Verdict {
    pub fn failed(problem: String) -> Verdict {
        Verdict {
            problem: Some(problem),
            ..Verdict::default()
        }
    }
}

/// Verifies the received file against the sender's digests and commits it. An incomplete
/// file is kept (hidden) for a resume if `keep_incomplete`, removed otherwise; a corrupt
/// one, or one a disk error hit, is removed. `received` is each range's outcome: the bytes
/// it now holds, or the disk error that ended it.
pub fn settle(
    partial: Partial,
    ranges: &[Range],
    sent: &[RangeDigest],
    received: Vec<std::io::Result<u64>>,
    counters: &[Counters],
    keep_incomplete: bool,
) -> Verdict {
    let bytes: std::io::Result<Vec<u64>> = received.into_iter().collect();
    let verified = bytes
        .map_err(|e| format!("writing the file: {e}"))
        .and_then(|bytes| {
            verify(partial.file(), ranges, &bytes, counters)
                .map_err(|e| format!("verifying the file: {e}"))
        });
    let verification = match verified {
        Ok(v) => v,
        Err(problem) => {
            partial.remove();
            return Verdict::failed(problem);
        }
    };
    let problem = match mismatch(ranges, sent, &verification.digests) {
        None => partial.commit().err().map(|e| e.to_string()),
        Some(Mismatch::Incomplete(problem)) => {
            let held: Vec<u64> = verification.digests.iter().map(|d| d.bytes).collect();
            partial.give_up(keep_incomplete, ranges, &held);
            Some(problem)
        }
        Some(Mismatch::Corrupt(problem)) => {
            partial.remove();
            Some(problem)
        }
    };
    Verdict {
        ranges: verification.digests,
        committed: problem.is_none(),
        problem,
        sync_ns: verification.sync_ns,
        verify_ns: verification.verify_ns,
    }
}

/// What reads back from disk, and how long flushing and reading took.
struct Verification {
    sync_ns: u64,
    verify_ns: u64,
    digests: Vec<RangeDigest>,
}

/// Flushes `file` to disk, drops its pages from the cache, and hashes the first `bytes[i]`
/// bytes of each range as they now read back (one thread per range).
fn verify(
    file: &File,
    ranges: &[Range],
    received: &[u64],
    counters: &[Counters],
) -> std::io::Result<Verification> {
    let started = Instant::now();
    // The file ends where the last range does (a partial file resumed may have been longer).
    let size_bytes = ranges.last().map_or(0, |r| r.offset_bytes + r.length_bytes);
    file.set_len(size_bytes)?;
    file.sync_all()?;
    let sync_ns = started.elapsed().as_nanos() as u64;
    // Advice only: a file system that keeps no page cache (tmpfs) reads from memory anyway.
    let _ = posix_fadvise(file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED);
    let digests = thread::scope(|scope| {
        let handles: Vec<_> = ranges
            .iter()
            .zip(received)
            .zip(counters)
            .map(|((range, bytes), counters)| {
                scope.spawn(move || read_back(file, range.offset_bytes, *bytes, counters))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| Err(ErrorKind::Other.into())))
            .collect::<std::io::Result<Vec<_>>>()
    })?;
    Ok(Verification {
        sync_ns,
        verify_ns: started.elapsed().as_nanos() as u64 - sync_ns,
        digests,
    })
}

fn read_back(
    file: &File,
    offset_bytes: u64,
    bytes: u64,
    counters: &Counters,
) -> std::io::Result<RangeDigest> {
    let hash = hash_prefix(file, offset_bytes, bytes)?;
    Ok(transfer::digest(bytes, hash, counters))
}

/// The SHA-256 state after `bytes` bytes of `file` from `offset_bytes`.
pub fn hash_prefix(file: &File, offset_bytes: u64, bytes: u64) -> std::io::Result<Sha256> {
    let mut buffer = vec![0u8; BUFFER_BYTES];
    let mut hash = Sha256::new();
    let mut done_bytes = 0u64;
    while done_bytes < bytes {
        let want = (bytes - done_bytes).min(BUFFER_BYTES as u64) as usize;
        file.read_exact_at(&mut buffer[..want], offset_bytes + done_bytes)?;
        hash.update(&buffer[..want]);
        done_bytes += want as u64;
    }
    Ok(hash)
}

/// Why a received file is not the sent one: bytes missing (the file is kept for
/// `--resume`), or bytes that differ (it is removed).
#[derive(Debug, PartialEq)]
pub enum Mismatch {
    Incomplete(String),
    Corrupt(String),
}

/// The first reason the received file is not the sent one, or None: every range complete
/// and its hash on disk equal to the sender's.
pub fn mismatch(
    ranges: &[Range],
    sent: &[RangeDigest],
    on_disk: &[RangeDigest],
) -> Option<Mismatch> {
    if sent.len() != ranges.len() || on_disk.len() != ranges.len() {
        return Some(Mismatch::Incomplete(format!(
            "{} ranges expected, the sender reported {} and the receiver {}",
            ranges.len(),
            sent.len(),
            on_disk.len()
        )));
    }
    for (i, ((range, sent), got)) in ranges.iter().zip(sent).zip(on_disk).enumerate() {
        if got.bytes != range.length_bytes || sent.bytes != range.length_bytes {
            return Some(Mismatch::Incomplete(format!(
                "incomplete: range {i} ({} bytes at offset {}): {} bytes sent, {} arrived",
                range.length_bytes, range.offset_bytes, sent.bytes, got.bytes
            )));
        }
        if got.sha256 != sent.sha256 {
            return Some(Mismatch::Corrupt(format!(
                "checksum mismatch in range {i} ({} bytes at offset {}): sent SHA-256 {}, on disk {}",
                range.length_bytes, range.offset_bytes, sent.sha256, got.sha256
            )));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::auth;
    use crate::transfer::split;

    fn digest_of(bytes: &[u8]) -> RangeDigest {
        RangeDigest {
            bytes: bytes.len() as u64,
            sha256: auth::to_hex(&Sha256::digest(bytes)),
            last_byte_ns: None,
        }
    }

    #[test]
    fn mismatch_names_the_incomplete_or_corrupted_range() {
        let ranges = split(8192, 2);
        let a = digest_of(&[1u8; 4096]);
        let b = digest_of(&[2u8; 4096]);
        assert_eq!(
            mismatch(&ranges, &[a.clone(), b.clone()], &[a.clone(), b.clone()]),
            None
        );
        let corrupt = mismatch(&ranges, &[a.clone(), b.clone()], &[a.clone(), a.clone()]);
        assert!(
            matches!(corrupt, Some(Mismatch::Corrupt(p)) if p.starts_with("checksum mismatch in range 1"))
        );
        let short = digest_of(&[2u8; 100]);
        let incomplete = mismatch(&ranges, &[a.clone(), b.clone()], &[a.clone(), short]);
        assert!(
            matches!(incomplete, Some(Mismatch::Incomplete(p)) if p.contains("range 1 (4096 bytes at offset 4096)"))
        );
        let unreported = mismatch(&ranges, std::slice::from_ref(&a), &[a.clone(), b]);
        assert!(matches!(unreported, Some(Mismatch::Incomplete(_))));
    }
}
