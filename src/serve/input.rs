//! The hook input a Claude Code style client posts: the documented fields
//! of each event this server answers.

use serde::Deserialize;
use serde_json::Value;

/// The events the server answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Event {
    PreToolUse,
    PostToolUse,
    PostToolUseFailure,
    SessionStart,
}

impl Event {
    pub(super) fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "PreToolUse" => Event::PreToolUse,
            "PostToolUse" => Event::PostToolUse,
            "PostToolUseFailure" => Event::PostToolUseFailure,
            "SessionStart" => Event::SessionStart,
            _ => return None,
        })
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Event::PreToolUse => "PreToolUse",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::SessionStart => "SessionStart",
        }
    }
}

/// One hook input. Fields the client adds that are not read here are
/// ignored (clients add fields over time); the ones an event needs are
/// required.
#[derive(Debug, Deserialize)]
pub(super) struct RawInput {
    hook_event_name: String,
    session_id: String,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    permission_mode: Option<String>,
    #[serde(default)]
    agent_id: Option<String>,
    #[serde(default)]
    agent_type: Option<String>,
    #[serde(default)]
    tool_name: Option<String>,
    #[serde(default)]
    tool_input: Option<Value>,
    #[serde(default)]
    tool_use_id: Option<String>,
    /// Present-and-null is a response (`null`), not a missing one.
    #[serde(default, deserialize_with = "present")]
    tool_response: Option<Value>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    source: Option<String>,
}

/// A checked hook input.
#[derive(Debug)]
pub(super) struct HookInput {
    pub(super) event: Event,
    pub(super) session_id: String,
    /// Client details kept as the call's metadata (`cwd`,
    /// `permission_mode`, `client_agent_id`, `client_agent_type`, `source`).
    pub(super) metadata: Vec<(&'static str, String)>,
    pub(super) tool: Option<ToolCall>,
}

/// The tool call a tool event is about.
#[derive(Debug)]
pub(super) struct ToolCall {
    pub(super) name: String,
    pub(super) input: Value,
    pub(super) id: String,
    /// `tool_response` (PostToolUse) or `error` (PostToolUseFailure).
    pub(super) response: Option<Value>,
    pub(super) error: Option<String>,
}

impl HookInput {
    /// Reads a request body; the error says what is wrong with it.
    pub(super) fn parse(body: &[u8]) -> Result<Self, String> {
        let raw: RawInput = serde_json::from_slice(body)
            .map_err(|error| format!("the hook input is not valid: {error}"))?;
        let event = Event::from_name(&raw.hook_event_name).ok_or_else(|| {
            format!(
                "this server answers PreToolUse, PostToolUse, PostToolUseFailure and SessionStart, \
                 not {:?}: remove the event from the client's hook settings",
                raw.hook_event_name
            )
        })?;
        let mut metadata = Vec::new();
        for (key, value) in [
            ("cwd", raw.cwd),
            ("permission_mode", raw.permission_mode),
            ("client_agent_id", raw.agent_id),
            ("client_agent_type", raw.agent_type),
            ("source", raw.source),
        ] {
            if let Some(value) = value {
                metadata.push((key, value));
            }
        }
        let tool = if event == Event::SessionStart {
            None
        } else {
            let missing = |field: &str| format!("a {} input needs `{field}`", event.name());
            let name = raw.tool_name.ok_or_else(|| missing("tool_name"))?;
            let input = raw.tool_input.ok_or_else(|| missing("tool_input"))?;
            let id = raw.tool_use_id.ok_or_else(|| missing("tool_use_id"))?;
            if id.is_empty() {
                return Err(
                    "`tool_use_id` is empty: the pre and post events cannot be paired".into(),
                );
            }
            let response = match event {
                Event::PostToolUse => {
                    Some(raw.tool_response.ok_or_else(|| missing("tool_response"))?)
                }
                _ => None,
            };
            let error = match event {
                Event::PostToolUseFailure => Some(raw.error.ok_or_else(|| missing("error"))?),
                _ => None,
            };
            Some(ToolCall {
                name,
                input,
                id,
                response,
                error,
            })
        };
        Ok(HookInput {
            event,
            session_id: raw.session_id,
            metadata,
            tool,
        })
    }
}

/// Any value, `null` included, as present.
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// The event of an input that could not be read whole, when its
/// `hook_event_name` can be picked out of the text (clients write it before
/// the tool's input), so a blocked answer can speak that event's terms.
pub(super) fn sniff_event(body: &[u8]) -> Option<Event> {
    Event::from_name(&sniff(body, "hook_event_name")?)
}

/// The tool of an input that could not be read whole, when its `tool_name`
/// can be picked out of the text: a withheld result then takes that tool's
/// shape.
pub(super) fn sniff_tool(body: &[u8]) -> Option<String> {
    sniff(body, "tool_name")
}

/// The string value of the first `"key"` in the first [`SNIFFED`] bytes of
/// `body`, when it has no escapes. The first is the client's own: a key
/// inside a string value is escaped (`\"key\"`), and the tool's input and
/// output come after the event and tool names.
fn sniff(body: &[u8], key: &str) -> Option<String> {
    let text = String::from_utf8_lossy(&body[..body.len().min(SNIFFED)]);
    let after = text.split(&format!("\"{key}\"")).nth(1)?;
    let value = after
        .trim_start()
        .strip_prefix(':')?
        .trim_start()
        .strip_prefix('"')?;
    let (value, _) = value.split_once('"')?;
    (!value.contains('\\')).then(|| value.to_owned())
}

/// How much of an unreadable input is looked at for its event and tool:
/// room for the fields Claude Code writes before them (`transcript_path`
/// and `cwd`, each a path the model can make long).
pub(super) const SNIFFED: usize = 64 * 1024;

/// Connector and action of a Claude Code MCP tool, `mcp__<server>__<tool>`:
/// the server, as `hooks mcp-proxy` names it, and the server's own name of
/// the tool.
pub(super) fn mcp_tool(name: &str) -> Option<(&str, &str)> {
    let rest = name.strip_prefix("mcp__")?;
    let (server, tool) = rest.split_once("__")?;
    (!server.is_empty() && !tool.is_empty()).then_some((server, tool))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_event_of_an_unreadable_input_is_picked_out_when_it_can_be() {
        let deep = format!(
            r#"{{"session_id": "s", "hook_event_name" : "PreToolUse", "tool_input": {}1{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(
            HookInput::parse(deep.as_bytes()).is_err(),
            "too deep for the parser"
        );
        assert_eq!(sniff_event(deep.as_bytes()), Some(Event::PreToolUse));
        assert_eq!(sniff_event(b"{\"hook_event_name\": \"Stop\"}"), None);
        assert_eq!(sniff_event(b"garbage"), None);
        let post = br#"{"hook_event_name": "PostToolUse", "tool_name": "Bash", "tool_response": {"#;
        assert_eq!(sniff_event(post), Some(Event::PostToolUse));
        assert_eq!(sniff_tool(post).as_deref(), Some("Bash"));
        assert_eq!(sniff_tool(br#"{"tool_name": "a\"b"}"#), None);
    }

    #[test]
    fn claude_codes_mcp_tools_name_their_server() {
        assert_eq!(
            mcp_tool("mcp__github__create_issue"),
            Some(("github", "create_issue"))
        );
        assert_eq!(
            mcp_tool("mcp__my_server__a__b"),
            Some(("my_server", "a__b"))
        );
        assert_eq!(mcp_tool("mcp____x"), None);
        assert_eq!(mcp_tool("mcp__github"), None);
        assert_eq!(mcp_tool("Bash"), None);
    }

    #[test]
    fn a_null_tool_response_is_a_response() {
        let input = br#"{"session_id": "s", "hook_event_name": "PostToolUse", "tool_name": "T",
                        "tool_input": {}, "tool_use_id": "t", "tool_response": null}"#;
        let parsed = HookInput::parse(input).expect("parses");
        assert_eq!(parsed.tool.and_then(|t| t.response), Some(Value::Null));
    }
}
