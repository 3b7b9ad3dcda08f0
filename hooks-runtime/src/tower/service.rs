//! The service: the hooks around the wrapped executor.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use serde_json::Value;
use tower_service::Service;

use super::error::ToolCallError;
use super::tool_call::ToolCall;
use crate::dispatch::ToolErrorSource;
use crate::registry::HookRegistry;

/// A tool service with the hooks in front, made by
/// [`HookLayer`](super::HookLayer) (or [`HookService::new`]).
///
/// Each call runs as [`HookRegistry::run_tool_call`]: pre hooks, then the
/// wrapped service with the final arguments (only if no hook blocked), then
/// post hooks on its result or error, then the observers (the audit log),
/// once per call whatever happens — also when the caller drops the future.
///
/// Answers `Ok(result)` with the result as the post hooks left it, or a
/// [`ToolCallError`]: blocked, withheld, or the tool's error. A wrapped
/// service that panics is a tool error, not a panic of the caller.
/// `poll_ready` is the wrapped service's; its error is
/// [`ToolCallError::NotReady`].
///
/// The wrapped service must be `Clone` (each call takes the ready clone and
/// leaves a fresh one, the usual tower pattern); wrap one that is not in
/// `tower::buffer::Buffer`.
#[derive(Debug, Clone)]
pub struct HookService<S> {
    registry: HookRegistry,
    inner: S,
}

impl<S> HookService<S> {
    /// `inner` behind `registry`'s hooks.
    pub fn new(registry: HookRegistry, inner: S) -> Self {
        HookService { registry, inner }
    }

    /// The wrapped service.
    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    /// The registry the calls run through.
    pub fn registry(&self) -> &HookRegistry {
        &self.registry
    }
}

/// The future a [`HookService`] call returns.
pub type HookServiceFuture = Pin<Box<dyn Future<Output = Result<Value, ToolCallError>> + Send>>;

impl<S> Service<ToolCall> for HookService<S>
where
    S: Service<ToolCall, Response = Value> + Clone + Send + 'static,
    S::Error: Into<ToolErrorSource>,
    S::Future: Send,
{
    type Response = Value;
    type Error = ToolCallError;
    type Future = HookServiceFuture;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), ToolCallError>> {
        self.inner
            .poll_ready(cx)
            .map_err(|error| ToolCallError::NotReady(error.into()))
    }

    fn call(&mut self, request: ToolCall) -> HookServiceFuture {
        // The clone that was polled ready serves this call; `self` keeps a
        // fresh one for the next `poll_ready`.
        let fresh = self.inner.clone();
        let mut ready = std::mem::replace(&mut self.inner, fresh);
        let registry = self.registry.clone();
        let context = request.into_context();
        Box::pin(async move {
            // What the executor receives: the call as the caller described
            // it, with the arguments the pre hooks left.
            let mut forwarded = context.clone();
            let report = registry
                .run_tool_call(context, async move |args: &Value| {
                    forwarded.tool_args = args.clone();
                    ready.call(ToolCall::from_context(forwarded)).await
                })
                .await;
            ToolCallError::from_report(report)
        })
    }
}
