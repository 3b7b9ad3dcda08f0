//! The JSON a command prints on stdout after exit 0, as types.
//!
//! The field names are Claude Code's. Unknown fields are refused at both
//! levels, although Claude Code drops unknown keys for most events: here a
//! misspelt `"permissionDecison": "deny"` or `"hookSpecificOuput"` would
//! otherwise read as "no decision", that is as allow, so it fails closed
//! instead (see `misspelt_or_buried_decisions_block_instead_of_allowing` in
//! the command hook tests). A wrong type fails closed too, with a message
//! that names the field.

use serde::Deserialize;
use serde::de::{self, Deserializer};
use serde_json::{Map, Value};

use hooks_runtime::HookPoint;

/// The whole output object.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct HookOutput {
    /// `false` stops the call (and, in Claude Code, the agent).
    #[serde(default, rename = "continue", deserialize_with = "continue_flag")]
    pub(crate) keep_going: Option<bool>,
    /// Why `continue` is `false`.
    #[serde(default, deserialize_with = "stop_reason")]
    pub(crate) stop_reason: Option<String>,
    /// Claude Code hides the output from its transcript; read for its type only.
    #[serde(default, deserialize_with = "suppress_output")]
    #[allow(dead_code, reason = "read so that a wrong type fails closed")]
    pub(crate) suppress_output: Option<bool>,
    /// A message for the user: a side effect in the trace here.
    #[serde(default, deserialize_with = "system_message")]
    pub(crate) system_message: Option<String>,
    /// The top-level decision.
    #[serde(default, deserialize_with = "decision")]
    pub(crate) decision: Option<TopDecision>,
    /// Why `decision` is `block`.
    #[serde(default, deserialize_with = "reason")]
    pub(crate) reason: Option<String>,
    /// The fields of one event.
    #[serde(default, deserialize_with = "specific")]
    pub(crate) hook_specific_output: Option<SpecificOutput>,
}

/// `decision`: Claude Code's top-level verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TopDecision {
    /// Block the call, with `reason`.
    Block,
    /// Claude Code's older spelling of "allow", for `PreToolUse` only.
    Approve,
}

/// `hookSpecificOutput.permissionDecision`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum PermissionDecision {
    /// Let the call go ahead.
    Allow,
    /// Block it, with `permissionDecisionReason`.
    Deny,
    /// A person decides.
    Ask,
}

/// `hookSpecificOutput`: the fields of one event.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub(crate) struct SpecificOutput {
    /// The event the command thinks it answers.
    #[serde(default, deserialize_with = "hook_event_name")]
    pub(crate) hook_event_name: Option<String>,
    /// `PreToolUse`: allow, deny or ask.
    #[serde(default, deserialize_with = "permission_decision")]
    pub(crate) permission_decision: Option<PermissionDecision>,
    /// `PreToolUse`: why.
    #[serde(default, deserialize_with = "permission_decision_reason")]
    pub(crate) permission_decision_reason: Option<String>,
    /// `PreToolUse`: the complete new tool arguments.
    #[serde(default, deserialize_with = "updated_input")]
    pub(crate) updated_input: Option<Map<String, Value>>,
    /// Context for the model: the session's at session start, a side effect elsewhere.
    #[serde(default, deserialize_with = "additional_context")]
    pub(crate) additional_context: Option<String>,
    /// `PostToolUse`: the new tool result (`null` included: present means rewrite).
    #[serde(default, deserialize_with = "present")]
    pub(crate) updated_tool_output: Option<Value>,
    /// `PostToolUse`: the same for MCP tools.
    #[serde(default, rename = "updatedMCPToolOutput", deserialize_with = "present")]
    pub(crate) updated_mcp_tool_output: Option<Value>,
}

impl SpecificOutput {
    /// The event-bound fields: each protocol name, whether it is given, and
    /// the one event it belongs to.
    pub(crate) fn fields(&self) -> [(&'static str, bool, HookPoint); 5] {
        use HookPoint::{PostToolUse, PreToolUse};
        [
            (
                "permissionDecision",
                self.permission_decision.is_some(),
                PreToolUse,
            ),
            (
                "permissionDecisionReason",
                self.permission_decision_reason.is_some(),
                PreToolUse,
            ),
            ("updatedInput", self.updated_input.is_some(), PreToolUse),
            (
                "updatedToolOutput",
                self.updated_tool_output.is_some(),
                PostToolUse,
            ),
            (
                "updatedMCPToolOutput",
                self.updated_mcp_tool_output.is_some(),
                PostToolUse,
            ),
        ]
    }
}

/// Reads an optional field as `T`, or fails with `message` (a field of the
/// wrong type must not read as absent).
fn typed<'de, T: Deserialize<'de>, D: Deserializer<'de>>(
    deserializer: D,
    message: &str,
) -> Result<Option<T>, D::Error> {
    Option::<T>::deserialize(deserializer).map_err(|_| de::Error::custom(message))
}

/// One `deserialize_with` reader per field, so that each message names its field.
macro_rules! readers {
    ($($name:ident: $type:ty => $message:literal;)*) => {
        $(
            fn $name<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<$type>, D::Error> {
                typed(deserializer, $message)
            }
        )*
    };
}

readers! {
    continue_flag: bool => "`continue` must be true or false";
    suppress_output: bool => "`suppressOutput` must be true or false";
    stop_reason: String => "`stopReason` must be a string";
    system_message: String => "`systemMessage` must be a string";
    reason: String => "`reason` must be a string";
    decision: TopDecision => "`decision` can only be \"block\" (or \"approve\" in a PreToolUse hook), or be left out";
    hook_event_name: String => "`hookSpecificOutput.hookEventName` must be a string";
    permission_decision: PermissionDecision => "`hookSpecificOutput.permissionDecision` must be \"allow\", \"deny\" or \"ask\"";
    permission_decision_reason: String => "`hookSpecificOutput.permissionDecisionReason` must be a string";
    updated_input: Map<String, Value> => "`hookSpecificOutput.updatedInput` must be a JSON object: the complete new tool arguments";
    additional_context: String => "`hookSpecificOutput.additionalContext` must be a string";
}

/// `hookSpecificOutput`: an object (its own fields' errors kept, prefixed)
/// or `null`.
fn specific<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<SpecificOutput>, D::Error> {
    match Value::deserialize(deserializer)? {
        Value::Null => Ok(None),
        value @ Value::Object(_) => SpecificOutput::deserialize(value)
            .map(Some)
            .map_err(|error| de::Error::custom(format_args!("in `hookSpecificOutput`: {error}"))),
        _ => Err(de::Error::custom("`hookSpecificOutput` must be an object")),
    }
}

/// Any value, `null` included: the field's presence is what counts.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read(value: Value) -> Result<HookOutput, String> {
        HookOutput::deserialize(value).map_err(|error| error.to_string())
    }

    #[test]
    fn every_field_is_read() {
        let output = read(json!({
            "continue": false,
            "stopReason": "halt",
            "suppressOutput": true,
            "systemMessage": "note",
            "decision": "block",
            "reason": "pii",
            "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "ask",
                "permissionDecisionReason": "big",
                "updatedInput": {"a": 1},
                "additionalContext": "ctx",
                "updatedToolOutput": null,
                "updatedMCPToolOutput": {"content": []},
            },
        }))
        .unwrap();
        assert_eq!(output.keep_going, Some(false));
        assert_eq!(output.stop_reason.as_deref(), Some("halt"));
        assert_eq!(output.suppress_output, Some(true));
        assert_eq!(output.system_message.as_deref(), Some("note"));
        assert_eq!(output.decision, Some(TopDecision::Block));
        assert_eq!(output.reason.as_deref(), Some("pii"));
        let specific = output.hook_specific_output.unwrap();
        assert_eq!(specific.hook_event_name.as_deref(), Some("PreToolUse"));
        assert_eq!(specific.permission_decision, Some(PermissionDecision::Ask));
        assert_eq!(specific.permission_decision_reason.as_deref(), Some("big"));
        assert_eq!(
            specific.updated_input.map(Value::Object),
            Some(json!({"a": 1}))
        );
        assert_eq!(specific.additional_context.as_deref(), Some("ctx"));
        // `null` is a rewrite to null, not an absent field.
        assert_eq!(specific.updated_tool_output, Some(Value::Null));
        assert_eq!(
            specific.updated_mcp_tool_output,
            Some(json!({"content": []}))
        );
    }

    #[test]
    fn null_and_absent_decide_nothing() {
        let output =
            read(json!({"continue": null, "decision": null, "hookSpecificOutput": null})).unwrap();
        assert!(output.keep_going.is_none() && output.decision.is_none());
        assert!(output.hook_specific_output.is_none());
        let empty = read(json!({})).unwrap();
        assert!(empty.keep_going.is_none() && empty.hook_specific_output.is_none());
        let specific = read(json!({"hookSpecificOutput": {"permissionDecision": null}}))
            .unwrap()
            .hook_specific_output
            .unwrap();
        assert!(specific.permission_decision.is_none());
        assert!(specific.fields().iter().all(|(_, given, _)| !given));
    }

    #[test]
    fn unknown_fields_fail_at_both_levels() {
        let error = read(json!({"permissionDecision": "deny"})).unwrap_err();
        assert!(
            error.contains("unknown field `permissionDecision`"),
            "{error}"
        );
        let error = read(json!({"hookSpecificOutput": {"permissionDecison": "deny"}})).unwrap_err();
        assert!(
            error.contains("in `hookSpecificOutput`: unknown field `permissionDecison`"),
            "{error}"
        );
        let error = read(json!({"hookSpecificOutput": {"updatedMcpToolOutput": 1}})).unwrap_err();
        assert!(
            error.contains("unknown field `updatedMcpToolOutput`"),
            "{error}"
        );
    }

    #[test]
    fn wrong_types_fail_and_name_the_field() {
        for (output, expected) in [
            (
                json!({"continue": "no"}),
                "`continue` must be true or false",
            ),
            (json!({"continue": 0}), "`continue` must be true or false"),
            (
                json!({"suppressOutput": "yes"}),
                "`suppressOutput` must be true or false",
            ),
            (
                json!({"stopReason": false}),
                "`stopReason` must be a string",
            ),
            (
                json!({"systemMessage": ["a"]}),
                "`systemMessage` must be a string",
            ),
            (json!({"reason": 3}), "`reason` must be a string"),
            (json!({"decision": "allow"}), "can only be \"block\""),
            (json!({"decision": "BLOCK"}), "can only be \"block\""),
            (json!({"decision": true}), "can only be \"block\""),
            (
                json!({"hookSpecificOutput": 3}),
                "`hookSpecificOutput` must be an object",
            ),
            (
                json!({"hookSpecificOutput": []}),
                "`hookSpecificOutput` must be an object",
            ),
            (
                json!({"hookSpecificOutput": {"hookEventName": 1}}),
                "`hookSpecificOutput.hookEventName` must be a string",
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecision": "maybe"}}),
                "\"allow\", \"deny\" or \"ask\"",
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecision": "Deny"}}),
                "\"allow\", \"deny\" or \"ask\"",
            ),
            (
                json!({"hookSpecificOutput": {"permissionDecisionReason": {}}}),
                "`hookSpecificOutput.permissionDecisionReason` must be a string",
            ),
            (
                json!({"hookSpecificOutput": {"updatedInput": [1]}}),
                "`hookSpecificOutput.updatedInput` must be a JSON object",
            ),
            (
                json!({"hookSpecificOutput": {"updatedInput": "{\"a\": 1}"}}),
                "`hookSpecificOutput.updatedInput` must be a JSON object",
            ),
            (
                json!({"hookSpecificOutput": {"additionalContext": 5}}),
                "`hookSpecificOutput.additionalContext` must be a string",
            ),
        ] {
            let error = read(output.clone()).unwrap_err();
            assert!(error.contains(expected), "{output}: {error}");
        }
    }
}
