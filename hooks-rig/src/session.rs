//! Session-start hooks before a rig run: they may stop it, and what they add
//! reaches the model as a context document of the run.

use hooks_runtime::{HookContext, SessionStart, SessionStopped};
use rig_agent::AgentRunner;
use rig_core::completion::Document;
use rig_core::tool::ToolContextError;

use crate::call_context::CallContext;
use crate::hooks::Hooks;

/// The id of the context document [`Hooks::prepare`] adds to a run.
pub const SESSION_DOCUMENT_ID: &str = "hooks_session_context";

/// Why [`Hooks::prepare`] did not hand the run back.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PrepareError {
    /// A session-start hook blocked (or failed, closed): do not run the agent.
    #[error(transparent)]
    Stopped(#[from] SessionStopped),
    /// The [`CallContext`] could not be stored in rig's `ToolContext`.
    #[error("the request's ids could not be stored for the tools: {0}")]
    Context(#[from] ToolContextError),
}

impl Hooks {
    /// Runs the session-start hooks for a request with these ids.
    pub async fn start_session(&self, ids: &CallContext) -> Result<SessionStart, SessionStopped> {
        self.inner()
            .start_session(ids.stamp(HookContext::session()))
            .await
    }

    /// Gets a rig run ready under the hooks, in one call: runs the
    /// session-start hooks (a block stops here), adds what they contribute
    /// (`additional_context`) as a context document of the run (id
    /// [`SESSION_DOCUMENT_ID`]), and sets the run's `ToolContext` to carry
    /// `ids` for every hooked tool.
    ///
    /// The run's `ToolContext` is replaced; a run that needs its own values
    /// in it too puts `ids` in with [`CallContext::insert_into`] and calls
    /// [`start_session`](Self::start_session) itself.
    pub async fn prepare(
        &self,
        run: AgentRunner,
        ids: CallContext,
    ) -> Result<AgentRunner, PrepareError> {
        let start = self.start_session(&ids).await?;
        let run = run.tool_context(ids.into_tool_context()?);
        Ok(match session_document(&start) {
            Some(document) => run.document(document),
            None => run,
        })
    }
}

/// What the session-start hooks contribute, as a rig context document
/// (`None` when they added nothing).
pub fn session_document(start: &SessionStart) -> Option<Document> {
    (!start.context.trim().is_empty()).then(|| Document {
        id: SESSION_DOCUMENT_ID.to_owned(),
        text: start.context.clone(),
        additional_props: Default::default(),
    })
}
