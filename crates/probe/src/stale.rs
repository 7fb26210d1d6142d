//! Partial files nobody came back for: removed once nothing has written them for a bound.
//!
//! A copy that asked to resume keeps its partial file when it fails; if the sender never
//! returns, that file holds disk space for ever. The server sweeps its root at start and
//! then periodically (`housekeeping.rs`) for hidden `.NAME.tcpeval-partial` files last
//! written longer ago than `--stale-partial-s`. The walk stays beneath the root as copies do
//! (`openat2` with no symlink followed); a file a copy holds (its `flock`) is left alone, and
//! the lock is checked to be on the file that still carries the name before it is removed.

use std::ffi::{CStr, OsStr};
use std::fs::File;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::time::{Duration, SystemTime};

use nix::dir::{Dir, Type};
use nix::fcntl::{self, Flock, FlockArg, OFlag};
use nix::sys::stat::Mode;
use nix::unistd::{self, UnlinkatFlags};

use crate::names::PARTIAL_SUFFIX;
use crate::root::resolve;

/// What one sweep removed.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct Cleaned {
    pub files: u64,
    /// The disk space they held.
    pub bytes: u64,
}

/// Removes the stale partial files beneath `root`.
pub fn clean(root: &impl AsFd, older_than: Duration) -> Cleaned {
    let mut cleaned = Cleaned::default();
    let flags = OFlag::O_DIRECTORY | OFlag::O_RDONLY;
    let Ok(top) = resolve(root, ".", flags, Mode::empty()) else {
        return cleaned;
    };
    let mut pending = vec![top];
    while let Some(dir) = pending.pop() {
        let Ok(mut dir) = Dir::from_fd(dir) else {
            continue;
        };
        for (name, kind) in entries(&mut dir) {
            let name = OsStr::from_bytes(name.to_bytes());
            match kind {
                Some(Type::Directory) => {
                    if let Ok(sub) = resolve(&dir, name, flags, Mode::empty()) {
                        pending.push(sub);
                    }
                }
                Some(Type::File) | None if is_partial(name) => {
                    if let Some(bytes) = remove_if_stale(&dir, name, older_than) {
                        cleaned.files += 1;
                        cleaned.bytes += bytes;
                    }
                }
                _ => {}
            }
        }
    }
    cleaned
}

/// The directory's entries but `.` and `..`, read before any is acted on.
fn entries(dir: &mut Dir) -> Vec<(std::ffi::CString, Option<Type>)> {
    dir.iter()
        .filter_map(|entry| entry.ok())
        .filter(|entry| ![&b"."[..], b".."].contains(&entry.file_name().to_bytes()))
        .map(|entry| (CStr::to_owned(entry.file_name()), entry.file_type()))
        .collect()
}

fn is_partial(name: &OsStr) -> bool {
    let bytes = name.as_bytes();
    bytes.starts_with(b".") && bytes.ends_with(PARTIAL_SUFFIX.as_bytes())
}

/// Removes `name` in `dir` if it is a regular file nothing has written for `older_than`
/// and no copy holds; returns the space it held.
fn remove_if_stale(dir: &impl AsFd, name: &OsStr, older_than: Duration) -> Option<u64> {
    // O_NONBLOCK: a FIFO by that name must not hang the sweep.
    let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK;
    let file = File::from(resolve(dir, name, flags, Mode::empty()).ok()?);
    let meta = file.metadata().ok()?;
    let age = SystemTime::now()
        .duration_since(meta.modified().ok()?)
        .unwrap_or_default();
    if !meta.is_file() || age < older_than {
        return None;
    }
    let _locked = Flock::lock(file, FlockArg::LockExclusiveNonblock).ok()?;
    if inode_of(dir, name)? != meta.ino() {
        return None;
    }
    unistd::unlinkat(dir, name, UnlinkatFlags::NoRemoveDir).ok()?;
    Some(meta.blocks() * 512)
}

fn inode_of(dir: &impl AsFd, name: &OsStr) -> Option<u64> {
    nix::sys::stat::fstatat(dir, name, fcntl::AtFlags::AT_SYMLINK_NOFOLLOW)
        .ok()
        .map(|st| st.st_ino)
}

/// How often the root is swept: often enough that a file outlives its bound by at most half
/// of it, at most hourly, at most once a second.
pub fn interval(older_than: Duration) -> Duration {
    (older_than / 2).clamp(Duration::from_secs(1), Duration::from_secs(3600))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::path::{Path, PathBuf};

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tcpeval-stale-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// A file of 8 KiB last written `age` ago.
    fn written(path: &Path, age: Duration) -> File {
        fs::write(path, [1u8; 8192]).unwrap();
        let file = File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - age).unwrap();
        file
    }

    #[test]
    fn old_unheld_partial_files_beneath_the_root_go_and_nothing_else() {
        let (root, outside) = (scratch("root"), scratch("outside"));
        let hour = Duration::from_secs(3600);
        fs::create_dir(root.join("sub")).unwrap();
        written(&root.join(".a.tcpeval-partial"), 2 * hour);
        written(&root.join("sub/.b.tcpeval-partial"), 2 * hour);
        written(&root.join(".fresh.tcpeval-partial"), Duration::ZERO);
        written(&root.join("old.dat"), 2 * hour);
        let held = written(&root.join(".held.tcpeval-partial"), 2 * hour);
        let _lock = Flock::lock(held, FlockArg::LockExclusiveNonblock).unwrap();
        written(&outside.join(".o.tcpeval-partial"), 2 * hour);
        std::os::unix::fs::symlink(&outside, root.join("link")).unwrap();

        let dir = fs::File::open(&root).unwrap();
        let cleaned = clean(&dir, hour);
        assert_eq!(cleaned.files, 2);
        assert!(cleaned.bytes >= 2 * 8192, "{cleaned:?}");
        assert!(!root.join(".a.tcpeval-partial").exists());
        assert!(!root.join("sub/.b.tcpeval-partial").exists());
        for kept in [".fresh.tcpeval-partial", "old.dat", ".held.tcpeval-partial"] {
            assert!(root.join(kept).exists(), "{kept}");
        }
        assert!(outside.join(".o.tcpeval-partial").exists());
        fs::remove_dir_all(&root).unwrap();
        fs::remove_dir_all(&outside).unwrap();
    }

    #[test]
    fn the_sweep_interval_is_half_the_bound_within_a_second_and_an_hour() {
        assert_eq!(
            interval(Duration::from_secs(86_400)),
            Duration::from_secs(3600)
        );
        assert_eq!(interval(Duration::from_secs(60)), Duration::from_secs(30));
        assert_eq!(interval(Duration::from_millis(10)), Duration::from_secs(1));
    }
}
