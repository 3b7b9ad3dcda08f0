//! What a signed callback's headers must show before its body is read: the
//! signature headers themselves and a timestamp inside the window.

use axum::http::HeaderMap;

use crate::approval_gate::channel::CallbackError;

/// A header a signed callback carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignedHeader<'a> {
    /// Not sent.
    Absent,
    /// Sent, but empty or not visible ASCII.
    Invalid,
    /// Sent: its value, trimmed.
    Present(&'a str),
}

/// The header `name` of a callback.
pub(crate) fn signed_header<'a>(headers: &'a HeaderMap, name: &str) -> SignedHeader<'a> {
    match headers.get(name) {
        None => SignedHeader::Absent,
        Some(value) => match value.to_str() {
            Ok(text) if !text.trim().is_empty() => SignedHeader::Present(text.trim()),
            _ => SignedHeader::Invalid,
        },
    }
}

/// Checks a signed timestamp (Unix seconds, digits only: the signature
/// covered the text exactly as sent) against the current time `now`: at
/// most `window_secs` away either side, the bound included.
pub(crate) fn check_timestamp(
    timestamp: &str,
    now: i64,
    window_secs: u64,
) -> Result<(), CallbackError> {
    if timestamp.is_empty() || !timestamp.bytes().all(|byte| byte.is_ascii_digit()) {
        return Err(CallbackError::StaleTimestamp);
    }
    let timestamp: i64 = timestamp
        .parse()
        .map_err(|_| CallbackError::StaleTimestamp)?;
    if now.abs_diff(timestamp) > window_secs {
        return Err(CallbackError::StaleTimestamp);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    #[test]
    fn the_window_is_inclusive_and_digits_only() {
        let now = 1_700_000_000;
        for (timestamp, accepted) in [
            ("1700000000", true),
            ("1700000300", true),
            ("1699999700", true),
            ("1700000301", false),
            ("1699999699", false),
            ("+1700000000", false),
            ("-1", false),
            ("1.7e9", false),
            ("", false),
            ("99999999999999999999", false),
        ] {
            assert_eq!(
                check_timestamp(timestamp, now, 300).is_ok(),
                accepted,
                "{timestamp}"
            );
        }
    }

    #[test]
    fn headers_are_absent_invalid_or_trimmed() {
        let mut headers = HeaderMap::new();
        assert_eq!(signed_header(&headers, "x-ts"), SignedHeader::Absent);
        headers.insert("x-ts", HeaderValue::from_static("  "));
        assert_eq!(signed_header(&headers, "x-ts"), SignedHeader::Invalid);
        headers.insert("x-ts", HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        assert_eq!(signed_header(&headers, "x-ts"), SignedHeader::Invalid);
        headers.insert("x-ts", HeaderValue::from_static(" 17 "));
        assert_eq!(signed_header(&headers, "x-ts"), SignedHeader::Present("17"));
    }
}
