//! The rules a file name must pass before a copy touches the disk.
//!
//! A name is relative to a root directory: components joined by `/`, none empty, `.` or
//! `..`, no NUL or other control character (a newline in a name would forge lines of every
//! listing and log that shows it), not absolute, and short enough that its hidden partial file still fits the
//! kernel's 255-byte limit on one component. These rules refuse the obvious escapes before
//! any system call; `root.rs` then resolves the name with `openat2(RESOLVE_BENEATH |
//! RESOLVE_NO_SYMLINKS)`, which refuses the ones no string check can see (symlinks).

/// Marks the file a copy writes into before it is verified and renamed into place.
pub const PARTIAL_SUFFIX: &str = ".tcpeval-partial";
/// NAME_MAX (255) less the partial file's leading dot and suffix.
pub const MAX_COMPONENT_BYTES: usize = 255 - 1 - PARTIAL_SUFFIX.len();
pub const MAX_NAME_BYTES: usize = 1024;

/// A checked name: the directory part (maybe empty) and the file.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Name<'a> {
    pub dir: &'a str,
    pub file: &'a str,
}

impl Name<'_> {
    /// The hidden file the copy writes before it is verified.
    pub fn partial(&self) -> String {
        format!(".{}{PARTIAL_SUFFIX}", self.file)
    }
}

/// Checks `name`; the error is the reason, to be sent back next to the name.
pub fn check(name: &str) -> Result<Name<'_>, &'static str> {
    if name.is_empty() {
        return Err("is empty");
    }
    if name.len() > MAX_NAME_BYTES {
        return Err("is longer than 1024 bytes");
    }
    if name.contains('\0') {
        return Err("contains a NUL byte");
    }
    if name.chars().any(char::is_control) {
        return Err("contains a control character");
    }
    if name.starts_with('/') {
        return Err("is absolute; names are relative to the server's root");
    }
    for component in name.split('/') {
        match component {
            "" => return Err("has an empty component (// or a trailing /)"),
            "." | ".." => return Err("has a . or .. component"),
            c if c.len() > MAX_COMPONENT_BYTES => {
                return Err("has a component longer than 238 bytes")
            }
            _ => {}
        }
    }
    let (dir, file) = name.rsplit_once('/').unwrap_or(("", name));
    if file.ends_with(PARTIAL_SUFFIX) {
        return Err("names a partial file of an unfinished copy");
    }
    Ok(Name { dir, file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_split_into_directory_and_file() {
        assert_eq!(
            check("a.dat"),
            Ok(Name {
                dir: "",
                file: "a.dat"
            })
        );
        assert_eq!(
            check("in/coming/a.dat"),
            Ok(Name {
                dir: "in/coming",
                file: "a.dat"
            })
        );
        assert_eq!(
            check(".hidden"),
            Ok(Name {
                dir: "",
                file: ".hidden"
            })
        );
        assert_eq!(check("x").unwrap().partial(), ".x.tcpeval-partial");
    }

    #[test]
    fn escapes_and_malformed_names_are_refused() {
        for name in [
            "",
            "/etc/passwd",
            "../x",
            "a/../../x",
            "..",
            "./x",
            "a/./b",
            "a//b",
            "dir/",
            "a\0b",
            "a\nb",
            "x\u{1b}[2J",
            "tab\there",
            "c1\u{85}",
            "del\u{7f}",
            ".x.tcpeval-partial",
            "d/.x.tcpeval-partial",
        ] {
            assert!(check(name).is_err(), "{name:?} passed");
        }
    }

    #[test]
    fn length_limits_hold_at_their_edges() {
        let longest = "x".repeat(MAX_COMPONENT_BYTES);
        assert!(check(&longest).is_ok());
        // Its partial file is exactly as long as one component may be.
        assert_eq!(check(&longest).unwrap().partial().len(), 255);
        assert!(check(&format!("{longest}x")).is_err());
        let deep = vec!["d"; MAX_NAME_BYTES / 2].join("/");
        assert_eq!(deep.len(), MAX_NAME_BYTES - 1);
        assert!(check(&deep).is_ok());
        assert!(check(&format!("{deep}/x")).is_err());
    }
}
