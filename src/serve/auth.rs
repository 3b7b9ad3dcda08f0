//! Bearer tokens, compared in constant time.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

/// Whether `headers` carry `Authorization: Bearer <token>`. The comparison
/// takes the same time whatever prefix of the token a guess gets right.
pub(crate) fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(given) = bearer(headers) else {
        return false;
    };
    constant_time_eq(given.as_bytes(), token.as_bytes())
}

/// The token of `headers`' `Authorization: Bearer <token>`, if any.
pub(crate) fn bearer(headers: &HeaderMap) -> Option<&str> {
    headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
}

/// Equal lengths and equal bytes. Every byte of the longer is read
/// whatever the others hold, so the time taken says neither how much of a
/// guess was right nor how long the token is.
fn constant_time_eq(given: &[u8], token: &[u8]) -> bool {
    let longest = given.len().max(token.len());
    let mut diff = u8::from(given.len() != token.len());
    for i in 0..longest {
        let a = given.get(i).copied().unwrap_or(0);
        let b = token.get(i).copied().unwrap_or(0);
        diff |= a ^ b;
    }
    diff == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(AUTHORIZATION, HeaderValue::from_str(value).expect("ascii"));
        headers
    }

    #[test]
    fn only_the_exact_bearer_token_passes() {
        assert!(authorized(&headers("Bearer s3cret"), "s3cret"));
        for wrong in [
            "Bearer s3cre",
            "Bearer s3cret!",
            "bearer s3cret",
            "s3cret",
            "Bearer ",
            "Basic s3cret",
        ] {
            assert!(!authorized(&headers(wrong), "s3cret"), "{wrong}");
        }
        assert!(!authorized(&HeaderMap::new(), "s3cret"));
    }
}
