//! The directory a copy may read and write, and nothing outside it.
//!
//! Every name (checked by `names.rs`) is resolved relative to a file descriptor of the root
//! with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`: the kernel refuses `..` that
//! climbs out, absolute paths and every symlink on the way, so a symlink planted inside the
//! root cannot lead outside it. A received file is written into a hidden partial file beside
//! its final name, held under an exclusive `flock`, and renamed into place only once it is
//! verified (`renameat2(RENAME_NOREPLACE)` unless overwriting): the final name never holds a
//! truncated file. Hard links into the root made by someone who can write there are not
//! detected: a get would read them; a put never writes through one (rename replaces it).

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::{self, Flock, FlockArg, OFlag, OpenHow, ResolveFlag};
use nix::sys::stat::{self, FileStat, Mode, SFlag};

use crate::error::{ProbeError, Result};
use crate::names::{self, Name};
use crate::partial::{Destination, Partial};
use crate::stale;

pub struct Root {
    dir: OwnedFd,
    /// The field a refusal names: "name" on the server, "local" on the client.
    field: &'static str,
}

impl Root {
    /// Opens the root directory itself; `path` comes from whoever runs the binary.
    pub fn open(path: &Path, field: &'static str) -> Result<Root> {
        let flags = OFlag::O_DIRECTORY | OFlag::O_RDONLY | OFlag::O_CLOEXEC;
        let dir = fcntl::open(path, flags, Mode::empty())
            .map_err(|e| ProbeError::invalid("root", path.display(), e.desc()))?;
        Ok(Root { dir, field })
    }

    /// The root as a path that stays on the directory opened, even if it is renamed: for the
    /// disk test, whose scratch file names are the server's own.
    pub fn scratch_dir(&self) -> std::path::PathBuf {
        format!("/proc/self/fd/{}", self.dir.as_raw_fd()).into()
    }

    fn refuse(&self, name: &str, reason: impl Into<String>) -> ProbeError {
        ProbeError::invalid(self.field, name, reason)
    }

    fn check<'a>(&self, name: &'a str) -> Result<Name<'a>> {
        names::check(name).map_err(|reason| self.refuse(name, reason))
    }

    /// Says why the kernel refused `name`, in the terms of the root's rules.
    fn refusal(&self, name: &str, errno: Errno) -> ProbeError {
        let reason = match errno {
            Errno::ELOOP => "passes through a symlink; none are followed under the root",
            Errno::EXDEV => "leaves the root",
            Errno::ENOENT => "does not exist",
            Errno::ENOTDIR => "has a component that is not a directory",
            other => other.desc(),
        };
        self.refuse(name, reason)
    }

    /// The directory `name` is in; a refusal names all of `name`.
    fn directory_of(&self, name: &str, checked: &Name) -> Result<OwnedFd> {
        let dir = if checked.dir.is_empty() {
            "."
        } else {
            checked.dir
        };
        let flags = OFlag::O_DIRECTORY | OFlag::O_RDONLY;
        resolve(&self.dir, dir, flags, Mode::empty()).map_err(|e| self.refusal(name, e))
    }

    /// Opens a regular file under the root for reading; returns it and its size.
    pub fn source(&self, name: &str) -> Result<(File, u64)> {
        self.check(name)?;
        // O_NONBLOCK: opening a FIFO must not wait for a writer; regular files ignore it.
        let flags = OFlag::O_RDONLY | OFlag::O_NONBLOCK;
        let fd =
            resolve(&self.dir, name, flags, Mode::empty()).map_err(|e| self.refusal(name, e))?;
        let file = File::from(fd);
        let meta = file
            .metadata()
            .map_err(|e| ProbeError::io(format!("reading {name}"), e))?;
        if !meta.is_file() {
            return Err(self.refuse(name, "is not a regular file"));
        }
        Ok((file, meta.len()))
    }

    /// Removes the partial files under the root that no copy holds and nothing has written
    /// for `older_than` (`stale.rs`).
    pub fn clean_stale(&self, older_than: std::time::Duration) -> stale::Cleaned {
        stale::clean(&self.dir, older_than)
    }

    /// Creates (or takes over) the partial file for `name`, locked; emptied unless `resume`.
    /// Refuses when `name` exists and `overwrite` is false, or exists and is not a regular
    /// file, or another copy holds the lock.
    pub fn destination(&self, name: &str, overwrite: bool, resume: bool) -> Result<Partial> {
        let checked = self.check(name)?;
        let dir = self.directory_of(name, &checked)?;
        let at = |path: &str| stat::fstatat(&dir, path, fcntl::AtFlags::AT_SYMLINK_NOFOLLOW);
        match at(checked.file) {
            Err(Errno::ENOENT) => {}
            Err(e) => return Err(self.refusal(name, e)),
            Ok(_) if !overwrite => {
                return Err(self.refuse(name, "exists; ask for overwrite to replace it"))
            }
            Ok(st) if !is_regular(&st) => {
                return Err(self.refuse(name, "exists and is not a regular file"))
            }
            Ok(_) => {}
        }
        let partial = checked.partial();
        let flags = OFlag::O_RDWR | OFlag::O_CREAT;
        let fd = resolve(
            &dir,
            partial.as_str(),
            flags,
            Mode::from_bits_truncate(0o644),
        )
        .map_err(|e| self.refusal(name, e))?;
        let busy = || self.refuse(name, "is being copied by another client");
        let file =
            Flock::lock(File::from(fd), FlockArg::LockExclusiveNonblock).map_err(|_| busy())?;
        // The lock may be on a file another copy has just renamed into place: only the inode
        // that still carries the partial name is ours to empty.
        let ours = file.metadata().map(|m| m.ino()).ok();
        if at(&partial).ok().map(|st| st.st_ino) != ours {
            return Err(busy());
        }
        if !resume {
            file.set_len(0)
                .map_err(|e| ProbeError::io(format!("emptying {partial}"), e))?;
        }
        Ok(Partial::new(
            Destination {
                field: self.field,
                name: name.to_string(),
                dir,
                partial,
                target: checked.file.to_string(),
                overwrite,
            },
            file,
            resume,
        ))
    }
}

/// Opens `path` beneath `dir`, through no symlink.
pub(crate) fn resolve<P: ?Sized + nix::NixPath>(
    dir: impl AsFd,
    path: &P,
    flags: OFlag,
    mode: Mode,
) -> nix::Result<OwnedFd> {
    let how = OpenHow::new()
        .flags(flags | OFlag::O_CLOEXEC | OFlag::O_NOCTTY)
        .mode(mode)
        .resolve(ResolveFlag::RESOLVE_BENEATH | ResolveFlag::RESOLVE_NO_SYMLINKS);
    fcntl::openat2(dir, path, how)
}

fn is_regular(st: &FileStat) -> bool {
    SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG
}
