//! Which bucket a call is counted in: its connector and user, spelled one way.
//!
//! The limit is only as strong as its notion of "the same connector": the
//! model chooses the spelling of the tool name, so `OA__pay`, fullwidth
//! `ｏａ__pay` and `__oa__pay` must all count against `oa`, and no spelling
//! may escape counting altogether.

use std::borrow::Cow;

use hooks_runtime::HookContext;
use serde_json::Value;

use crate::text::fold_identifier;

/// The connector a call is counted against, [folded](fold_identifier):
///
/// 1. `metadata.connector`, when it is a string that is not empty once folded;
/// 2. otherwise the folded tool name without leading underscores, up to its
///    first `__` (`oa` for `OA__pay` and `__oa__pay`);
/// 3. a tool name without `__` is its own connector (a tool named `oa` counts
///    against `oa`, a tool named `sql_exec` against `sql_exec`);
/// 4. a tool name that folds to nothing (empty, only underscores or
///    invisible characters) counts against the empty connector `""`.
///
/// Every call thus has a bucket: none is unlimited.
pub fn connector_key(ctx: &HookContext) -> Cow<'_, str> {
    if let Some(Value::String(connector)) = ctx.metadata.get("connector") {
        let folded = fold_identifier(connector);
        if !folded.is_empty() {
            return folded;
        }
    }
    match fold_identifier(&ctx.tool_name) {
        Cow::Borrowed(tool) => Cow::Borrowed(connector_of_tool(tool)),
        Cow::Owned(tool) => Cow::Owned(connector_of_tool(&tool).to_owned()),
    }
}

/// The connector part of a folded tool name (rules 2–4 of [`connector_key`]).
fn connector_of_tool(tool: &str) -> &str {
    let tool = tool.trim_start_matches('_');
    let connector = tool.find("__").map_or(tool, |at| &tool[..at]);
    connector.trim_end_matches('_')
}

/// The user a call is counted for, [folded](fold_identifier): `Alice` and
/// `alice` share one quota.
pub fn user_key(ctx: &HookContext) -> Cow<'_, str> {
    fold_identifier(&ctx.user_id)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn connector(tool: &str) -> String {
        connector_key(&HookContext::tool_call(tool, json!({}))).into_owned()
    }

    #[test]
    fn every_spelling_of_a_connector_is_one_bucket() {
        for tool in [
            "oa__pay",
            "OA__pay",
            "ｏａ__pay",
            "ｏａ＿＿pay",
            "__oa__pay",
            "oa___pay",
            "o\u{200B}a__pay",
            "oa",
            "OA",
        ] {
            assert_eq!(connector(tool), "oa", "{tool:?}");
        }
        assert_eq!(connector("sql_exec"), "sql_exec");
        assert_eq!(connector(""), "");
        assert_eq!(connector("____"), "");
    }

    #[test]
    fn metadata_names_the_connector_unless_it_is_empty() {
        let ctx = HookContext::tool_call("sql_exec", json!({}));
        assert_eq!(
            connector_key(&ctx.clone().with_metadata("connector", "WareHouse")),
            "warehouse"
        );
        assert_eq!(
            connector_key(&ctx.clone().with_metadata("connector", "")),
            "sql_exec"
        );
        assert_eq!(
            connector_key(&ctx.clone().with_metadata("connector", "\u{200B}")),
            "sql_exec"
        );
        assert_eq!(
            connector_key(&ctx.with_metadata("connector", 7)),
            "sql_exec"
        );
    }
}
