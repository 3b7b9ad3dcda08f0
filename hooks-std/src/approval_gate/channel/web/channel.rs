//! [`WebChannel`]: the channel whose "card" is a row on the approvals page
//! and an event on its streams.

use std::sync::Arc;

use serde_json::{Value, json};
use tokio::sync::broadcast;

use crate::approval_gate::ConfirmationRequest;
use crate::approval_gate::channel::{
    Callback, CallbackError, CallbackReply, Channel, ChannelFuture, RawCallback,
};

/// The kind stored with the requests of a [`WebChannel`].
pub const WEB_CHANNEL_KIND: &str = "web";

/// How many request changes a slow page may fall behind before it is sent
/// the whole list again.
const EVENT_BUFFER: usize = 256;

/// The approval channel of the built-in approvals page: no external service.
///
/// Sending a card publishes the request to the page's streams (the request
/// row is the card, read from the store); updating it publishes the final
/// request. Decisions come through the page's endpoints
/// ([`WebApprovals::router`](super::WebApprovals::router)), not through the
/// callback router; they go through the same state machine as a Feishu or
/// Slack press ([`Approvals::handle_callback`](crate::approval_gate::Approvals::handle_callback):
/// channel binding, approver scope, first decision wins, deadline). Cheap to
/// clone; clones share the stream.
#[derive(Clone)]
pub struct WebChannel {
    inner: Arc<Hub>,
}

struct Hub {
    id: String,
    events: broadcast::Sender<Arc<ConfirmationRequest>>,
}

impl std::fmt::Debug for WebChannel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebChannel")
            .field("channel_id", &self.inner.id)
            .finish_non_exhaustive()
    }
}

impl WebChannel {
    /// A web channel with instance id `channel_id` (e.g. `approvals`): its
    /// requests are stored with it, and only a page of the same id can
    /// decide them.
    pub fn new(channel_id: impl Into<String>) -> Self {
        WebChannel {
            inner: Arc::new(Hub {
                id: channel_id.into(),
                events: broadcast::channel(EVENT_BUFFER).0,
            }),
        }
    }

    /// Whether `other` is this channel or a clone of it (one event hub).
    pub(crate) fn same_hub(&self, other: &WebChannel) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Subscribes to every request this channel publishes (new, then final).
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<Arc<ConfirmationRequest>> {
        self.inner.events.subscribe()
    }

    /// Publishes `request` as it now stands to every open stream.
    pub(crate) fn publish(&self, request: &ConfirmationRequest) {
        // No subscriber is not an error: the page reads the store when it opens.
        let _ = self.inner.events.send(Arc::new(request.clone()));
    }
}

impl Channel for WebChannel {
    fn kind(&self) -> &'static str {
        WEB_CHANNEL_KIND
    }

    fn channel_id(&self) -> &str {
        &self.inner.id
    }

    fn send_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, String> {
        Box::pin(async move {
            self.publish(request);
            Ok(format!("web:{}", request.id))
        })
    }

    fn update_card<'a>(&'a self, request: &'a ConfirmationRequest) -> ChannelFuture<'a, ()> {
        Box::pin(async move {
            self.publish(request);
            Ok(())
        })
    }

    fn verify_callback(&self, _: RawCallback<'_>) -> Result<Callback, CallbackError> {
        Err(CallbackError::Unsupported(
            "the web channel takes no platform callbacks; decisions come through the approvals \
             page (mount `WebApprovals::router`)"
                .into(),
        ))
    }

    fn as_web(&self) -> Option<&WebChannel> {
        Some(self)
    }

    fn callback_reply(&self, reply: CallbackReply<'_>) -> Value {
        json!({ "message": reply.message })
    }
}
