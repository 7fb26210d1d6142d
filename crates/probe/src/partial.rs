//! A file being received: its hidden partial file, locked, and what becomes of it.
//!
//! A put takes its whole size on disk before it is admitted (`reserve`: `fallocate`), so
//! copies admitted together can never add up to more than the file system holds: the
//! kernel grants or refuses each reservation whole, and one at a time. What cannot be
//! verified never takes the final name. An incomplete file stays, hidden, only when the
//! sender asked to resume and it holds data; then its reserved but unwritten space is given
//! back, so a kept file takes no more room than what arrived. Anything else is removed, while
//! the lock is still held.

use std::fs::File;
use std::os::fd::OwnedFd;

use nix::errno::Errno;
use nix::fcntl::{self, FallocateFlags, Flock};
use nix::sys::statvfs;
use nix::unistd::{self, lseek, UnlinkatFlags, Whence};
// rustix's renameat2 is a raw system call, so it builds against musl too (the static probe);
// nix offers it on glibc only.
use rustix::fs::{renameat_with, RenameFlags};

use crate::error::{ProbeError, Result};
use crate::transfer::{Range, ALIGN_BYTES};

/// Where a received file is written and where it goes once verified.
pub struct Destination {
    /// The field a refusal names: "name" on the server, "local" on the client.
    pub field: &'static str,
    pub name: String,
    /// The directory of both names.
    pub dir: OwnedFd,
    pub partial: String,
    pub target: String,
    pub overwrite: bool,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fate {
    Remove,
    /// Left for a resume, if it holds any data.
    Keep,
    /// Renamed into place: the partial name is no longer ours.
    Committed,
}

pub struct Partial {
    at: Destination,
    file: Flock<File>,
    fate: Fate,
}

impl Partial {
    /// A partial file just opened and locked; dropped as it is, it is kept only if `resume`
    /// (an earlier copy's data is the sender's to continue).
    pub fn new(at: Destination, file: Flock<File>, resume: bool) -> Partial {
        let fate = if resume { Fate::Keep } else { Fate::Remove };
        Partial { at, file, fate }
    }

    pub fn file(&self) -> &File {
        &self.file
    }

    /// Leaves the file for a later resume. `bytes[i]` is what range `i` holds from its
    /// start; the space reserved past it is given back.
    pub fn keep(mut self, ranges: &[Range], bytes: &[u64]) {
        self.release_unwritten(ranges, bytes);
        self.fate = Fate::Keep;
    }

    /// Removes the file (its content is wrong, or nobody will resume it).
    pub fn remove(mut self) {
        self.fate = Fate::Remove;
    }

    /// The end of a copy that did not finish: kept for a sender that asked to resume,
    /// removed otherwise.
    pub fn give_up(self, resume: bool, ranges: &[Range], bytes: &[u64]) {
        if resume {
            self.keep(ranges, bytes);
        } else {
            self.remove();
        }
    }

    /// Takes `size_bytes` on disk for the file, or refuses naming the free space. A file
    /// system that cannot preallocate gets the free-space check alone.
    pub fn reserve(&self, size_bytes: u64) -> Result<()> {
        let Ok(len) = i64::try_from(size_bytes) else {
            return Err(self.no_room(size_bytes));
        };
        if len == 0 {
            return Ok(());
        }
        match fcntl::fallocate(&*self.file, FallocateFlags::empty(), 0, len) {
            Ok(()) => Ok(()),
            Err(Errno::EOPNOTSUPP) => self.check_space(size_bytes),
            Err(Errno::ENOSPC | Errno::EDQUOT | Errno::EFBIG) => Err(self.no_room(size_bytes)),
            Err(e) => Err(ProbeError::io(
                format!("reserving {size_bytes} bytes for {}", self.at.name),
                e.into(),
            )),
        }
    }

    /// Refuses a file that would not fit in the free space of the file system.
    pub fn check_space(&self, size_bytes: u64) -> Result<()> {
        if size_bytes <= self.free_bytes()? {
            return Ok(());
        }
        Err(self.no_room(size_bytes))
    }

    fn free_bytes(&self) -> Result<u64> {
        let fs = statvfs::fstatvfs(&self.at.dir)
            .map_err(|e| ProbeError::io(format!("statvfs of {}", self.at.name), e.into()))?;
        Ok(fs.blocks_available().saturating_mul(fs.fragment_size()))
    }

    fn no_room(&self, size_bytes: u64) -> ProbeError {
        let free = match self.free_bytes() {
            Ok(free_bytes) => format!("{free_bytes}"),
            Err(_) => "an unknown number of bytes".into(),
        };
        let reason = format!("needs {size_bytes} bytes; its file system has {free} free");
        ProbeError::invalid(self.at.field, &self.at.name, reason)
    }

    /// Punches out each range's space past what it holds (whole blocks, so the last one
    /// written keeps its bytes). Advice: a file system that cannot punch keeps the space.
    fn release_unwritten(&self, ranges: &[Range], bytes: &[u64]) {
        let flags = FallocateFlags::FALLOC_FL_PUNCH_HOLE | FallocateFlags::FALLOC_FL_KEEP_SIZE;
        for (range, held) in ranges.iter().zip(bytes) {
            let from = held.next_multiple_of(ALIGN_BYTES).min(range.length_bytes);
            let (Ok(offset), Ok(len)) = (
                i64::try_from(range.offset_bytes + from),
                i64::try_from(range.length_bytes - from),
            ) else {
                continue;
            };
            if len > 0 {
                let _ = fcntl::fallocate(&*self.file, flags, offset, len);
            }
        }
    }

    /// Renames the verified file into place (never over an existing name unless asked) and
    /// makes the rename durable.
    pub fn commit(mut self) -> Result<()> {
        let flags = if self.at.overwrite {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        let (dir, target) = (&self.at.dir, self.at.target.as_str());
        renameat_with(dir, self.at.partial.as_str(), dir, target, flags)
            .map_err(|e| ProbeError::io(format!("renaming into {target}"), e.into()))?;
        self.fate = Fate::Committed;
        unistd::fsync(dir)
            .map_err(|e| ProbeError::io(format!("syncing the directory of {target}"), e.into()))
    }
}

/// Whether the file holds any data: preallocated space alone reads as a hole (ext4 and tmpfs
/// report unwritten extents so). If the file system cannot say, it holds some.
fn holds_data(file: &File) -> bool {
    !matches!(lseek(file, 0, Whence::SeekData), Err(Errno::ENXIO))
}

impl Drop for Partial {
    /// Nothing of an unverified copy stays behind but data kept for a resume.
    fn drop(&mut self) {
        let keep = match self.fate {
            Fate::Committed => true,
            Fate::Keep => holds_data(&self.file),
            Fate::Remove => false,
        };
        if !keep {
            let partial = self.at.partial.as_str();
            let _ = unistd::unlinkat(&self.at.dir, partial, UnlinkatFlags::NoRemoveDir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::root::Root;
    use crate::transfer::split;
    use std::os::unix::fs::{FileExt, MetadataExt};
    use std::path::PathBuf;

    fn scratch(name: &str) -> (PathBuf, Root) {
        let dir =
            std::env::temp_dir().join(format!("tcpeval-partial-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let root = Root::open(&dir, "name").unwrap();
        (dir, root)
    }

    fn names(dir: &PathBuf) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn a_partial_file_holding_nothing_never_stays() {
        let (dir, root) = scratch("empty");
        drop(root.destination("a", false, false).unwrap());
        // Asked to resume a name never copied: nothing to keep, reservation or not.
        let resumed = root.destination("b", false, true).unwrap();
        resumed.reserve(1 << 20).unwrap();
        drop(resumed);
        assert!(names(&dir).is_empty(), "{:?}", names(&dir));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_kept_file_gives_back_the_space_it_did_not_fill() {
        let (dir, root) = scratch("kept");
        let size_bytes = 4 << 20;
        let partial = root.destination("a", false, false).unwrap();
        partial.reserve(size_bytes).unwrap();
        let on_disk = |p: &Partial| p.file().metadata().unwrap().blocks() * 512;
        assert!(
            on_disk(&partial) >= size_bytes,
            "{} reserved",
            on_disk(&partial)
        );
        // Range 0 of two got 10 000 bytes; range 1 nothing.
        partial.file().write_all_at(&[7u8; 10_000], 0).unwrap();
        let file = partial.file().try_clone().unwrap();
        partial.keep(&split(size_bytes, 2), &[10_000, 0]);
        let kept_bytes = file.metadata().unwrap().blocks() * 512;
        // What was written, rounded up to whole blocks (three 4 KiB blocks).
        assert_eq!(kept_bytes, 3 * 4096);
        assert_eq!(names(&dir), [".a.tcpeval-partial"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_reservation_beyond_the_free_space_is_refused_by_name() {
        let (dir, root) = scratch("full");
        let partial = root.destination("big", false, false).unwrap();
        let refusal = partial.reserve(1 << 62).err().unwrap().to_string();
        let want = format!(
            "name: 'big' needs {} bytes; its file system has ",
            1u64 << 62
        );
        assert!(refusal.starts_with(&want), "{refusal}");
        assert!(refusal.ends_with(" free"), "{refusal}");
        drop(partial);
        assert!(names(&dir).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
