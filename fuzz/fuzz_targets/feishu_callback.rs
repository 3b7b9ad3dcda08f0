//! A Feishu card callback: the fuzzed text sealed and signed as Feishu
//! would (so it reaches the decoder past the verifier), and the same bytes
//! as a raw body with and without signature headers. A body the verifier
//! must refuse — a wrong signature, a stale timestamp, no signature on a
//! card action, the wrong verification token — never decodes to a
//! decision.

#![no_main]

use std::sync::LazyLock;

use axum::http::HeaderMap;
use hooks_std::approval_gate::channel::feishu::{
    FeishuChannel, FeishuConfig, NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER, decrypt,
    encrypt, signature,
};
use hooks_std::approval_gate::channel::{Callback, RawCallback};
use libfuzzer_sys::fuzz_target;

const ENCRYPT_KEY: &str = "fuzz-encrypt-key";
const TOKEN: &str = "fuzz-verification-token";
const NOW: i64 = 1_700_000_000;

static CHANNEL: LazyLock<FeishuChannel> = LazyLock::new(|| {
    FeishuChannel::new(FeishuConfig::new(
        "cli_fuzz",
        "app-secret",
        "oc_finance",
        TOKEN,
        ENCRYPT_KEY,
    ))
    .expect("a Feishu channel")
});

fn headers(timestamp: &str, signature: &str) -> HeaderMap {
    let mut headers = HeaderMap::new();
    for (name, value) in [
        (TIMESTAMP_HEADER, timestamp),
        (NONCE_HEADER, "nonce-1"),
        (SIGNATURE_HEADER, signature),
    ] {
        if let Ok(value) = value.parse() {
            headers.insert(name, value);
        }
    }
    headers
}

fn verify(headers: &HeaderMap, body: &[u8]) -> Result<Callback, String> {
    CHANNEL
        .verify_callback_at(RawCallback { headers, body }, NOW)
        .map_err(|error| error.to_string())
}

fuzz_target!(|data: &[u8]| {
    // The raw body, unsigned: at most a URL verification.
    let unsigned = verify(&HeaderMap::new(), data);
    assert!(
        !matches!(unsigned, Ok(Callback::Decision(_))),
        "an unsigned body decided: {unsigned:?}"
    );
    // The raw body with a signature for other bytes.
    let stamp = NOW.to_string();
    let forged = headers(&stamp, &signature(&stamp, "nonce-1", ENCRYPT_KEY, b"{}"));
    if data != b"{}" {
        let result = verify(&forged, data);
        assert!(
            result.is_err(),
            "a forged signature was accepted: {result:?}"
        );
    }
    // The raw body signed: the envelope and decryption.
    let signed = headers(&stamp, &signature(&stamp, "nonce-1", ENCRYPT_KEY, data));
    let _ = verify(&signed, data);
    let _ = decrypt(ENCRYPT_KEY, &String::from_utf8_lossy(data));

    // The text sealed and signed as Feishu does: the payload decoder.
    let Ok(plain) = std::str::from_utf8(data) else {
        return;
    };
    let body = serde_json::json!({"encrypt": encrypt(ENCRYPT_KEY, plain, [7; 16])})
        .to_string()
        .into_bytes();
    let sealed = verify(
        &headers(&stamp, &signature(&stamp, "nonce-1", ENCRYPT_KEY, &body)),
        &body,
    );
    if let Ok(Callback::Decision(decision)) = &sealed {
        assert!(
            plain.contains(TOKEN),
            "a decision without the verification token: {decision:?}"
        );
        // The same body, stale by ten minutes, is refused.
        let stale = (NOW - 600).to_string();
        let late = verify(
            &headers(&stale, &signature(&stale, "nonce-1", ENCRYPT_KEY, &body)),
            &body,
        );
        assert!(late.is_err(), "a stale callback was accepted: {late:?}");
    }
});
