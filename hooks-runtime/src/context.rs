//! What a hook sees: the call, who makes it, where, and the engine's metadata.

use hooks_when::{Subject, TextField};
use serde_json::{Map, Value};

use crate::output::{OutputForm, ToolOutput};

// The hook points and the surfaces are defined once, in `hooks-when` (which
// fields a `when` may test depends on them); the runtime re-exports them.
pub use hooks_when::{HookPoint, Surface};

/// How the tool call ended, as post hooks see it. Serialized as
/// `{"success": result}` or `{"error": "message"}`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolOutcome {
    /// The tool returned a result (possibly rewritten by earlier post hooks).
    Success(Value),
    /// The tool failed with this message.
    Error(String),
}

/// Everything a hook may look at.
///
/// Build one per tool call with [`HookContext::tool_call`] (or per session with
/// [`HookContext::session`]) and the `with_*` methods; the runner fills in
/// [`point`](Self::point), the rewritten arguments and the tool's outcome as the
/// call proceeds. Empty id strings mean "not known" to `when` expressions.
///
/// Serializes with its field names; `point` as its event name
/// (`PreToolUse`), `surface` as its `when` name (`chat`, `dag_step`),
/// `tool_outcome` as a [`ToolOutcome`].
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[non_exhaustive]
pub struct HookContext {
    /// Where in the loop the hook runs.
    pub point: HookPoint,
    /// The tool's name, e.g. `oa__purchase_pay` (empty at session start).
    pub tool_name: String,
    /// The tool's arguments, as rewritten by the pre hooks before this one.
    pub tool_args: Value,
    /// The tool's outcome (post hooks only).
    pub tool_outcome: Option<ToolOutcome>,
    /// The agent making the call.
    pub agent_id: String,
    /// The user on whose behalf the agent runs.
    pub user_id: String,
    /// The user's organisation.
    pub org_id: String,
    /// The conversation (session) the call belongs to.
    pub conversation_id: String,
    /// The LLM's id for this tool call; with the conversation id it names the call.
    pub tool_call_id: String,
    /// Where the agent runs.
    pub surface: Surface,
    /// The chain of agents from the root to the one making the call (root first).
    pub agent_path: Vec<String>,
    /// Facts the engine attaches (`requires_confirmation`, `connector`, …).
    pub metadata: Map<String, Value>,
    /// Where the text the model reads sits in the tool's result, as the
    /// surface shapes it (see [`output`](Self::output)).
    #[serde(skip)]
    pub output_form: OutputForm,
}

impl HookContext {
    /// The context of a tool call about to run.
    pub fn tool_call(tool_name: impl Into<String>, tool_args: Value) -> Self {
        HookContext {
            point: HookPoint::PreToolUse,
            tool_name: tool_name.into(),
            tool_args,
            tool_outcome: None,
            agent_id: String::new(),
            user_id: String::new(),
            org_id: String::new(),
            conversation_id: String::new(),
            tool_call_id: String::new(),
            surface: Surface::default(),
            agent_path: Vec::new(),
            metadata: Map::new(),
            output_form: OutputForm::Value,
        }
    }

    /// The context of a session about to start (no tool call).
    pub fn session() -> Self {
        HookContext {
            point: HookPoint::SessionStart,
            ..HookContext::tool_call("", Value::Null)
        }
    }

    /// Sets the agent id.
    pub fn with_agent(mut self, agent_id: impl Into<String>) -> Self {
        self.agent_id = agent_id.into();
        self
    }

    /// Sets the user id.
    pub fn with_user(mut self, user_id: impl Into<String>) -> Self {
        self.user_id = user_id.into();
        self
    }

    /// Sets the organisation id.
    pub fn with_org(mut self, org_id: impl Into<String>) -> Self {
        self.org_id = org_id.into();
        self
    }

    /// Sets the conversation id.
    pub fn with_conversation(mut self, conversation_id: impl Into<String>) -> Self {
        self.conversation_id = conversation_id.into();
        self
    }

    /// Sets the tool call id.
    pub fn with_tool_call_id(mut self, tool_call_id: impl Into<String>) -> Self {
        self.tool_call_id = tool_call_id.into();
        self
    }

    /// Sets the surface.
    pub fn with_surface(mut self, surface: Surface) -> Self {
        self.surface = surface;
        self
    }

    /// Sets the form the tool's result comes in (surfaces whose tools answer
    /// in a shape of their own: Claude Code's `tool_response`, MCP results).
    pub fn with_output_form(mut self, form: OutputForm) -> Self {
        self.output_form = form;
        self
    }

    /// Sets the agent path (root first).
    pub fn with_agent_path<I, S>(mut self, path: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.agent_path = path.into_iter().map(Into::into).collect();
        self
    }

    /// Adds one metadata entry.
    pub fn with_metadata(mut self, key: impl Into<String>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into(), value.into());
        self
    }

    /// The connector: `metadata.connector` if it is a string, else the part of
    /// the tool name before `__` (`oa` in `oa__purchase_pay`).
    pub fn connector(&self) -> Option<&str> {
        match self.metadata.get("connector") {
            Some(Value::String(connector)) => non_empty(connector),
            _ => split_connector(&self.tool_name).and_then(|(connector, _)| non_empty(connector)),
        }
    }

    /// The action: `metadata.action` if it is a string, else the part of the
    /// tool name after `__` (`purchase_pay` in `oa__purchase_pay`).
    pub fn action(&self) -> Option<&str> {
        match self.metadata.get("action") {
            Some(Value::String(action)) => non_empty(action),
            _ => split_connector(&self.tool_name).and_then(|(_, action)| non_empty(action)),
        }
    }

    /// The tool's result, when it ran and succeeded.
    pub fn result(&self) -> Option<&Value> {
        match &self.tool_outcome {
            Some(ToolOutcome::Success(value)) => Some(value),
            _ => None,
        }
    }

    /// The tool's result with the text the model reads picked out of its
    /// shape, to read or change it without breaking the shape (see
    /// [`ToolOutput`]); `None` unless the tool ran and succeeded.
    ///
    /// ```
    /// use hooks::{HookContext, HookResult, ToolOutcome};
    /// use hooks::output::OutputForm;
    /// use serde_json::json;
    ///
    /// // What a post hook that withholds private keys does, on any surface.
    /// fn no_keys(ctx: &HookContext) -> HookResult {
    ///     match ctx.output() {
    ///         Some(output) if output.text().contains("PRIVATE KEY") => {
    ///             HookResult::block("the result holds a private key")
    ///         }
    ///         Some(output) => {
    ///             let redacted = output.map_text(|text| text.replace("hunter2", "[redacted]"));
    ///             HookResult::allow().with_result(redacted)
    ///         }
    ///         None => HookResult::allow(),
    ///     }
    /// }
    /// let mut ctx = HookContext::tool_call("Bash", json!({"command": "cat k"}))
    ///     .with_output_form(OutputForm::claude_code("Bash"));
    /// ctx.tool_outcome = Some(ToolOutcome::Success(json!({"stdout": "pw hunter2", "stderr": ""})));
    /// let result = no_keys(&ctx);
    /// assert_eq!(result.modified_result(), Some(&json!({"stdout": "pw [redacted]", "stderr": ""})));
    /// ```
    pub fn output(&self) -> Option<ToolOutput<'_>> {
        self.result()
            .map(|value| ToolOutput::new(value, self.output_form))
    }

    /// The tool's error message, when it ran and failed.
    pub fn tool_error(&self) -> Option<&str> {
        match &self.tool_outcome {
            Some(ToolOutcome::Error(message)) => Some(message),
            _ => None,
        }
    }

    /// True when `metadata.KEY` is JSON `true`.
    pub fn flag(&self, key: &str) -> bool {
        matches!(self.metadata.get(key), Some(Value::Bool(true)))
    }
}

fn non_empty(text: &str) -> Option<&str> {
    (!text.is_empty()).then_some(text)
}

impl Subject for HookContext {
    #[inline]
    fn text(&self, field: TextField) -> Option<&str> {
        match field {
            TextField::ToolName => non_empty(&self.tool_name),
            TextField::Connector => self.connector(),
            TextField::Action => self.action(),
            TextField::AgentId => non_empty(&self.agent_id),
            TextField::UserId => non_empty(&self.user_id),
            TextField::OrgId => non_empty(&self.org_id),
            TextField::ConversationId => non_empty(&self.conversation_id),
            TextField::Surface => Some(self.surface.as_str()),
        }
    }

    #[inline]
    fn metadata(&self) -> &Map<String, Value> {
        &self.metadata
    }

    #[inline]
    fn args(&self) -> &Value {
        &self.tool_args
    }

    #[inline]
    fn result(&self) -> Option<&Value> {
        HookContext::result(self)
    }
}

/// `connector__action` split at the first `__` (a byte scan: tool names are
/// short, and `_` is ASCII, so both cut points are character boundaries).
#[inline]
fn split_connector(tool_name: &str) -> Option<(&str, &str)> {
    let at = tool_name
        .as_bytes()
        .windows(2)
        .position(|pair| pair == b"__")?;
    Some((&tool_name[..at], &tool_name[at + 2..]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_first_double_underscore_splits_connector_and_action() {
        for (name, expected) in [
            ("oa__purchase_pay", Some(("oa", "purchase_pay"))),
            ("a__b__c", Some(("a", "b__c"))),
            ("_x___y", Some(("_x", "_y"))),
            ("plain_tool", None),
            ("价格__查询", Some(("价格", "查询"))),
            ("__", Some(("", ""))),
        ] {
            assert_eq!(split_connector(name), expected, "{name}");
        }
    }

    #[test]
    fn connector_and_action_follow_the_naming_convention() {
        let ctx = HookContext::tool_call("oa__purchase_pay", json!({}));
        assert_eq!(ctx.connector(), Some("oa"));
        assert_eq!(ctx.action(), Some("purchase_pay"));
        let plain = HookContext::tool_call("sql_exec", json!({}));
        assert_eq!(plain.connector(), None);
        let overridden = plain.with_metadata("connector", "warehouse");
        assert_eq!(overridden.connector(), Some("warehouse"));
    }
}
