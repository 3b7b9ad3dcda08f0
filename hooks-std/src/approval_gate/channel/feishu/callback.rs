//! Verifying and decoding card callbacks (`card.action.trigger`) and the
//! callback URL check (`url_verification`).
//!
//! Order of checks for a signed callback: signature over the raw body bytes,
//! timestamp window, decryption, then the payload (`schema`, verification
//! token, event type, fields). A `url_verification` may come without the
//! signature headers (Feishu does not sign it); it is then accepted only if
//! it decrypts with the Encrypt Key and carries the Verification Token, and
//! every other failure on that unsigned path is reported as a missing
//! signature, so the endpoint does not tell unauthenticated senders whether
//! their ciphertext decrypted.

use serde_json::Value;
use subtle::ConstantTimeEq;

use super::config::FeishuConfig;
use super::crypto::{decrypt, verify_signature};
use crate::approval_gate::ApprovalDecision;
use crate::approval_gate::channel::chat_kit::signed::{
    SignedHeader, check_timestamp, signed_header,
};
use crate::approval_gate::channel::chat_kit::wire::{clip, lookup, optional_str};
use crate::approval_gate::channel::{
    Callback, CallbackError, DecisionCallback, RawCallback, decision_reason,
};

/// The header carrying the request's Unix time in seconds.
pub const TIMESTAMP_HEADER: &str = "x-lark-request-timestamp";
/// The header carrying the request's nonce.
pub const NONCE_HEADER: &str = "x-lark-request-nonce";
/// The header carrying the request's signature.
pub const SIGNATURE_HEADER: &str = "x-lark-signature";

/// The only callback event this channel handles.
pub const CARD_ACTION_EVENT_TYPE: &str = "card.action.trigger";

const LEGACY_MESSAGE: &str = "this is a legacy card callback (card.action.trigger_v1), which Feishu \
    neither encrypts nor signs with the Encrypt Key, so it cannot be authenticated; in the Feishu \
    developer console switch the app to the new card callback (card.action.trigger) under \
    Events & Callbacks → Callback Configuration";

/// Verifies and decodes a callback as if the current Unix time were `now`.
pub(crate) fn verify_at(
    config: &FeishuConfig,
    raw: RawCallback<'_>,
    now: i64,
) -> Result<Callback, CallbackError> {
    match signed_header(raw.headers, SIGNATURE_HEADER) {
        SignedHeader::Absent => verify_unsigned(config, raw.body),
        SignedHeader::Invalid => Err(CallbackError::BadSignature),
        SignedHeader::Present(given) => {
            let SignedHeader::Present(nonce) = signed_header(raw.headers, NONCE_HEADER) else {
                return Err(CallbackError::BadSignature);
            };
            let SignedHeader::Present(timestamp) = signed_header(raw.headers, TIMESTAMP_HEADER)
            else {
                return Err(CallbackError::StaleTimestamp);
            };
            if !verify_signature(timestamp, nonce, &config.encrypt_key, raw.body, given) {
                // A legacy callback is signed differently (SHA-1 with the
                // Verification Token) and arrives in plaintext: name it.
                if is_legacy(&parse_plaintext_body(raw.body)) {
                    return Err(CallbackError::Unsupported(LEGACY_MESSAGE.to_owned()));
                }
                return Err(CallbackError::BadSignature);
            }
            check_timestamp(timestamp, now, config.limits.timestamp_window.as_secs())?;
            let encrypted = envelope(raw.body)?;
            let plaintext = decrypt(&config.encrypt_key, &encrypted)
                .map_err(|error| CallbackError::Decrypt(error.to_string()))?;
            let payload: Value = serde_json::from_str(&plaintext).map_err(|error| {
                CallbackError::Malformed(format!("the decrypted payload is not JSON ({error})"))
            })?;
            decode(config, &payload)
        }
    }
}

/// A body without `X-Lark-Signature`: only an encrypted `url_verification`
/// is accepted.
fn verify_unsigned(config: &FeishuConfig, body: &[u8]) -> Result<Callback, CallbackError> {
    let plain = parse_plaintext_body(body);
    if is_legacy(&plain) {
        return Err(CallbackError::Unsupported(LEGACY_MESSAGE.to_owned()));
    }
    let Some(encrypted) = plain.get("encrypt").and_then(Value::as_str) else {
        return Err(CallbackError::BadSignature);
    };
    let Ok(plaintext) = decrypt(&config.encrypt_key, encrypted) else {
        return Err(CallbackError::BadSignature);
    };
    let Ok(payload) = serde_json::from_str::<Value>(&plaintext) else {
        return Err(CallbackError::BadSignature);
    };
    if payload.get("type").and_then(Value::as_str) == Some("url_verification") {
        url_verification(config, &payload)
    } else {
        Err(CallbackError::BadSignature)
    }
}

/// The body parsed as JSON, or `Null` if it is not JSON.
fn parse_plaintext_body(body: &[u8]) -> Value {
    serde_json::from_slice(body).unwrap_or(Value::Null)
}

/// The `encrypt` field of an `{"encrypt": "..."}` body.
fn envelope(body: &[u8]) -> Result<String, CallbackError> {
    let value: Value = serde_json::from_slice(body).map_err(|error| {
        CallbackError::Malformed(format!(
            "the body is not JSON ({error}); Feishu sends {{\"encrypt\": \"...\"}}"
        ))
    })?;
    match value.get("encrypt") {
        Some(Value::String(encrypted)) => Ok(encrypted.clone()),
        Some(_) => Err(CallbackError::Malformed(
            "the `encrypt` field is not a string".to_owned(),
        )),
        None if is_legacy(&value) => Err(CallbackError::Unsupported(LEGACY_MESSAGE.to_owned())),
        None => Err(CallbackError::Malformed(
            "the body has no `encrypt` field: plaintext callbacks are refused because an \
             Encrypt Key is configured; set the same Encrypt Key in the Feishu developer \
             console (Events & Callbacks → Encryption Strategy)"
                .to_owned(),
        )),
    }
}

/// Whether a payload is Feishu's legacy card callback: no `schema` and no
/// `header`, with `open_message_id` or `action` at the top level.
pub(crate) fn is_legacy(payload: &Value) -> bool {
    let Some(object) = payload.as_object() else {
        return false;
    };
    !object.contains_key("schema")
        && !object.contains_key("header")
        && (object.contains_key("open_message_id") || object.contains_key("action"))
}

/// A decrypted, authenticated payload → a [`Callback`].
fn decode(config: &FeishuConfig, payload: &Value) -> Result<Callback, CallbackError> {
    if !payload.is_object() {
        return Err(CallbackError::Malformed(
            "the decrypted payload is not a JSON object".to_owned(),
        ));
    }
    if payload.get("type").and_then(Value::as_str) == Some("url_verification") {
        return url_verification(config, payload);
    }
    if is_legacy(payload) {
        return Err(CallbackError::Unsupported(LEGACY_MESSAGE.to_owned()));
    }
    match payload.get("schema") {
        None => {
            return Err(CallbackError::Malformed(
                "`schema` is missing: expected a schema 2.0 card callback (card.action.trigger)"
                    .to_owned(),
            ));
        }
        Some(Value::String(schema)) if schema == "2.0" => {}
        Some(other) => {
            return Err(CallbackError::Unsupported(format!(
                "schema {} is not handled: only schema 2.0 card callbacks (card.action.trigger) are",
                clip(&other.to_string())
            )));
        }
    }
    let header = payload
        .get("header")
        .filter(|header| header.is_object())
        .ok_or_else(|| missing("header"))?;
    match header.get("token").and_then(Value::as_str) {
        Some(token) if token_matches(token, &config.verification_token) => {}
        _ => return Err(CallbackError::BadToken),
    }
    let event_type = required_str(payload, &["header", "event_type"])?;
    if event_type != CARD_ACTION_EVENT_TYPE {
        return Err(CallbackError::Unsupported(format!(
            "event type \"{}\" is not handled here: point only the card callback \
             ({CARD_ACTION_EVENT_TYPE}) at this URL",
            clip(event_type)
        )));
    }
    let event_id = required_str(payload, &["header", "event_id"])?;
    let request_id = required_str(payload, &["event", "action", "value", "request_id"])?;
    let decision_text = required_str(payload, &["event", "action", "value", "decision"])?;
    let decision = ApprovalDecision::parse(decision_text).ok_or_else(|| {
        CallbackError::Malformed(format!(
            "event.action.value.decision is \"{}\", expected \"approve\" or \"reject\"",
            clip(decision_text)
        ))
    })?;
    let operator = required_str(payload, &["event", "operator", "open_id"])?;
    let channel_id = required_str(payload, &["event", "context", "open_chat_id"])?;
    let message_ref = lookup(payload, &["event", "context", "open_message_id"])
        .and_then(Value::as_str)
        .filter(|text| !text.is_empty())
        .map(str::to_owned);
    // A reason typed into the card's form arrives as `form_value.reason`.
    let reason = optional_str(payload, &["event", "action", "form_value", "reason"])?
        .and_then(decision_reason);
    let shown_digest =
        optional_str(payload, &["event", "action", "value", "digest"])?.map(str::to_owned);
    Ok(Callback::Decision(DecisionCallback {
        event_id: event_id.to_owned(),
        request_id: request_id.to_owned(),
        decision,
        operator: operator.to_owned(),
        channel_id: channel_id.to_owned(),
        message_ref,
        shown_digest,
        reason,
    }))
}

fn url_verification(config: &FeishuConfig, payload: &Value) -> Result<Callback, CallbackError> {
    match payload.get("token").and_then(Value::as_str) {
        Some(token) if token_matches(token, &config.verification_token) => {}
        _ => return Err(CallbackError::BadToken),
    }
    let challenge = payload
        .get("challenge")
        .and_then(Value::as_str)
        .ok_or_else(|| missing("challenge"))?;
    Ok(Callback::UrlVerification {
        challenge: challenge.to_owned(),
    })
}

fn token_matches(given: &str, expected: &str) -> bool {
    given.as_bytes().ct_eq(expected.as_bytes()).into()
}

fn required_str<'a>(value: &'a Value, path: &[&str]) -> Result<&'a str, CallbackError> {
    crate::approval_gate::channel::chat_kit::wire::required_str(value, path, missing)
}

fn missing(field: &str) -> CallbackError {
    CallbackError::Malformed(format!(
        "{field} is missing: expected a schema 2.0 card.action.trigger callback from a card sent by this channel"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval_gate::channel::feishu::crypto::{encrypt, signature};
    use axum::http::{HeaderMap, HeaderValue};
    use serde_json::json;

    const NOW: i64 = 1_700_000_000;

    fn config() -> FeishuConfig {
        FeishuConfig::new("cli_1", "secret", "oc_chat", "vtoken", "ekey")
    }

    fn event() -> Value {
        json!({
            "schema": "2.0",
            "header": {"event_id": "ev_1", "token": "vtoken", "create_time": "1",
                       "event_type": "card.action.trigger", "tenant_key": "t", "app_id": "cli_1"},
            "event": {
                "operator": {"open_id": "ou_op", "tenant_key": "t", "union_id": "on_x"},
                "token": "c-1",
                "action": {"value": {"request_id": "req-1", "decision": "approve"}, "tag": "button"},
                "host": "im_message",
                "context": {"open_message_id": "om_1", "open_chat_id": "oc_chat"},
            },
        })
    }

    fn sealed(payload: &Value, timestamp: i64) -> (HeaderMap, Vec<u8>) {
        let body = json!({"encrypt": encrypt("ekey", &payload.to_string(), [3; 16])})
            .to_string()
            .into_bytes();
        let ts = timestamp.to_string();
        let mut headers = HeaderMap::new();
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from_str(&ts).unwrap());
        headers.insert(NONCE_HEADER, HeaderValue::from_static("n1"));
        let sig = signature(&ts, "n1", "ekey", &body);
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(&sig).unwrap());
        (headers, body)
    }

    fn verify(headers: &HeaderMap, body: &[u8], now: i64) -> Result<Callback, CallbackError> {
        verify_at(&config(), RawCallback { headers, body }, now)
    }

    #[test]
    fn a_signed_click_decodes_within_the_window_bounds_included() {
        let (headers, body) = sealed(&event(), NOW);
        for skew in [0, 300, -300] {
            let Ok(Callback::Decision(decision)) = verify(&headers, &body, NOW + skew) else {
                panic!("a click {skew} s away is a decision");
            };
            let DecisionCallback {
                request_id,
                decision,
                operator,
                channel_id,
                event_id,
                message_ref,
                ..
            } = decision;
            assert_eq!(
                (
                    request_id,
                    decision,
                    operator,
                    channel_id,
                    event_id,
                    message_ref
                ),
                (
                    "req-1".to_owned(),
                    ApprovalDecision::Approve,
                    "ou_op".to_owned(),
                    "oc_chat".to_owned(),
                    "ev_1".to_owned(),
                    Some("om_1".to_owned())
                )
            );
        }
        for skew in [301, -301] {
            let stale = verify(&headers, &body, NOW + skew);
            assert_eq!(stale, Err(CallbackError::StaleTimestamp), "{skew}");
        }
    }

    #[test]
    fn missing_fields_are_named() {
        let mut payload = event();
        payload["event"]["operator"]
            .as_object_mut()
            .unwrap()
            .remove("open_id");
        let (headers, body) = sealed(&payload, NOW);
        match verify(&headers, &body, NOW) {
            Err(CallbackError::Malformed(message)) => {
                assert!(message.contains("event.operator.open_id"), "{message}")
            }
            other => panic!("unexpected {other:?}"),
        }
        let mut payload = event();
        payload["event"]["action"]["value"]["decision"] = json!("maybe");
        let (headers, body) = sealed(&payload, NOW);
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Malformed(_))
        ));
        let mut payload = event();
        payload["header"]["event_type"] = json!("im.message.receive_v1");
        let (headers, body) = sealed(&payload, NOW);
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Unsupported(_))
        ));
    }

    #[test]
    fn missing_headers() {
        let (mut headers, body) = sealed(&event(), NOW);
        headers.remove(TIMESTAMP_HEADER);
        assert_eq!(
            verify(&headers, &body, NOW),
            Err(CallbackError::StaleTimestamp)
        );
        let (mut headers, body) = sealed(&event(), NOW);
        headers.remove(NONCE_HEADER);
        assert_eq!(
            verify(&headers, &body, NOW),
            Err(CallbackError::BadSignature)
        );
        let (mut headers, body) = sealed(&event(), NOW);
        headers.remove(SIGNATURE_HEADER);
        assert_eq!(
            verify(&headers, &body, NOW),
            Err(CallbackError::BadSignature)
        );
        let (mut headers, body) = sealed(&event(), NOW);
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from_static("soon"));
        // The signature covers the timestamp text, so re-sign it.
        let sig = signature("soon", "n1", "ekey", &body);
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(&sig).unwrap());
        assert_eq!(
            verify(&headers, &body, NOW),
            Err(CallbackError::StaleTimestamp)
        );
    }

    #[test]
    fn unsigned_url_verification() {
        let payload = json!({"type": "url_verification", "token": "vtoken", "challenge": "ch-1"});
        let body = json!({"encrypt": encrypt("ekey", &payload.to_string(), [5; 16])})
            .to_string()
            .into_bytes();
        let headers = HeaderMap::new();
        assert_eq!(
            verify(&headers, &body, NOW),
            Ok(Callback::UrlVerification {
                challenge: "ch-1".into()
            })
        );
        // An unsigned click is refused.
        let body = json!({"encrypt": encrypt("ekey", &event().to_string(), [5; 16])})
            .to_string()
            .into_bytes();
        assert_eq!(
            verify(&headers, &body, NOW),
            Err(CallbackError::BadSignature)
        );
        // A plaintext challenge is refused.
        assert_eq!(
            verify(&headers, payload.to_string().as_bytes(), NOW),
            Err(CallbackError::BadSignature)
        );
    }

    #[test]
    fn legacy_is_unsupported() {
        let legacy = json!({"open_id": "ou_1", "open_message_id": "om_1", "token": "c-1",
                            "action": {"value": {"request_id": "r", "decision": "approve"}}});
        let body = legacy.to_string().into_bytes();
        let mut headers = HeaderMap::new();
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Unsupported(_))
        ));
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from_static("1700000000"));
        headers.insert(NONCE_HEADER, HeaderValue::from_static("n"));
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_static("abcd"));
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Unsupported(_))
        ));
        // Encrypted and signed, still refused.
        let (headers, body) = sealed(&legacy, NOW);
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Unsupported(message)) if message.contains("card.action.trigger")
        ));
    }
}
