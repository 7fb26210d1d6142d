//! Challenge-response authentication with a shared secret (HMAC-SHA256, RFC 2104).
//!
//! The server sends a fresh random challenge; the client answers with
//! `HMAC-SHA256(secret, DOMAIN || challenge)`. The secret never crosses the wire and a captured
//! answer is useless for the next challenge. Comparison is constant-time (`verify_slice`).

use std::fs;
use std::path::Path;

use hmac::{Hmac, Mac};
use sha2::Sha256;

use crate::error::{ProbeError, Result};

type HmacSha256 = Hmac<Sha256>;

pub const CHALLENGE_BYTES: usize = 32;
/// Binds the answer to this protocol so a MAC computed for another purpose cannot be replayed.
const DOMAIN: &[u8] = b"tcpeval-probe control v1";
/// Fewer bytes than this is a password, not a secret.
const MIN_SECRET_BYTES: usize = 16;

#[derive(Clone)]
pub struct Secret(Vec<u8>);

impl Secret {
    /// Reads the secret from a file (trailing newline ignored); refuses short files, and
    /// files other users may read (they would learn it) or write (they would choose it),
    /// as ssh does for keys.
    pub fn from_file(path: &Path) -> Result<Self> {
        let err = |reason: String| ProbeError::Secret {
            path: path.display().to_string(),
            reason,
        };
        let meta = fs::metadata(path).map_err(|e| err(e.to_string()))?;
        if let Some(reason) = loose_permissions(&meta) {
            return Err(err(format!("{reason}; chmod 600 it")));
        }
        let mut bytes = fs::read(path).map_err(|e| err(e.to_string()))?;
        while bytes.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
            bytes.pop();
        }
        if bytes.len() < MIN_SECRET_BYTES {
            return Err(err(format!(
                "holds {} bytes; at least {MIN_SECRET_BYTES} are needed",
                bytes.len()
            )));
        }
        Ok(Secret(bytes))
    }

    #[cfg(test)]
    pub fn from_bytes(bytes: &[u8]) -> Self {
        Secret(bytes.to_vec())
    }

    fn mac(&self) -> HmacSha256 {
        // HMAC accepts keys of any length (RFC 2104 §3), so this cannot fail.
        HmacSha256::new_from_slice(&self.0).expect("HMAC takes keys of any length")
    }

    pub fn answer(&self, challenge: &[u8]) -> Vec<u8> {
        let mut mac = self.mac();
        mac.update(DOMAIN);
        mac.update(challenge);
        mac.finalize().into_bytes().to_vec()
    }

    pub fn verify(&self, challenge: &[u8], answer: &[u8]) -> bool {
        let mut mac = self.mac();
        mac.update(DOMAIN);
        mac.update(challenge);
        mac.verify_slice(answer).is_ok()
    }
}

fn loose_permissions(meta: &fs::Metadata) -> Option<&'static str> {
    use std::os::unix::fs::PermissionsExt;
    let mode = meta.permissions().mode();
    if mode & 0o044 != 0 {
        Some("is readable by other users")
    } else if mode & 0o022 != 0 {
        Some("is writable by other users")
    } else {
        None
    }
}

pub fn random_bytes<const N: usize>() -> [u8; N] {
    let mut out = [0u8; N];
    getrandom::fill(&mut out).expect("the kernel's random source is available");
    out
}

pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn from_hex(text: &str) -> Option<Vec<u8>> {
    if text.len() % 2 != 0 || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn right_secret_verifies_wrong_one_does_not() {
        let server = Secret::from_bytes(b"0123456789abcdef-secret");
        let client = Secret::from_bytes(b"0123456789abcdef-secret");
        let stranger = Secret::from_bytes(b"0123456789abcdef-other!");
        let challenge = random_bytes::<CHALLENGE_BYTES>();
        assert!(server.verify(&challenge, &client.answer(&challenge)));
        assert!(!server.verify(&challenge, &stranger.answer(&challenge)));
        let other = random_bytes::<CHALLENGE_BYTES>();
        assert!(!server.verify(&other, &client.answer(&challenge)));
    }

    #[test]
    fn a_secret_others_may_read_or_write_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let path = std::env::temp_dir().join(format!("tcpeval-secret-{}", std::process::id()));
        fs::write(&path, "0123456789abcdef-secret\n").unwrap();
        for (mode, refused) in [
            (0o600, None),
            (0o400, None),
            (0o640, Some("is readable by other users; chmod 600 it")),
            (0o604, Some("is readable by other users; chmod 600 it")),
            (0o602, Some("is writable by other users; chmod 600 it")),
            (0o620, Some("is writable by other users; chmod 600 it")),
        ] {
            fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
            let got = Secret::from_file(&path).err().map(|e| e.to_string());
            let want = refused.map(|r| format!("secret file '{}': {r}", path.display()));
            assert_eq!(got, want, "mode {mode:o}");
        }
        fs::remove_file(&path).unwrap();
    }

    #[test]
    fn hex_round_trips_and_rejects_junk() {
        let bytes = [0u8, 1, 0xab, 0xff];
        assert_eq!(from_hex(&to_hex(&bytes)).unwrap(), bytes);
        assert!(from_hex("abc").is_none());
        assert!(from_hex("zz").is_none());
        assert!(from_hex("é1").is_none());
    }
}
