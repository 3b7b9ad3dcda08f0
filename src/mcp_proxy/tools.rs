//! The upstream's tools as the proxy last listed them: the only names a
//! `tools/call` may name.
//!
//! The list is read when the upstream starts (and each time it starts
//! again) and when it says its tools changed
//! (`notifications/tools/list_changed`). A refresh holds the write lock from
//! the moment it starts until the new list is in place, so a call waits for
//! it and never reads a list half replaced; while no list is known (a
//! refresh failed) every call is refused.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::Tool;
use rmcp::service::Peer;
use serde_json::Value;

/// How long the upstream may take to list its tools.
const LIST_TIMEOUT: Duration = Duration::from_secs(30);

/// The upstream's tools by their exact names. A name the upstream lists
/// twice is left out: which of the two a call would reach is unknown.
pub(super) type Listed = BTreeMap<String, Tool>;

/// The tools the upstream listed last, or none while unknown.
#[derive(Default)]
pub(super) struct Catalog {
    listed: tokio::sync::RwLock<Option<Arc<Listed>>>,
}

impl Catalog {
    /// The list as it stands (waiting for a refresh under way), or `None`
    /// while it is not known.
    pub(super) async fn current(&self) -> Option<Arc<Listed>> {
        self.listed.read().await.clone()
    }

    /// Reads the upstream's tools again through `peer` and puts the new
    /// list in place. Until it is in place calls wait; when reading fails
    /// the list is unknown (every call refused) until a later refresh.
    pub(super) async fn refresh(&self, peer: &Peer<RoleClient>) -> Result<Arc<Listed>, String> {
        let mut listed = self.listed.write().await;
        *listed = None;
        let serves_tools = peer
            .peer_info()
            .is_some_and(|info| info.capabilities.tools.is_some());
        let tools = if serves_tools {
            match tokio::time::timeout(LIST_TIMEOUT, peer.list_all_tools()).await {
                Ok(Ok(tools)) => tools,
                Ok(Err(error)) => return Err(error.to_string()),
                Err(_) => {
                    return Err(format!(
                        "no answer to tools/list within {}s",
                        LIST_TIMEOUT.as_secs()
                    ));
                }
            }
        } else {
            Vec::new()
        };
        let fresh = Arc::new(by_name(tools));
        *listed = Some(fresh.clone());
        Ok(fresh)
    }

    /// Forgets the list: calls are refused until the next refresh.
    pub(super) async fn forget(&self) {
        *self.listed.write().await = None;
    }
}

/// The tools by name, names listed twice left out.
fn by_name(tools: Vec<Tool>) -> Listed {
    let mut listed = Listed::new();
    let mut twice = Vec::new();
    for tool in tools {
        let name = tool.name.to_string();
        if listed.insert(name.clone(), tool).is_some() {
            twice.push(name);
        }
    }
    for name in twice {
        listed.remove(&name);
    }
    listed
}

/// What the `args_schema` guard checks for each upstream tool, fixed when
/// the proxy started: the schema the upstream listed then, or `None` when
/// the config gives the tool's schema itself (the config's wins).
pub(super) type Checked = BTreeMap<String, Option<Value>>;

/// The pseudo-tools the hooks see for requests other than `tools/call`:
/// an upstream tool of one of these names is never called.
pub(super) const PSEUDO_TOOLS: [&str; 3] = ["resources/read", "prompts/get", "completion/complete"];

/// Whether `name` is hidden by `hide_tools`, in any casing.
pub(super) fn hidden(hide_tools: &[String], name: &str) -> bool {
    let name = name.to_lowercase();
    hide_tools
        .iter()
        .any(|hidden| hidden.to_lowercase() == name)
}

/// Why a `tools/call` of `name` is refused before any hook and before the
/// upstream hears of it, or `None` when it may go on: `name` must be one
/// the upstream listed, exactly, not hidden, with the schema the guard
/// checks still the one it lists.
pub(super) fn refusal(
    server: &str,
    hide_tools: &[String],
    listed: Option<&Listed>,
    checked: &Checked,
    unusable: &BTreeMap<String, String>,
    name: &str,
) -> Option<String> {
    if hidden(hide_tools, name) {
        return Some(format!(
            "the tool `{name}` is hidden by the proxy's config (`mcp_proxy.hide_tools`, matched \
             in any casing); the call is blocked"
        ));
    }
    if PSEUDO_TOOLS.contains(&name) {
        return Some(format!(
            "`{name}` names the proxy's hooks for that request, not an upstream tool; the call \
             is blocked"
        ));
    }
    let Some(listed) = listed else {
        return Some(format!(
            "the proxy does not know the tools of the upstream MCP server `{server}` right now \
             (it stopped, is starting again, or its tools/list failed); the call is blocked, try again"
        ));
    };
    let Some(tool) = listed.get(name) else {
        let lower = name.to_lowercase();
        let near = listed
            .keys()
            .find(|known| known.to_lowercase() == lower && !hidden(hide_tools, known));
        return Some(match near {
            Some(known) => format!(
                "the upstream MCP server `{server}` lists no tool `{name}` (tool names are \
                 exact: it lists `{known}`); the call is blocked"
            ),
            None => format!(
                "the upstream MCP server `{server}` lists no tool `{name}`; only the tools of \
                 its tools/list can be called, the call is blocked"
            ),
        });
    };
    if let Some(problem) = unusable.get(name) {
        return Some(format!(
            "the upstream's inputSchema of `{name}` cannot be checked ({problem}); the call is \
             blocked"
        ));
    }
    match checked.get(name) {
        None => Some(format!(
            "the tool `{name}` appeared after the proxy started, so no schema check is \
             registered for it; the call is blocked (restart the proxy to use it)"
        )),
        Some(Some(schema)) if *schema != Value::Object((*tool.input_schema).clone()) => {
            Some(format!(
                "the inputSchema of `{name}` changed after the proxy started, so the schema \
                 check registered for it is out of date; the call is blocked (restart the proxy \
                 to use it)"
            ))
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn tool(name: &'static str) -> Tool {
        let Value::Object(schema) = json!({"type": "object"}) else {
            unreachable!()
        };
        Tool::new(name, "a tool", schema)
    }

    fn checked(names: &[&str]) -> Checked {
        names
            .iter()
            .map(|name| ((*name).to_owned(), Some(json!({"type": "object"}))))
            .collect()
    }

    #[test]
    fn only_listed_checked_unhidden_names_pass() {
        let listed = by_name(vec![tool("echo"), tool("Delete"), tool("late")]);
        let hide = ["delete".to_owned()];
        let checked = checked(&["echo", "Delete"]);
        let unusable = BTreeMap::new();
        let refuse = |name: &str, listed: Option<&Listed>| {
            refusal("s", &hide, listed, &checked, &unusable, name)
        };
        assert_eq!(refuse("echo", Some(&listed)), None);
        for (name, why) in [
            ("Echo", "tool names are exact: it lists `echo`"),
            ("nope", "lists no tool `nope`"),
            ("Delete", "hidden"),
            ("DELETE", "hidden"),
            ("late", "appeared after the proxy started"),
        ] {
            let reason = refuse(name, Some(&listed)).expect(name);
            assert!(reason.contains(why), "{name}: {reason}");
        }
        let reason = refuse("echo", None).expect("unknown list");
        assert!(reason.contains("does not know the tools"), "{reason}");
    }

    #[test]
    fn a_changed_schema_or_a_name_listed_twice_is_refused() {
        let listed = by_name(vec![tool("echo"), tool("twice"), tool("twice")]);
        assert!(!listed.contains_key("twice"));
        let mut checked = checked(&["echo"]);
        checked.insert(
            "echo".into(),
            Some(json!({"type": "object", "required": ["x"]})),
        );
        let reason =
            refusal("s", &[], Some(&listed), &checked, &BTreeMap::new(), "echo").expect("refused");
        assert!(
            reason.contains("changed after the proxy started"),
            "{reason}"
        );
        checked.insert("echo".into(), None);
        assert_eq!(
            refusal("s", &[], Some(&listed), &checked, &BTreeMap::new(), "echo"),
            None,
            "the config's own schema checks whatever the upstream lists"
        );
    }
}
