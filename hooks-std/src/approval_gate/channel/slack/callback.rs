//! Verifying and decoding interactivity requests (`block_actions`).
//!
//! Order of checks: body size, the signature over the raw body bytes
//! (`X-Slack-Signature`, keyed with the signing secret, covering
//! `X-Slack-Request-Timestamp`), the timestamp window, and only then the
//! body: a form with one `payload` field holding the `block_actions` JSON.
//! Whether the action targets a request of *this* workspace and channel, and
//! whether the clicker may decide it, is checked by the gate's state machine
//! ([`Approvals`](crate::approval_gate::Approvals)) against the stored request: the
//! decoded [`DecisionCallback::channel_id`] is `{team id}/{channel id}`, as
//! [`SlackChannel::channel_id`](super::SlackChannel) is.

use serde_json::Value;

use super::blocks::action_id;
use super::config::SlackConfig;
use super::signature::{SIGNATURE_HEADER, TIMESTAMP_HEADER, verify_signature};
use crate::approval_gate::ApprovalDecision;
use crate::approval_gate::channel::chat_kit::signed::{
    SignedHeader, check_timestamp, signed_header,
};
use crate::approval_gate::channel::chat_kit::wire::{clip, lookup, optional_str};
use crate::approval_gate::channel::{
    Callback, CallbackError, DecisionCallback, RawCallback, decision_reason,
};

/// The largest interactivity body accepted (the callback router refuses
/// larger ones unread, too).
pub const MAX_CALLBACK_BODY: usize = 64 * 1024;

/// The only interaction payload type this channel handles.
pub const BLOCK_ACTIONS: &str = "block_actions";

/// The channel id stored with requests: the workspace and the channel.
pub(crate) fn scoped_channel_id(team_id: &str, channel_id: &str) -> String {
    format!("{team_id}/{channel_id}")
}

/// Verifies and decodes an interactivity request as if the current Unix
/// time were `now`.
pub(crate) fn verify_at(
    config: &SlackConfig,
    raw: RawCallback<'_>,
    now: i64,
) -> Result<Callback, CallbackError> {
    if raw.body.len() > MAX_CALLBACK_BODY {
        return Err(CallbackError::Malformed(format!(
            "the body is larger than {MAX_CALLBACK_BODY} bytes"
        )));
    }
    let SignedHeader::Present(timestamp) = signed_header(raw.headers, TIMESTAMP_HEADER) else {
        return Err(CallbackError::StaleTimestamp);
    };
    let SignedHeader::Present(given) = signed_header(raw.headers, SIGNATURE_HEADER) else {
        return Err(CallbackError::BadSignature);
    };
    if !verify_signature(&config.signing_secret, timestamp, raw.body, given) {
        return Err(CallbackError::BadSignature);
    }
    check_timestamp(timestamp, now, config.limits.timestamp_window.as_secs())?;
    let payload = payload(raw.body)?;
    decode(&payload)
}

/// The `payload` field of the form body, parsed as JSON.
fn payload(body: &[u8]) -> Result<Value, CallbackError> {
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(body).map_err(|error| {
        CallbackError::Malformed(format!(
            "the body is not application/x-www-form-urlencoded ({error})"
        ))
    })?;
    let mut payloads = fields.into_iter().filter(|(name, _)| name == "payload");
    let (Some((_, payload)), None) = (payloads.next(), payloads.next()) else {
        return Err(CallbackError::Malformed(
            "the body must have exactly one `payload` field (Slack's interactivity request)"
                .to_owned(),
        ));
    };
    let payload: Value = serde_json::from_str(&payload)
        .map_err(|error| CallbackError::Malformed(format!("the payload is not JSON ({error})")))?;
    if !payload.is_object() {
        return Err(CallbackError::Malformed(
            "the payload is not a JSON object".to_owned(),
        ));
    }
    Ok(payload)
}

/// An authenticated `block_actions` payload → a [`Callback`].
fn decode(payload: &Value) -> Result<Callback, CallbackError> {
    let kind = required_str(payload, &["type"])?;
    if kind != BLOCK_ACTIONS {
        return Err(CallbackError::Unsupported(format!(
            "interaction type \"{}\" is not handled here: only the buttons of approval messages \
             ({BLOCK_ACTIONS}) are",
            clip(kind)
        )));
    }
    let team = required_str(payload, &["team", "id"])?;
    let user = required_str(payload, &["user", "id"])?;
    let trigger_id = required_str(payload, &["trigger_id"])?;
    let channel = match lookup(payload, &["channel", "id"]) {
        Some(_) => required_str(payload, &["channel", "id"])?,
        None => required_str(payload, &["container", "channel_id"])?,
    };
    let actions = payload
        .get("actions")
        .and_then(Value::as_array)
        .ok_or_else(|| missing("actions"))?;
    let [action] = actions.as_slice() else {
        return Err(CallbackError::Malformed(format!(
            "actions holds {} entries; a button press reports exactly one",
            actions.len()
        )));
    };
    let value_text = required_str(action, &["value"])?;
    let value: Value = serde_json::from_str(value_text).map_err(|_| {
        CallbackError::Malformed(
            "actions[0].value is not the JSON an approval button carries".to_owned(),
        )
    })?;
    let request_id = required_str(&value, &["request_id"])?;
    let decision_text = required_str(&value, &["decision"])?;
    let decision = ApprovalDecision::parse(decision_text).ok_or_else(|| {
        CallbackError::Malformed(format!(
            "the button's decision is \"{}\", expected \"approve\" or \"reject\"",
            clip(decision_text)
        ))
    })?;
    let given_action = required_str(action, &["action_id"])?;
    if given_action != action_id(request_id, decision) {
        return Err(CallbackError::Malformed(
            "actions[0].action_id does not match the button's value".to_owned(),
        ));
    }
    let action_ts = lookup(action, &["action_ts"])
        .and_then(Value::as_str)
        .unwrap_or("");
    let message_ts = lookup(payload, &["container", "message_ts"])
        .or_else(|| lookup(payload, &["message", "ts"]))
        .and_then(Value::as_str)
        .filter(|ts| !ts.is_empty());
    // A reason typed into the message's input block (block and action id
    // `reason`) arrives in the interaction's state.
    let reason = optional_str(payload, &["state", "values", "reason", "reason", "value"])?
        .and_then(decision_reason);
    let shown_digest = optional_str(&value, &["digest"])?.map(str::to_owned);
    Ok(Callback::Decision(DecisionCallback {
        // One click, one trigger id: a redelivery of the same click repeats
        // it, a second click gets a new one.
        event_id: format!("slack:{team}:{trigger_id}:{action_ts}"),
        request_id: request_id.to_owned(),
        decision,
        operator: user.to_owned(),
        channel_id: scoped_channel_id(team, channel),
        message_ref: message_ts.map(|ts| super::client::message_ref(channel, ts)),
        shown_digest,
        reason,
    }))
}

fn required_str<'a>(value: &'a Value, path: &[&str]) -> Result<&'a str, CallbackError> {
    crate::approval_gate::channel::chat_kit::wire::required_str(value, path, missing)
}

fn missing(field: &str) -> CallbackError {
    CallbackError::Malformed(format!(
        "{field} is missing: expected a block_actions payload from a button of an approval \
         message sent by this channel"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::approval_gate::channel::slack::signature::signature;
    use axum::http::{HeaderMap, HeaderValue};
    use serde_json::json;

    const NOW: i64 = 1_700_000_000;

    fn config() -> SlackConfig {
        SlackConfig::new("xoxb-1", "sign-secret", "C1", "T1")
    }

    fn payload() -> Value {
        json!({
            "type": "block_actions",
            "team": {"id": "T1", "domain": "acme"},
            "user": {"id": "U1", "username": "alice", "team_id": "T1"},
            "api_app_id": "A1",
            "container": {"type": "message", "message_ts": "1700000000.000100",
                          "channel_id": "C1", "is_ephemeral": false},
            "trigger_id": "123.456.abc",
            "channel": {"id": "C1", "name": "approvals"},
            "response_url": "https://hooks.slack.com/actions/T1/1/x",
            "actions": [{"type": "button", "block_id": "hooks_approval",
                         "action_id": "approve:req-1",
                         "value": "{\"request_id\":\"req-1\",\"decision\":\"approve\"}",
                         "action_ts": "1700000001.000200"}],
        })
    }

    fn signed(payload: &Value, timestamp: i64) -> (HeaderMap, Vec<u8>) {
        let body = serde_urlencoded::to_string([("payload", payload.to_string())])
            .unwrap()
            .into_bytes();
        let ts = timestamp.to_string();
        let mut headers = HeaderMap::new();
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from_str(&ts).unwrap());
        let sig = signature("sign-secret", &ts, &body);
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(&sig).unwrap());
        (headers, body)
    }

    fn verify(headers: &HeaderMap, body: &[u8], now: i64) -> Result<Callback, CallbackError> {
        verify_at(&config(), RawCallback { headers, body }, now)
    }

    #[test]
    fn a_signed_click_is_decoded_only_within_the_window() {
        let (headers, body) = signed(&payload(), NOW);
        let refused = [NOW + 301, NOW - 301].map(|now| verify(&headers, &body, now));
        assert_eq!(refused, [const { Err(CallbackError::StaleTimestamp) }; 2]);
        let clicks = [NOW - 300, NOW, NOW + 300].map(|now| match verify(&headers, &body, now) {
            Ok(Callback::Decision(click)) => click,
            other => panic!("at {now}: {other:?}"),
        });
        for click in clicks {
            assert_eq!(click.request_id, "req-1");
            assert_eq!(click.decision, ApprovalDecision::Approve);
            assert_eq!(click.operator, "U1");
            assert_eq!(click.channel_id, "T1/C1");
            assert_eq!(click.message_ref.as_deref(), Some("C1:1700000000.000100"));
            assert!(click.event_id.contains("123.456.abc"), "{}", click.event_id);
        }
    }

    #[test]
    fn fields_are_checked() {
        let mut bad = payload();
        bad["actions"][0]["action_id"] = json!("reject:req-1");
        let (headers, body) = signed(&bad, NOW);
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Malformed(_))
        ));
        let mut bad = payload();
        bad["type"] = json!("view_submission");
        let (headers, body) = signed(&bad, NOW);
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Unsupported(_))
        ));
        let mut bad = payload();
        bad["user"].as_object_mut().unwrap().remove("id");
        let (headers, body) = signed(&bad, NOW);
        match verify(&headers, &body, NOW) {
            Err(CallbackError::Malformed(message)) => assert!(message.contains("user.id")),
            other => panic!("unexpected {other:?}"),
        }
        let mut bad = payload();
        bad["actions"] = json!([]);
        let (headers, body) = signed(&bad, NOW);
        assert!(matches!(
            verify(&headers, &body, NOW),
            Err(CallbackError::Malformed(_))
        ));
    }

    #[test]
    fn a_non_numeric_timestamp_is_stale_even_when_signed() {
        let (_, body) = signed(&payload(), NOW);
        let mut headers = HeaderMap::new();
        headers.insert(TIMESTAMP_HEADER, HeaderValue::from_static("+1700000000"));
        let sig = signature("sign-secret", "+1700000000", &body);
        headers.insert(SIGNATURE_HEADER, HeaderValue::from_str(&sig).unwrap());
        assert_eq!(
            verify(&headers, &body, NOW),
            Err(CallbackError::StaleTimestamp)
        );
    }
}
