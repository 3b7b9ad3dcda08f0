//! Feishu (and Lark): approval cards through the Open API, verified callbacks.
//!
//! [`FeishuChannel`] posts a Card JSON 2.0 approval card ([`approval_card`])
//! to one group chat as the app's bot, replaces it with an outcome card
//! without buttons ([`outcome_card`]) once the request is decided, and
//! verifies button presses delivered to the callback URL.
//!
//! Callbacks must use the **new card callback** (`card.action.trigger`,
//! schema 2.0), encrypted and signed with the app's Encrypt Key, which is
//! therefore mandatory in [`FeishuConfig`]. The **legacy card callback**
//! (`card.action.trigger_v1`, "消息卡片回传交互（旧）") is refused with
//! [`CallbackError::Unsupported`](crate::approval_gate::channel::CallbackError::Unsupported):
//! Feishu neither encrypts it nor signs it with the Encrypt Key (its only
//! signature is a SHA-1 over the Verification Token, which travels in every
//! event), so it cannot be authenticated as strongly, and it cannot answer
//! with a Card JSON 2.0 card. Switch the app to the new callback in the
//! developer console (Events & Callbacks → Callback Configuration).
//!
//! A fake of the Open API that also plays the user's side, delivering
//! encrypted, signed button presses, is test support in the `hooks-testkit`
//! crate (`FakeFeishu`).

mod callback;
mod card;
mod client;
mod config;
mod crypto;
mod settings;

pub use callback::{CARD_ACTION_EVENT_TYPE, NONCE_HEADER, SIGNATURE_HEADER, TIMESTAMP_HEADER};
pub use card::{ARGS_EXCERPT_CHARS, REASON_INPUT_NAME, approval_card, outcome_card};
pub use client::{
    FeishuChannel, INITIAL_RATE_LIMIT_BACKOFF, MAX_RATE_LIMIT_WAIT, RATE_LIMIT_CODE,
    TOKEN_ERROR_CODES, TOKEN_REFRESH_MARGIN,
};
pub use config::{FEISHU_BASE_URL, FeishuConfig, LARK_BASE_URL};
pub use crypto::{DecryptError, decrypt, encrypt, signature, verify_signature};
pub use settings::FeishuSettings;
