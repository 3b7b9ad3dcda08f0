//! Bearer tokens, compared in constant time.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

/// Whether `headers` carry `Authorization: Bearer <token>`. The comparison
/// takes the same time whatever prefix of the token a guess gets right.
pub(super) fn authorized(headers: &HeaderMap, token: &str) -> bool {
    let Some(given) = headers
        .get(AUTHORIZATION)
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.strip_prefix("Bearer "))
    else {
        return false;
    };
    constant_time_eq(given.as_bytes(), token.as_bytes())
}

/// Equal lengths and equal bytes, every byte read whatever the others hold.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
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
