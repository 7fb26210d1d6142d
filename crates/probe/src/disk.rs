//! Sequential write and read rates of a file system: the disk's, not the page cache's.
//!
//! Each pass writes a fresh file of `size_bytes` in blocks of one size, syncs it (the write
//! rate includes the flush: until then nothing reached the disk), drops its pages from the
//! cache, and reads it back. Buffered passes go through the page cache as a copy program does;
//! direct passes (`O_DIRECT`) bypass it, as bbcp's and GridFTP's direct modes do. The file is
//! removed after the pass, on errors and on Ctrl-C too.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use nix::fcntl::{posix_fadvise, PosixFadviseAdvice};
use serde::{Deserialize, Serialize};

use crate::error::{ProbeError, Result};

/// Direct I/O moves whole logical blocks from aligned memory; 4 KiB covers every disk.
const DIRECT_ALIGN_BYTES: usize = 4096;
pub const MIN_BLOCK_BYTES: u64 = 512;
pub const MAX_BLOCK_BYTES: u64 = 1 << 30;
pub const MIN_SIZE_BYTES: u64 = 1 << 20;

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct DiskRequest {
    pub size_bytes: u64,
    pub block_bytes: Vec<u64>,
    /// Also run each block size with O_DIRECT.
    pub direct: bool,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct DiskPass {
    pub block_bytes: u64,
    pub direct: bool,
    pub bytes: u64,
    /// Writing and syncing.
    pub write_ns: u64,
    pub read_ns: u64,
    pub write_bps: f64,
    pub read_bps: f64,
}

#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct DiskReport {
    pub path: String,
    pub size_bytes: u64,
    pub passes: Vec<DiskPass>,
    pub interrupted: bool,
}

/// Checks a request before any byte is written; `free_bytes` is what the file system has.
pub fn validate(request: &DiskRequest, free_bytes: u64) -> Result<()> {
    if request.block_bytes.is_empty() || request.block_bytes.len() > 32 {
        let count = request.block_bytes.len();
        return Err(ProbeError::invalid(
            "block",
            count,
            "must list 1 to 32 block sizes",
        ));
    }
    for &block in &request.block_bytes {
        if !(MIN_BLOCK_BYTES..=MAX_BLOCK_BYTES).contains(&block) {
            return Err(ProbeError::invalid(
                "block",
                block,
                "must be 512 B to 1 GiB",
            ));
        }
        if request.direct && block % DIRECT_ALIGN_BYTES as u64 != 0 {
            return Err(ProbeError::invalid(
                "block",
                block,
                "must be a multiple of 4096 B for direct I/O",
            ));
        }
        if block > request.size_bytes {
            return Err(ProbeError::invalid(
                "block",
                block,
                "is larger than the size",
            ));
        }
    }
    if request.size_bytes < MIN_SIZE_BYTES {
        return Err(ProbeError::invalid(
            "size",
            request.size_bytes,
            "must be at least 1 MiB",
        ));
    }
    // Leave a tenth of the free space to others: a full disk harms more than this test.
    if request.size_bytes > free_bytes / 10 * 9 {
        let reason = format!("leaves too little of the {free_bytes} B free on the file system");
        return Err(ProbeError::invalid("size", request.size_bytes, reason));
    }
    Ok(())
}

/// Runs every pass in `dir`, buffered first, stopping early (and saying so) on `interrupted`.
pub fn measure(dir: &Path, request: &DiskRequest, interrupted: &AtomicBool) -> Result<DiskReport> {
    let stat = nix::sys::statvfs::statvfs(dir)
        .map_err(|e| ProbeError::io(format!("reading {}", dir.display()), e.into()))?;
    validate(
        request,
        stat.blocks_available() as u64 * stat.fragment_size() as u64,
    )?;
    let modes: &[bool] = if request.direct {
        &[false, true]
    } else {
        &[false]
    };
    let mut passes = Vec::new();
    for &block_bytes in &request.block_bytes {
        for &direct in modes {
            if interrupted.load(Ordering::Relaxed) {
                break;
            }
            let file = ScratchFile::new(dir)?;
            passes.extend(one_pass(
                &file.path,
                request.size_bytes,
                block_bytes,
                direct,
                interrupted,
            )?);
        }
    }
    Ok(DiskReport {
        path: dir.display().to_string(),
        size_bytes: request.size_bytes,
        passes,
        interrupted: interrupted.load(Ordering::Relaxed),
    })
}

/// One write-then-read pass; `None` when interrupted.
fn one_pass(
    path: &Path,
    size_bytes: u64,
    block_bytes: u64,
    direct: bool,
    interrupted: &AtomicBool,
) -> Result<Option<DiskPass>> {
    let mut buffer = AlignedBuffer::new(block_bytes as usize);
    random_fill(buffer.as_mut())?;
    let blocks = size_bytes.div_ceil(block_bytes);
    let started = Instant::now();
    let mut file = open(path, direct, true)?;
    for index in 0..blocks {
        if interrupted.load(Ordering::Relaxed) {
            return Ok(None);
        }
        // Each block differs, so no file system can store the file as one repeated block.
        buffer.as_mut()[..8].copy_from_slice(&index.to_le_bytes());
        file.write_all(buffer.as_mut())
            .map_err(|e| io_error("writing", path, e))?;
    }
    file.sync_all().map_err(|e| io_error("syncing", path, e))?;
    let write_ns = started.elapsed().as_nanos() as u64;
    // Clean pages after the sync: dropping them makes the read come from the disk.
    posix_fadvise(&file, 0, 0, PosixFadviseAdvice::POSIX_FADV_DONTNEED)
        .map_err(|e| io_error("dropping the cache of", path, e.into()))?;
    drop(file);
    let started = Instant::now();
    let mut file = open(path, direct, false)?;
    let mut read_bytes = 0u64;
    loop {
        if interrupted.load(Ordering::Relaxed) {
            return Ok(None);
        }
        match file.read(buffer.as_mut()) {
            Ok(0) => break,
            Ok(n) => read_bytes += n as u64,
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) => return Err(io_error("reading", path, e)),
        }
    }
    let read_ns = started.elapsed().as_nanos() as u64;
    let bytes = blocks * block_bytes;
    Ok(Some(DiskPass {
        block_bytes,
        direct,
        bytes,
        write_ns,
        read_ns,
        write_bps: bytes as f64 * 8e9 / write_ns.max(1) as f64,
        read_bps: read_bytes as f64 * 8e9 / read_ns.max(1) as f64,
    }))
}

fn open(path: &Path, direct: bool, write: bool) -> Result<File> {
    let mut options = OpenOptions::new();
    options.read(!write).write(write);
    if direct {
        options.custom_flags(libc::O_DIRECT);
    }
    options.open(path).map_err(|e| {
        if direct && e.raw_os_error() == Some(libc::EINVAL) {
            ProbeError::invalid(
                "direct",
                path.display(),
                "this file system does not support direct I/O",
            )
        } else {
            io_error("opening", path, e)
        }
    })
}

fn random_fill(buffer: &mut [u8]) -> Result<()> {
    getrandom::fill(buffer).map_err(|e| {
        let code = e.raw_os_error().unwrap_or(libc::EIO);
        ProbeError::io(
            "reading the kernel's random source",
            std::io::Error::from_raw_os_error(code),
        )
    })
}

fn io_error(doing: &str, path: &Path, e: std::io::Error) -> ProbeError {
    ProbeError::io(format!("{doing} {}", path.display()), e)
}

/// A new file of our own in the directory, removed when dropped.
struct ScratchFile {
    path: PathBuf,
}

impl ScratchFile {
    fn new(dir: &Path) -> Result<Self> {
        let mut tag = [0u8; 8];
        random_fill(&mut tag)?;
        let path = dir.join(format!(".tcpeval-disk-{:016x}", u64::from_le_bytes(tag)));
        OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(|e| io_error("creating", &path, e))?;
        Ok(ScratchFile { path })
    }
}

impl Drop for ScratchFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

/// A block of memory aligned for direct I/O, without unsafe code: a slightly larger vector
/// and the aligned window inside it.
struct AlignedBuffer {
    storage: Vec<u8>,
    offset: usize,
    len: usize,
}

impl AlignedBuffer {
    fn new(len: usize) -> Self {
        let storage = vec![0u8; len + DIRECT_ALIGN_BYTES];
        let offset = storage.as_ptr().align_offset(DIRECT_ALIGN_BYTES);
        AlignedBuffer {
            storage,
            offset,
            len,
        }
    }

    fn as_mut(&mut self) -> &mut [u8] {
        &mut self.storage[self.offset..self.offset + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(size_bytes: u64, block_bytes: Vec<u64>, direct: bool) -> DiskRequest {
        DiskRequest {
            size_bytes,
            block_bytes,
            direct,
        }
    }

    #[test]
    fn bounds_name_the_field() {
        let free = 1 << 40;
        let field = |r: &DiskRequest| match validate(r, free) {
            Err(ProbeError::Invalid { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert_eq!(field(&request(1 << 30, vec![100], false)), "block");
        assert_eq!(field(&request(1 << 30, vec![1 << 20, 6000], true)), "block");
        assert_eq!(field(&request(1 << 30, vec![], false)), "block");
        assert_eq!(field(&request(1000, vec![512], false)), "size");
        assert_eq!(field(&request(1 << 40, vec![1 << 20], false)), "size");
        assert!(validate(&request(1 << 30, vec![4096, 1 << 20], true), free).is_ok());
    }

    #[test]
    fn buffers_are_aligned_for_direct_io() {
        for len in [4096, 65536, 1 << 20] {
            let mut buffer = AlignedBuffer::new(len);
            let slice = buffer.as_mut();
            assert_eq!(slice.len(), len);
            assert_eq!(slice.as_ptr() as usize % DIRECT_ALIGN_BYTES, 0);
        }
    }

    #[test]
    fn a_pass_writes_and_reads_the_whole_file_and_leaves_nothing() {
        let dir = std::env::temp_dir().join(format!("tcpeval-disk-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let report = measure(
            &dir,
            &request(4 << 20, vec![65536], false),
            &AtomicBool::new(false),
        )
        .unwrap();
        let pass = &report.passes[0];
        assert_eq!(pass.bytes, 4 << 20);
        assert!(pass.write_bps > 0.0 && pass.read_bps > 0.0);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);
        std::fs::remove_dir(&dir).unwrap();
    }
}
