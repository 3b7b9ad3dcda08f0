//! A tool's annotations as `when` reads them: `metadata.annotations` and
//! `metadata.annotations_trusted`.

use rmcp::model::Tool;
use serde_json::{Value, json};

/// The four hints of `tool`'s annotations as the upstream listed them, each
/// a boolean, a hint left out taking the value MCP gives it by default:
/// `readOnlyHint` false, `destructiveHint` true, `idempotentHint` false,
/// `openWorldHint` true. The last three describe a tool that writes, so a
/// read-only tool is never destructive and always idempotent, whatever
/// they say. A tool without annotations is thus a destructive, open-world
/// writer: a policy that gates `metadata.annotations.destructiveHint`
/// gates it.
pub(super) fn of(tool: &Tool) -> Value {
    let listed = tool.annotations.as_ref();
    let read_only = listed.and_then(|a| a.read_only_hint).unwrap_or(false);
    let destructive = !read_only && listed.and_then(|a| a.destructive_hint).unwrap_or(true);
    let idempotent = read_only || listed.and_then(|a| a.idempotent_hint).unwrap_or(false);
    let open_world = listed.and_then(|a| a.open_world_hint).unwrap_or(true);
    json!({
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    })
}

#[cfg(test)]
mod tests {
    use rmcp::model::ToolAnnotations;

    use super::*;

    fn tool(annotations: Option<ToolAnnotations>) -> Tool {
        let Value::Object(schema) = json!({"type": "object"}) else {
            unreachable!()
        };
        let mut tool = Tool::new("t", "a tool", schema);
        tool.annotations = annotations;
        tool
    }

    #[test]
    fn left_out_hints_take_mcps_defaults() {
        assert_eq!(
            of(&tool(None)),
            json!({"readOnlyHint": false, "destructiveHint": true, "idempotentHint": false, "openWorldHint": true})
        );
        let mut additive = ToolAnnotations::default();
        additive.destructive_hint = Some(false);
        additive.open_world_hint = Some(false);
        assert_eq!(
            of(&tool(Some(additive))),
            json!({"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false})
        );
    }

    #[test]
    fn a_read_only_tool_is_neither_destructive_nor_repeated_with_effect() {
        let mut read_only = ToolAnnotations::default();
        read_only.read_only_hint = Some(true);
        read_only.destructive_hint = Some(true);
        read_only.idempotent_hint = Some(false);
        assert_eq!(
            of(&tool(Some(read_only))),
            json!({"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true})
        );
    }
}
