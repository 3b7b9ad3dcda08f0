//! The registry: an immutable, ordered set of hooks shared by every call.

mod builder;
mod describe;
mod error;
pub(crate) mod registration;

use std::sync::Arc;

pub use crate::dispatch::{MAX_RAW_ARGS_BYTES, RAW_ARGS_PREVIEW_CHARS};
pub use crate::hook::{DEFAULT_PRIORITY, DEFAULT_TIMEOUT};
pub use builder::HookRegistryBuilder;
pub use error::RegistryError;
pub use registration::{Declaration, HookRegistration, RegisteredHook, registered_hooks};

use crate::dispatch::ObserverTasks;
use crate::hook::{PostToolUseHook, PreToolUseHook, SessionStartHook};
use crate::observer::CallObserver;

/// The hooks of one agent, ordered by (priority, name) at each point.
///
/// Immutable once built, `Send + Sync`, and cheap to clone (one `Arc`), so one
/// registry serves any number of concurrent tool calls. Run a call with
/// [`run_tool_call`](HookRegistry::run_tool_call) and a session start with
/// [`start_session`](HookRegistry::start_session).
#[derive(Clone, Default)]
pub struct HookRegistry {
    pub(crate) hooks: Arc<Hooks>,
}

#[derive(Default)]
pub(crate) struct Hooks {
    pub(crate) pre: Vec<Arc<dyn PreToolUseHook>>,
    pub(crate) post: Vec<Arc<dyn PostToolUseHook>>,
    pub(crate) session_start: Vec<Arc<dyn SessionStartHook>>,
    pub(crate) observers: Vec<Arc<dyn CallObserver>>,
    /// Observer tasks still running (see [`HookRegistry::flush_observers`]).
    pub(crate) tasks: ObserverTasks,
}

impl HookRegistry {
    /// Starts building a registry.
    pub fn builder() -> HookRegistryBuilder {
        HookRegistryBuilder::new()
    }

    /// A registry of every hook the attributes registered in this program.
    pub fn from_registered() -> Result<HookRegistry, RegistryError> {
        Self::builder().registered().build()
    }

    /// The pre-tool-use hooks in run order.
    pub fn pre_tool_use(&self) -> &[Arc<dyn PreToolUseHook>] {
        &self.hooks.pre
    }

    /// The post-tool-use hooks in run order.
    pub fn post_tool_use(&self) -> &[Arc<dyn PostToolUseHook>] {
        &self.hooks.post
    }

    /// The session-start hooks in run order.
    pub fn session_start_hooks(&self) -> &[Arc<dyn SessionStartHook>] {
        &self.hooks.session_start
    }

    /// The call observers, in the order they were added.
    pub fn observers(&self) -> &[Arc<dyn CallObserver>] {
        &self.hooks.observers
    }

    /// How many hooks there are at all points.
    pub fn len(&self) -> usize {
        self.hooks.pre.len() + self.hooks.post.len() + self.hooks.session_start.len()
    }

    /// True when there are no hooks.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl std::fmt::Debug for HookRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HookRegistry")
            .field(
                "pre",
                &self.hooks.pre.iter().map(|h| h.name()).collect::<Vec<_>>(),
            )
            .field(
                "post",
                &self.hooks.post.iter().map(|h| h.name()).collect::<Vec<_>>(),
            )
            .field(
                "session_start",
                &self
                    .hooks
                    .session_start
                    .iter()
                    .map(|h| h.name())
                    .collect::<Vec<_>>(),
            )
            .finish()
    }
}
