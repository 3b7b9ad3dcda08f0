//! Slack: approval messages through the Web API, verified interactivity.
//!
//! [`SlackChannel`] posts a Block Kit approval message
//! ([`approval_message`]) to one channel as the app's bot
//! (`chat.postMessage`), replaces it with the outcome and no buttons
//! ([`outcome_message`], `chat.update`) once the request is decided or
//! expires, and verifies the `block_actions` requests Slack sends to the
//! app's Interactivity Request URL, where the callback router
//! ([`Approvals::router`](crate::approval_gate::Approvals::router)) is mounted.
//!
//! Every interactivity request is authenticated before anything is read
//! from it: `X-Slack-Signature` must be the HMAC-SHA256 of
//! `v0:{X-Slack-Request-Timestamp}:{body}` keyed with the app's signing
//! secret ([`signature`]), compared in constant time, and the timestamp
//! within `timestamp_window` ([`SlackConfig::limits`]). An unverifiable request gets a
//! 401 and changes nothing. A verified one is answered `200 OK` at once
//! (Slack waits 3 seconds at most); then the message is updated, or, when
//! the press changed nothing (another workspace or channel, someone outside
//! the approver scope, a request already decided or expired), the clicker
//! alone is told why in an ephemeral message (`chat.postEphemeral`).
//!
//! [`SlackSettings`] is the config-file form, with the bot token and the
//! signing secret read from environment variables it names.
//!
//! A fake of the Web API that also plays the user's side, delivering signed
//! button presses, is test support in the `hooks-testkit` crate
//! (`FakeSlack`).

mod blocks;
mod callback;
mod client;
mod config;
mod settings;
mod signature;

pub use blocks::{
    ACTIONS_BLOCK_ID, REASON_BLOCK_ID, action_id, approval_message, approve_value, button_value,
    outcome_message,
};
pub use callback::{BLOCK_ACTIONS, MAX_CALLBACK_BODY};
pub use client::{INITIAL_RATE_LIMIT_BACKOFF, MAX_RATE_LIMIT_WAIT, SlackChannel};
pub use config::{MAX_TIMESTAMP_WINDOW, SLACK_API_BASE_URL, SlackConfig};
pub use settings::SlackSettings;
pub use signature::{
    SIGNATURE_HEADER, SIGNATURE_VERSION, TIMESTAMP_HEADER, signature, verify_signature,
};
