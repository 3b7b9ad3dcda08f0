//! What a hook decides.

use serde_json::Value;

/// A hook's decision, with any rewrite and audit trail.
///
/// Closed by construction: the fields are private, so a block always carries
/// its reason and an allow never carries an error. Constructors read like
/// prose:
///
/// ```
/// use hooks::HookResult;
/// use serde_json::json;
///
/// let ok = HookResult::allow();
/// let no = HookResult::block("Org is in read-only mode — write blocked.");
/// let rewritten = HookResult::allow().with_args(json!({"limit": 100})).with_side_effect("capped limit");
/// assert!(!ok.is_blocked() && no.is_blocked() && rewritten.modified_args().is_some());
/// assert_eq!(no.block_reason(), Some("Org is in read-only mode — write blocked."));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct HookResult {
    /// `Some(reason)` when the hook blocks. A `Box<str>`, not a `String`,
    /// to keep the common (allow) case small.
    blocked: Option<Box<str>>,
    /// Everything a hook may add besides its verdict; boxed because most
    /// decisions carry none of it, and a plain allow is moved per matched hook.
    changes: Option<Box<Changes>>,
}

/// The rare parts of a decision.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Changes {
    pub(crate) modified_args: Option<Value>,
    pub(crate) modified_result: Option<Value>,
    pub(crate) modified_error: Option<String>,
    pub(crate) side_effects: Vec<String>,
    pub(crate) additional_context: Option<String>,
    pub(crate) seal_args: bool,
}

impl Default for HookResult {
    fn default() -> Self {
        HookResult::allow()
    }
}

impl HookResult {
    /// Let the call proceed unchanged.
    pub const fn allow() -> Self {
        HookResult {
            blocked: None,
            changes: None,
        }
    }

    /// Stop the call; `reason` is what the LLM sees.
    pub fn block(reason: impl Into<String>) -> Self {
        HookResult {
            blocked: Some(reason.into().into_boxed_str()),
            changes: None,
        }
    }

    fn changes(&mut self) -> &mut Changes {
        self.changes.get_or_insert_with(Box::default)
    }

    /// Seal the arguments as they are after this pre hook (and any rewrite it
    /// makes): a later hook that changes them blocks the call. The approval
    /// gate seals what a person approved.
    pub fn sealing_args(mut self) -> Self {
        self.changes().seal_args = true;
        self
    }

    /// Replace the tool arguments (pre hooks); later hooks and the tool see
    /// them. Ignored on a block.
    pub fn with_args(mut self, args: Value) -> Self {
        self.changes().modified_args = Some(args);
        self
    }

    /// Replace the tool result (post hooks); later hooks and the LLM see it.
    /// Ignored on a block.
    pub fn with_result(mut self, result: Value) -> Self {
        self.changes().modified_result = Some(result);
        self
    }

    /// Replace the text of the tool's error (post hooks, when the tool failed),
    /// e.g. to cut an oversized message or redact it. Ignored when the tool
    /// succeeded, when [`with_result`](Self::with_result) is also used, or on a block.
    pub fn with_error_text(mut self, message: impl Into<String>) -> Self {
        self.changes().modified_error = Some(message.into());
        self
    }

    /// Record something the hook did, for the trace and the audit trail.
    pub fn with_side_effect(mut self, effect: impl Into<String>) -> Self {
        self.changes().side_effects.push(effect.into());
        self
    }

    /// Add context for the session (session-start hooks). Ignored on a block.
    pub fn with_context(mut self, context: impl Into<String>) -> Self {
        self.changes().additional_context = Some(context.into());
        self
    }

    /// True when the hook blocks.
    pub fn is_blocked(&self) -> bool {
        self.blocked.is_some()
    }

    /// Why the hook blocks; `None` when it allows.
    pub fn block_reason(&self) -> Option<&str> {
        self.blocked.as_deref()
    }

    /// The replacement arguments, if the hook rewrote them.
    pub fn modified_args(&self) -> Option<&Value> {
        self.changes.as_ref()?.modified_args.as_ref()
    }

    /// The replacement result, if the hook rewrote it.
    pub fn modified_result(&self) -> Option<&Value> {
        self.changes.as_ref()?.modified_result.as_ref()
    }

    /// The replacement error text, if the hook rewrote it.
    pub fn modified_error(&self) -> Option<&str> {
        self.changes.as_ref()?.modified_error.as_deref()
    }

    /// What the hook reported doing, in order.
    pub fn side_effects(&self) -> &[String] {
        self.changes
            .as_ref()
            .map_or(&[], |changes| changes.side_effects.as_slice())
    }

    /// The context the hook adds to the session, if any.
    pub fn additional_context(&self) -> Option<&str> {
        self.changes.as_ref()?.additional_context.as_deref()
    }

    /// True when the hook seals the arguments (see [`sealing_args`](Self::sealing_args)).
    pub fn seals_args(&self) -> bool {
        self.changes
            .as_ref()
            .is_some_and(|changes| changes.seal_args)
    }

    /// Puts `effects` before the side effects the hook reported (a command
    /// hook's own notes before what its command said).
    pub fn prepend_side_effects(&mut self, mut effects: Vec<String>) {
        if effects.is_empty() {
            return;
        }
        let changes = self.changes();
        effects.append(&mut changes.side_effects);
        changes.side_effects = effects;
    }

    /// Sets the replacement arguments unless the hook blocked or already
    /// rewrote them.
    pub fn default_args(&mut self, args: Value) {
        if !self.is_blocked() && self.modified_args().is_none() {
            self.changes().modified_args = Some(args);
        }
    }

    /// The verdict and the rest, for the chain engine.
    pub(crate) fn into_parts(self) -> (Option<Box<str>>, Option<Box<Changes>>) {
        (self.blocked, self.changes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_allow_is_small() {
        // A reason pointer and a changes pointer: what the dispatcher moves
        // per matched hook.
        assert!(
            std::mem::size_of::<HookResult>() <= 24,
            "{}",
            std::mem::size_of::<HookResult>()
        );
    }

    #[test]
    fn a_block_always_has_its_reason_and_an_allow_none() {
        assert_eq!(HookResult::block("no").block_reason(), Some("no"));
        let allowed = HookResult::allow()
            .with_side_effect("x")
            .with_error_text("e");
        assert!(!allowed.is_blocked());
        assert_eq!(allowed.block_reason(), None);
    }
}
