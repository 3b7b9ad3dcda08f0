//! Session start: context from every session-start hook, in order.

use super::chain::{Chain, ChainFlow};
use super::trace::CallTrace;
use crate::context::{HookContext, HookPoint, Surface};
use crate::registry::HookRegistry;

/// A session that may start, with the context its hooks contributed.
#[derive(Debug, Clone)]
pub struct SessionStart {
    /// The hooks' `additional_context`, in run order, separated by blank lines.
    pub context: String,
    /// What each hook did.
    pub trace: CallTrace,
}

/// A session-start hook blocked or failed (closed): the session must not start.
#[derive(Debug, Clone, thiserror::Error)]
#[error("session stopped by hook `{hook}`: {reason}")]
pub struct SessionStopped {
    /// The hook that stopped it.
    pub hook: String,
    /// Why.
    pub reason: String,
    /// What each hook did.
    pub trace: CallTrace,
}

impl HookRegistry {
    /// Runs the session-start hooks before the session's first LLM call.
    ///
    /// Their `additional_context` is concatenated in run order. A hook that
    /// blocks, or fails under the default fail-closed policy, stops the
    /// session. The same chain engine as a tool call's applies the rules.
    pub async fn start_session(
        &self,
        mut ctx: HookContext,
    ) -> Result<SessionStart, SessionStopped> {
        let mut trace = CallTrace::session(self);
        if ctx.surface == Surface::Evaluation {
            trace.bypassed = true;
            return Ok(SessionStart {
                context: String::new(),
                trace,
            });
        }
        ctx.point = HookPoint::SessionStart;
        let mut context = String::new();
        let mut original = None;
        let mut chain = Chain::new(&mut ctx, &mut trace, &mut original);
        chain.context = Some(&mut context);
        if let ChainFlow::Stop { hook, reason } = chain.run(&self.hooks.session_start, 0).await {
            return Err(SessionStopped {
                hook,
                reason,
                trace,
            });
        }
        Ok(SessionStart { context, trace })
    }
}
