//! The hook output a Claude Code style client reads back.

use serde_json::{Map, Value, json};

use super::input::Event;
use crate::output::{OutputForm, ToolOutput, same_shape};

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

/// A post event whose result the hooks withheld, or that could not be
/// checked: the result the model reads is replaced by the reason, in the
/// tool's own shape (see [`replacement`]), and `decision: "block"` tells
/// the client why. A block alone would add the reason and leave the result
/// in the model's context.
///
/// Claude Code reads no replacement of a failed tool's error, and keeps a
/// built-in tool's result when the replacement is not in that tool's shape:
/// then the session is stopped (`continue: false`) rather than the model
/// reading what the hooks withheld.
pub(super) fn withhold(tool: &str, event: &str, reason: &str, response: Option<&Value>) -> Value {
    if event == Event::PostToolUseFailure.name() {
        return stop_unchecked(reason);
    }
    let replaced = replacement(tool, response, reason);
    let mut answer = rewritten_output(tool, event, &replaced);
    answer["decision"] = "block".into();
    answer["reason"] = reason.into();
    if !honoured(tool, &replaced) {
        answer["continue"] = false.into();
        answer["stopReason"] = reason.into();
    }
    answer
}

/// Whether Claude Code is known to read `replacement` in place of `tool`'s
/// result (checked against Claude Code 2.1.337): content blocks or a
/// string for an MCP tool, an object in the tool's own shape for the
/// built-in tools whose shapes were tried.
fn honoured(tool: &str, replacement: &Value) -> bool {
    if tool.starts_with("mcp__") {
        return replacement.is_string() || replacement.is_array();
    }
    shape_tried(tool) && replacement.is_object()
}

/// Whether the shape Claude Code reads for `tool`'s result was tried.
fn shape_tried(tool: &str) -> bool {
    tool.starts_with("mcp__")
        || matches!(
            tool,
            "Bash" | "Read" | "Write" | "Edit" | "MultiEdit" | "Grep" | "Glob"
        )
}

/// Blocked, and the session stopped: for what cannot be replaced.
fn stop_unchecked(reason: &str) -> Value {
    json!({"decision": "block", "reason": reason, "continue": false, "stopReason": reason})
}

/// `notice` as a tool's whole result, in the shape the client accepts for
/// that tool: the shape of its `response` when there is one, else the
/// shape the client gives that tool's results (a string for a tool not
/// known here).
pub(super) fn replacement(tool: &str, response: Option<&Value>, notice: &str) -> Value {
    let form = OutputForm::claude_code(tool);
    let read_text = |path: &str| {
        json!({"type": "text", "file": {
            "filePath": path, "content": notice, "numLines": 1, "startLine": 1, "totalLines": 1,
        }})
    };
    match (tool, response) {
        // An image or a PDF read has no text to put the notice in: the
        // notice is read as text instead (Read's other shape).
        ("Read", Some(response)) if response["type"] != "text" => {
            return read_text(response["file"]["filePath"].as_str().unwrap_or_default());
        }
        (_, Some(response)) => return ToolOutput::new(response, form).replaced(notice),
        (_, None) => {}
    }
    match tool {
        "Bash" => json!({"stdout": notice, "stderr": "", "interrupted": false, "isImage": false}),
        "Read" => read_text(""),
        _ if form == OutputForm::McpResult => json!([{"type": "text", "text": notice}]),
        _ => Value::String(notice.to_owned()),
    }
}

/// An input that could not be read, or a request that could not be
/// answered: blocked in every event's terms the client may have sent. The
/// top-level `decision: "block"` stops a pre event; a pre event known as
/// such gets its `deny` too; a post event (or one that may be) gets the
/// reason in place of its result, in the shape of `tool` when its name
/// could be read, under both keys a client may read (`updatedToolOutput`,
/// `updatedMCPToolOutput`); when that shape is not known, or the event is
/// not, the session is stopped (`continue: false`).
pub(super) fn unreadable(reason: &str, event: Option<Event>, tool: Option<&str>) -> Value {
    match event {
        Some(Event::PreToolUse) => {
            let mut answer = deny(reason);
            answer["decision"] = "block".into();
            answer["reason"] = reason.into();
            answer
        }
        Some(Event::SessionStart) => stop(reason),
        Some(Event::PostToolUse) => {
            let tool = tool.unwrap_or_default();
            let mut answer = withhold(tool, "PostToolUse", reason, None);
            let specific = &mut answer["hookSpecificOutput"];
            if specific.get("updatedMCPToolOutput").is_none() {
                specific["updatedMCPToolOutput"] = specific["updatedToolOutput"].clone();
            }
            answer
        }
        // A failure's error text cannot be replaced, and an event not known
        // may be a post event: the session stops rather than the model
        // reading what was not checked.
        Some(Event::PostToolUseFailure) | None => stop_unchecked(reason),
    }
}

/// A post event whose result the hooks rewrote into `output`, in a form
/// the client reads: for an MCP tool, content blocks or a string (an MCP
/// result's `content` is taken out of its envelope; anything else becomes
/// its text); for a built-in tool, `output` when it keeps the shape of
/// `response` (the chain fits rewrites into it), else the rewrite's text in
/// that shape. Where Claude Code is not known to read it (a tool whose
/// shape was not tried, a result with no text to hold it), the session
/// also stops rather than the model reading the original.
pub(super) fn rewrite(tool: &str, event: &str, response: &Value, output: &Value) -> Value {
    let sent = if tool.starts_with("mcp__") {
        match output {
            Value::String(_) | Value::Array(_) => output.clone(),
            Value::Object(result) if result.get("content").is_some_and(Value::is_array) => {
                result["content"].clone()
            }
            other => Value::String(ToolOutput::new(other, OutputForm::Leaves).text()),
        }
    } else if same_shape(response, output) {
        output.clone()
    } else {
        let text = match output {
            Value::String(text) => text.clone(),
            other => ToolOutput::new(other, OutputForm::Leaves).text(),
        };
        replacement(tool, Some(response), &text)
    };
    let mut answer = rewritten_output(tool, event, &sent);
    if shape_tried(tool) && !honoured(tool, &sent) {
        let reason = "the hooks rewrote the result into something Claude Code does not read in \
                      place of it; the session is stopped";
        answer["continue"] = false.into();
        answer["stopReason"] = reason.into();
    }
    answer
}

/// A post event whose result a hook rewrote: `updatedToolOutput`, and for
/// an MCP tool (`mcp__server__tool`) `updatedMCPToolOutput` as well (the
/// key older clients read).
fn rewritten_output(tool: &str, event: &str, output: &Value) -> Value {
    let mut specific = Map::new();
    specific.insert("hookEventName".into(), event.into());
    specific.insert("updatedToolOutput".into(), output.clone());
    if tool.starts_with("mcp__") {
        specific.insert("updatedMCPToolOutput".into(), output.clone());
    }
    json!({ "hookSpecificOutput": specific })
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
