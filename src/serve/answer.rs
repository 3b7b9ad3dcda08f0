//! The hook output a Claude Code style client reads back.

use serde_json::{Map, Value, json};

use super::input::Event;

/// `PreToolUse` denied: the reason is what the model reads.
pub(super) fn deny(reason: &str) -> Value {
    json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "deny",
        "permissionDecisionReason": reason,
    }})
}

/// `PreToolUse` allowed, with the arguments the tool must get when a hook
/// rewrote them.
pub(super) fn allow(reason: &str, updated_input: Option<&Value>) -> Value {
    let mut specific = Map::new();
    specific.insert("hookEventName".into(), "PreToolUse".into());
    specific.insert("permissionDecision".into(), "allow".into());
    specific.insert("permissionDecisionReason".into(), reason.into());
    if let Some(input) = updated_input {
        specific.insert("updatedInput".into(), input.clone());
    }
    json!({ "hookSpecificOutput": specific })
}

/// Nothing to say: the client goes on as its own rules say.
pub(super) fn nothing() -> Value {
    json!({})
}

/// A post event whose result the hooks withheld: the result the model reads
/// is replaced by the reason (`updatedToolOutput`, or
/// `updatedMCPToolOutput` for an MCP tool), and `decision: "block"` tells
/// the client why. A block alone would add the reason and leave the result
/// in the model's context.
pub(super) fn withhold(tool: &str, event: &str, reason: &str) -> Value {
    let mut answer = rewritten_output(tool, event, &Value::String(reason.to_owned()));
    answer["decision"] = "block".into();
    answer["reason"] = reason.into();
    answer
}

/// An input that could not be read, or a request that could not be
/// answered: blocked in every event's terms the client may have sent. The
/// top-level `decision: "block"` stops a pre event and flags a post one;
/// a pre event known as such gets its `deny` too.
pub(super) fn unreadable(reason: &str, event: Option<Event>) -> Value {
    match event {
        Some(Event::PreToolUse) => {
            let mut answer = deny(reason);
            answer["decision"] = "block".into();
            answer["reason"] = reason.into();
            answer
        }
        Some(Event::SessionStart) => stop(reason),
        _ => json!({"decision": "block", "reason": reason}),
    }
}

/// A post event whose result a hook rewrote. MCP tools (`mcp__server__tool`)
/// take `updatedMCPToolOutput`, others `updatedToolOutput`.
pub(super) fn rewritten_output(tool: &str, event: &str, output: &Value) -> Value {
    let key = if tool.starts_with("mcp__") {
        "updatedMCPToolOutput"
    } else {
        "updatedToolOutput"
    };
    json!({"hookSpecificOutput": {"hookEventName": event, key: output}})
}

/// `SessionStart` with the hooks' context for the model.
pub(super) fn session_context(context: &str) -> Value {
    if context.is_empty() {
        return nothing();
    }
    json!({"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": context,
    }})
}

/// `SessionStart` that a hook stopped: the client must not go on.
pub(super) fn stop(reason: &str) -> Value {
    json!({"continue": false, "stopReason": reason})
}
