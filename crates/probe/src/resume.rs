//! Resuming a copy from what its partial file already holds.
//!
//! The receiver finds, per range, the data before the first hole (`SEEK_HOLE`) and leaves
//! out the last block, which may be half written; it hashes that prefix as it reads back
//! and tells the sender (`held`). The sender hashes the same prefix of its file; equal
//! hashes let the range continue after it, any difference refuses the resume. The final
//! verification covers every range from its first byte, prefix included.

use std::fs::File;

use nix::errno::Errno;
use nix::unistd::{lseek, Whence};

use crate::auth;
use crate::error::{ProbeError, Result};
use crate::transfer::{Range, RangeDigest, Start, ALIGN_BYTES};
use crate::verify::hash_prefix;

/// What each range of the partial file already holds, with the SHA-256 of those bytes.
pub fn held(file: &File, ranges: &[Range]) -> std::io::Result<Vec<RangeDigest>> {
    ranges
        .iter()
        .map(|range| {
            let bytes = held_bytes(file, range)?;
            let hash = hash_prefix(file, range.offset_bytes, bytes)?;
            Ok(RangeDigest {
                bytes,
                sha256: auth::to_hex(&sha2::Digest::finalize(hash)),
                last_byte_ns: None,
            })
        })
        .collect()
}

/// Whole blocks of data from the range's start, less the last block seen, which may hold
/// the end of a write cut short.
fn held_bytes(file: &File, range: &Range) -> std::io::Result<u64> {
    let offset = i64::try_from(range.offset_bytes).map_err(std::io::Error::other)?;
    let hole = match lseek(file, offset, Whence::SeekHole) {
        Ok(at) => at as u64,
        // At or past the end of the file: nothing held.
        Err(Errno::ENXIO) => range.offset_bytes,
        Err(e) => return Err(e.into()),
    };
    let data_bytes = hole
        .saturating_sub(range.offset_bytes)
        .min(range.length_bytes);
    Ok(data_bytes.saturating_sub(ALIGN_BYTES) / ALIGN_BYTES * ALIGN_BYTES)
}

/// The sender's check of what the receiver holds: where each range starts again, or a
/// refusal naming the first range whose prefix is not the source's.
pub fn starts(file: &File, ranges: &[Range], held: &[RangeDigest]) -> Result<Vec<Start>> {
    if held.len() != ranges.len() {
        let reason = format!("{} ranges held, {} expected", held.len(), ranges.len());
        return Err(ProbeError::invalid("resume", held.len(), reason));
    }
    ranges
        .iter()
        .zip(held)
        .enumerate()
        .map(|(i, (range, held))| {
            let refuse = |reason: String| ProbeError::invalid("resume", format!("range {i}"), reason);
            if held.bytes > range.length_bytes {
                return Err(refuse(format!("holds {} bytes of {}", held.bytes, range.length_bytes)));
            }
            let hash = hash_prefix(file, range.offset_bytes, held.bytes)
                .map_err(|e| ProbeError::io("reading the source", e))?;
            if auth::to_hex(&sha2::Digest::finalize(hash.clone())) != held.sha256 {
                return Err(refuse(format!(
                    "the partial file's first {} bytes are not the source's; copy again without --resume",
                    held.bytes
                )));
            }
            Ok(Start {
                bytes: held.bytes,
                hash,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transfer::split;
    use std::os::unix::fs::FileExt;

    fn scratch(name: &str) -> File {
        let path =
            std::env::temp_dir().join(format!("tcpeval-resume-{}-{name}", std::process::id()));
        let file = File::options()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(&path)
            .unwrap();
        std::fs::remove_file(&path).unwrap();
        file
    }

    #[test]
    fn a_range_holds_its_whole_blocks_before_the_first_hole_less_one() {
        let file = scratch("held");
        let ranges = split(4 << 20, 2);
        // Range 0: 10 000 bytes written from its start; range 1: nothing.
        file.write_all_at(&[7u8; 10_000], 0).unwrap();
        file.set_len(4 << 20).unwrap();
        let held = held(&file, &ranges).unwrap();
        // Blocks 0..3 have data (10 000 bytes end in the third); the third is left out.
        assert_eq!(held[0].bytes, 2 * ALIGN_BYTES);
        assert_eq!(held[1].bytes, 0);
        let starts = starts(&file, &ranges, &held).unwrap();
        assert_eq!(starts[0].bytes, 8192);
        // A source that differs in the held prefix is refused, naming the range.
        let other = scratch("other");
        other.write_all_at(&[8u8; 10_000], 0).unwrap();
        let err = super::starts(&other, &ranges, &held)
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.starts_with("resume: 'range 0' the partial file's first 8192 bytes"),
            "{err}"
        );
    }
}
