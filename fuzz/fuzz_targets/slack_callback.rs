//! A Slack interactivity callback: the fuzzed bytes as the form body, and
//! the fuzzed text as its `payload`, signed as Slack would (so they reach
//! the decoder past the verifier). A body the verifier must refuse — a
//! wrong signature, a stale timestamp, one over the size cap — never
//! decodes to a decision.

#![no_main]

use std::sync::LazyLock;

use axum::http::HeaderMap;
use hooks_std::approval_gate::channel::slack::{
    MAX_CALLBACK_BODY, SIGNATURE_HEADER, SlackChannel, SlackConfig, TIMESTAMP_HEADER, signature,
};
use hooks_std::approval_gate::channel::{Callback, RawCallback};
use libfuzzer_sys::fuzz_target;

const SECRET: &str = "fuzz-signing-secret";
const NOW: i64 = 1_700_000_000;

static CHANNEL: LazyLock<SlackChannel> = LazyLock::new(|| {
    SlackChannel::new(SlackConfig::new("xoxb-fuzz", SECRET, "C1", "T1")).expect("a Slack channel")
});

fn headers(timestamp: &str, signed: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in [(TIMESTAMP_HEADER, timestamp), (SIGNATURE_HEADER, signed)] {
        if let Ok(value) = value.parse() {
            headers.insert(name, value);
        }
    }
    headers
}

fn verify(timestamp: i64, body: &[u8], signed_body: &[u8]) -> Result<Callback, String> {
    let stamp = timestamp.to_string();
    let headers = headers(&stamp, &signature(SECRET, &stamp, signed_body));
    CHANNEL
        .verify_callback_at(
            RawCallback {
                headers: &headers,
                body,
            },
            NOW,
        )
        .map_err(|error| error.to_string())
}

fn check(body: &[u8]) {
    let result = verify(NOW, body, body);
    if body != b"x" {
        let forged = verify(NOW, body, b"x");
        assert!(
            forged.is_err(),
            "a forged signature was accepted: {forged:?}"
        );
    }
    if matches!(result, Ok(Callback::Decision(_))) {
        assert!(body.len() <= MAX_CALLBACK_BODY);
        let stale = verify(NOW - 600, body, body);
        assert!(stale.is_err(), "a stale callback was accepted: {stale:?}");
    }
}

fuzz_target!(|data: &[u8]| {
    check(data);
    if let Ok(payload) = std::str::from_utf8(data) {
        let form = serde_urlencoded::to_string([("payload", payload)]).unwrap_or_default();
        check(form.as_bytes());
    }
});
