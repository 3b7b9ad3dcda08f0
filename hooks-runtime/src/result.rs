//! What a hook decides.

use serde_json::Value;

/// A hook's decision, with any rewrite and audit trail.
///
/// Constructors read like prose:
///
/// ```
/// use hooks_runtime::HookResult;
/// use serde_json::json;
///
/// let ok = HookResult::allow();
/// let no = HookResult::block("Org is in read-only mode — write blocked.");
/// let rewritten = HookResult::allow().with_args(json!({"limit": 100})).with_side_effect("capped limit");
/// assert!(ok.allow && !no.allow && rewritten.modified_args.is_some());
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HookResult {
    /// Whether the call may proceed (pre) or the result may reach the LLM (post).
    pub allow: bool,
    /// Why the call was blocked; the LLM sees it as the observation.
    pub error: Option<String>,
    /// Replacement tool arguments (pre hooks); later hooks and the tool see them.
    pub modified_args: Option<Value>,
    /// Replacement tool result (post hooks); later hooks and the LLM see it.
    pub modified_result: Option<Value>,
    /// Replacement text for the tool's error (post hooks, when the tool
    /// failed); later hooks and the LLM see it. Ignored when the tool succeeded
    /// or when [`modified_result`](Self::modified_result) is set.
    pub modified_error: Option<String>,
    /// What the hook did, for the trace and the audit trail.
    pub side_effects: Vec<String>,
    /// Text to add to the session's context (session-start hooks).
    pub additional_context: Option<String>,
    /// Seal the arguments as they are after this pre hook (and any rewrite it
    /// makes): a later hook that changes them blocks the call. The approval
    /// gate seals what a person approved.
    pub seal_args: bool,
}

impl Default for HookResult {
    fn default() -> Self {
        HookResult::allow()
    }
}

impl HookResult {
    /// Let the call proceed unchanged.
    pub fn allow() -> Self {
        HookResult {
            allow: true,
            error: None,
            modified_args: None,
            modified_result: None,
            modified_error: None,
            side_effects: Vec::new(),
            additional_context: None,
            seal_args: false,
        }
    }

    /// Seal the arguments: no later pre hook may change them (see [`seal_args`](Self::seal_args)).
    pub fn sealing_args(mut self) -> Self {
        self.seal_args = true;
        self
    }

    /// Stop the call; `reason` is what the LLM sees.
    pub fn block(reason: impl Into<String>) -> Self {
        HookResult {
            allow: false,
            error: Some(reason.into()),
            ..HookResult::allow()
        }
    }

    /// Replace the tool arguments (pre hooks).
    pub fn with_args(mut self, args: Value) -> Self {
        self.modified_args = Some(args);
        self
    }

    /// Replace the tool result (post hooks).
    pub fn with_result(mut self, result: Value) -> Self {
        self.modified_result = Some(result);
        self
    }

    /// Replace the text of the tool's error (post hooks, when the tool failed),
    /// e.g. to cut an oversized message or redact it.
    pub fn with_error_text(mut self, message: impl Into<String>) -> Self {
        self.modified_error = Some(message.into());
        self
    }

    /// Record something the hook did.
    pub fn with_side_effect(mut self, effect: impl Into<String>) -> Self {
        self.side_effects.push(effect.into());
        self
    }

    /// Add context for the session (session-start hooks).
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.additional_context = Some(context.into());
        self
    }

    /// True when the hook blocks.
    pub fn is_blocked(&self) -> bool {
        !self.allow
    }
}
