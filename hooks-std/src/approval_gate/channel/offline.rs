//! A channel that cannot reach anyone: for dry runs and config checks.

use serde_json::{Value, json};

use super::{
    Callback, CallbackError, CallbackReply, Channel, ChannelError, ChannelFuture, RawCallback,
};
use crate::approval_gate::ConfirmationRequest;

/// A channel with no platform behind it. Sending a card fails, so a gate on
/// it blocks every gated call (fail closed); callbacks are refused. Useful
/// where a registry must be built but no one can be asked: `hooks check`,
/// `hooks explain`, tests of everything but approvals.
#[derive(Debug, Clone, Copy, Default)]
pub struct OfflineChannel;

impl Channel for OfflineChannel {
    fn kind(&self) -> &'static str {
        "offline"
    }

    fn channel_id(&self) -> &str {
        "offline"
    }

    fn send_card<'a>(&'a self, _: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async {
            Err(ChannelError::new(
                "offline",
                "no approval channel is configured, so nobody can be asked; configure a channel \
                 for the approval gate: Feishu, Slack or the web approvals page",
            ))
        })
    }

    fn update_card<'a>(&'a self, _: &'a ConfirmationRequest) -> ChannelFuture<'a, ()> {
        Box::pin(async { Ok(()) })
    }

    fn verify_callback(&self, _: RawCallback<'_>) -> Result<Callback, CallbackError> {
        Err(CallbackError::Unsupported(
            "the offline channel takes no callbacks".into(),
        ))
    }

    fn callback_reply(&self, reply: CallbackReply<'_>) -> Value {
        json!({ "message": reply.message })
    }
}
