//! Slack request signatures: `v0=` + hex HMAC-SHA256 keyed with the app's
//! signing secret over `v0:{X-Slack-Request-Timestamp}:{raw body}`.

use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// The header carrying the request's Unix time in seconds.
pub const TIMESTAMP_HEADER: &str = "x-slack-request-timestamp";

/// The header carrying the request's signature.
pub const SIGNATURE_HEADER: &str = "x-slack-signature";

/// The signature scheme's version, the prefix of every signature.
pub const SIGNATURE_VERSION: &str = "v0";

/// The signature Slack sends for `body` at `timestamp`:
/// `v0=` + lowercase hex HMAC-SHA256(`signing_secret`, `v0:{timestamp}:{body}`).
pub fn signature(signing_secret: &str, timestamp: &str, body: &[u8]) -> String {
    // HMAC accepts keys of any length, so this cannot fail.
    let mut mac = match Hmac::<Sha256>::new_from_slice(signing_secret.as_bytes()) {
        Ok(mac) => mac,
        Err(_) => unreachable!("HMAC-SHA256 takes keys of any length"),
    };
    mac.update(SIGNATURE_VERSION.as_bytes());
    mac.update(b":");
    mac.update(timestamp.as_bytes());
    mac.update(b":");
    mac.update(body);
    format!(
        "{SIGNATURE_VERSION}={}",
        hex::encode(mac.finalize().into_bytes())
    )
}

/// Whether `given` is the signature of `body` at `timestamp`, compared in
/// constant time (case-sensitive: Slack sends lowercase hex).
pub fn verify_signature(signing_secret: &str, timestamp: &str, body: &[u8], given: &str) -> bool {
    let expected = signature(signing_secret, timestamp, body);
    expected.as_bytes().ct_eq(given.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn any_change_breaks_the_signature() {
        let sig = signature("secret", "1700000000", b"payload=%7B%7D");
        assert!(sig.starts_with("v0=") && sig.len() == 3 + 64, "{sig}");
        assert!(verify_signature(
            "secret",
            "1700000000",
            b"payload=%7B%7D",
            &sig
        ));
        assert!(!verify_signature(
            "secret",
            "1700000001",
            b"payload=%7B%7D",
            &sig
        ));
        assert!(!verify_signature(
            "secret",
            "1700000000",
            b"payload=%7B%20%7D",
            &sig
        ));
        assert!(!verify_signature(
            "secrets",
            "1700000000",
            b"payload=%7B%7D",
            &sig
        ));
        assert!(!verify_signature(
            "secret",
            "1700000000",
            b"payload=%7B%7D",
            &sig.to_uppercase()
        ));
        assert!(!verify_signature(
            "secret",
            "1700000000",
            b"payload=%7B%7D",
            ""
        ));
    }
}
