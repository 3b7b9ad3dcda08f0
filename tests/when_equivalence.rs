//! The same `when` text, compiled by the attribute and parsed at run time,
//! gives the same answer on every context. The runtime parses exactly the
//! text the attribute reconstructed from its tokens (`when_source()`).

use hooks::prelude::*;
use hooks::when::When;
use serde_json::{Value, json};

/// Declares one pre hook per `name: expression` line, and a list of their names.
macro_rules! cases {
    ($point:ident; $($name:ident: ($($when:tt)*);)*) => {
        $(
            #[$point(when = $($when)*)]
            async fn $name(_ctx: &HookContext) -> HookResult {
                HookResult::allow()
            }
        )*
        const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
}

cases! { pre_tool_use;
    eq_tool: (tool_name == "sql_exec");
    ne_tool: (tool_name != "sql_exec");
    starts: (tool_name starts_with "sql_");
    ends: (tool_name ends_with "_pay");
    contains_tool: (tool_name contains "purchase");
    glob_star: (tool_name matches "sql_*");
    glob_question: (tool_name matches "sql_e?ec");
    glob_class: (tool_name matches "[os][aq]*");
    glob_negated: (tool_name matches "[!s]*");
    regex_anchor: (tool_name matches_regex "^oa__.*_pay$");
    regex_alt: (tool_name matches_regex "exec|query");
    in_tools: (tool_name in ["sql_exec", "http__fetch"]);
    tool_exists: (tool_name exists);
    connector_eq: (connector == "oa");
    connector_exists: (connector exists);
    action_starts: (action starts_with "purchase");
    agent_eq: (agent_id == "finance-bot");
    user_in: (user_id in ["alice", "bob"]);
    user_missing: (user_id exists);
    org_ne: (org_id != "acme");
    conversation_eq: (conversation_id == "c-1");
    surface_eq: (surface == "chat");
    surface_in: (surface in ["dag_step", "workflow_node"]);
    meta_flag: (metadata.requires_confirmation);
    meta_not_flag: (!metadata.requires_confirmation);
    meta_eq_true: (metadata.requires_confirmation == true);
    meta_eq_false: (metadata.requires_confirmation == false);
    meta_nested: (metadata.limits.daily > 1000);
    meta_string: (metadata.method == "POST");
    meta_method_in: (metadata.method in ["POST", "PUT", "PATCH", "DELETE"]);
    meta_exists: (metadata.method exists);
    meta_missing_exists: (metadata.nothing exists);
    meta_ne_missing: (metadata.nothing != "x");
    args_gt_int: (args.amount > 50000);
    args_ge: (args.amount >= 50000);
    args_lt_float: (args.amount < 50000.5);
    args_le: (args.amount <= 100);
    args_eq_num: (args.amount == 50000.5);
    args_eq_int_float: (args.count == 3.0);
    args_ne_num: (args.count != 3);
    args_negative: (args.delta > -1);
    args_string_eq: (args.currency == "CNY");
    args_string_number_mismatch: (args.currency == 5);
    args_contains_str: (args.q contains "DELETE");
    args_starts: (args.q starts_with "SELECT");
    args_glob: (args.q matches "DELETE *");
    args_regex: (args.q matches_regex "(?i)^\\s*delete");
    args_array_contains: (args.tags contains "urgent");
    args_array_contains_num: (args.ids contains 7);
    args_index: (args.items.0.sku == "A-1");
    args_index_missing: (args.items.5.sku exists);
    args_in_mixed: (args.count in [1, 2, 3, "three"]);
    args_bool: (args.dry_run);
    args_exists_null: (args.nullable exists);
    args_unicode: (args.note contains "审批");
    args_quoted_key: (args."content-type" == "json");
    and_chain: (tool_name starts_with "sql_" && org_id == "acme" && !metadata.requires_confirmation);
    or_chain: (tool_name == "a" || tool_name == "b" || connector == "oa");
    mixed_precedence: (tool_name == "x" || org_id == "acme" && args.amount > 10);
    parens: ((tool_name == "x" || org_id == "acme") && args.amount > 10);
    double_not: (!!metadata.requires_confirmation);
    not_group: (!(tool_name starts_with "sql_" || connector exists));
    deep: (((((tool_name exists)))));
    five_clauses: (tool_name starts_with "oa__" && args.amount > 50000 && metadata.requires_confirmation && user_id != "root" && surface in ["chat", "api"]);
    string_escape: (args.note ends_with "line\nnext \"quoted\"");
}

fn contexts() -> Vec<HookContext> {
    vec![
        HookContext::tool_call(
            "sql_exec",
            json!({"q": "DELETE FROM t", "amount": 50000, "count": 3, "tags": ["urgent", "ops"], "ids": [1, 7],
                   "items": [{"sku": "A-1"}], "dry_run": true, "nullable": null, "delta": 0, "content-type": "json"}),
        )
        .with_org("acme")
        .with_user("alice")
        .with_agent("finance-bot")
        .with_conversation("c-1"),
        HookContext::tool_call(
            "oa__purchase_pay",
            json!({"amount": 50000.5, "currency": "CNY", "note": "需要审批 line\nnext \"quoted\"", "count": 2.5, "delta": -2}),
        )
        .with_org("globex")
        .with_user("bob")
        .with_surface(Surface::Api)
        .with_metadata("requires_confirmation", true)
        .with_metadata("method", "POST")
        .with_metadata("limits", json!({"daily": 5000})),
        HookContext::tool_call("http__fetch", json!({"q": "  delete everything", "amount": "lots", "items": []}))
            .with_surface(Surface::WorkflowNode)
            .with_metadata("requires_confirmation", "yes")
            .with_metadata("connector", "web"),
        HookContext::tool_call("sql_query", json!({"q": "SELECT 1", "amount": 99, "count": 3.0, "note": "note"}))
            .with_org("acme")
            .with_user("root")
            .with_surface(Surface::DagStep)
            .with_metadata("requires_confirmation", false)
            .with_metadata("limits", json!({"daily": "unlimited"})),
        HookContext::tool_call("b", Value::Null).with_user("carol"),
        // Numbers as a model may write them: strings that are exactly JSON numbers.
        HookContext::tool_call(
            "oa__pay",
            json!({"amount": " 60000 ", "count": "3", "delta": "-2.5", "ids": ["7"], "currency": "5"}),
        )
        .with_user("mallory")
        .with_metadata("requires_confirmation", true),
    ]
}

#[test]
fn compiled_and_interpreted_predicates_agree_on_every_context() {
    let registry = HookRegistry::builder()
        .registered_named(NAMES)
        .build()
        .expect("registry");
    assert!(
        registry.pre_tool_use().len() >= 60,
        "the table must cover at least 60 expressions"
    );
    let contexts = contexts();
    let (mut trues, mut falses) = (0, 0);
    for hook in registry.pre_tool_use() {
        let source = hook.when_source().expect("every case has a when");
        let interpreted = When::parse(source, HookPoint::PreToolUse).unwrap_or_else(|error| {
            panic!(
                "{} did not parse at run time: {error}\n{source}",
                hook.name()
            )
        });
        for (index, ctx) in contexts.iter().enumerate() {
            let compiled = hook.should_trigger(ctx);
            assert_eq!(
                compiled,
                interpreted.matches(ctx),
                "{} disagrees on context {index}: `{source}`",
                hook.name()
            );
            if compiled { trues += 1 } else { falses += 1 }
        }
    }
    // Not a vacuous table: both outcomes occur often.
    assert!(trues > 60 && falses > 60, "trues {trues}, falses {falses}");
}

/// Pins the expected answers for a few cases, so agreement alone cannot hide a shared bug.
#[test]
fn selected_cases_give_the_documented_answers() {
    let registry = HookRegistry::builder()
        .registered_named(NAMES)
        .build()
        .expect("registry");
    let contexts = contexts();
    let answers = |name: &str| -> Vec<bool> {
        let hook = registry
            .pre_tool_use()
            .iter()
            .find(|hook| hook.name() == name)
            .expect("case exists");
        contexts
            .iter()
            .map(|ctx| hook.should_trigger(ctx))
            .collect()
    };
    assert_eq!(
        answers("args_gt_int"),
        [false, true, false, false, false, true],
        "50000.5 > 50000; \"lots\" is no number; \" 60000 \" is"
    );
    assert_eq!(
        answers("args_eq_int_float"),
        [true, false, false, true, false, true],
        "3 == 3.0 == \"3\""
    );
    assert_eq!(
        answers("meta_flag"),
        [false, true, false, false, false, true],
        "only JSON true counts"
    );
    assert_eq!(
        answers("meta_ne_missing"),
        [false; 6],
        "a missing value makes != false"
    );
    assert_eq!(
        answers("connector_eq"),
        [false, true, false, false, false, true]
    );
    assert_eq!(
        answers("args_index"),
        [true, false, false, false, false, false]
    );
    assert_eq!(
        answers("args_unicode"),
        [false, true, false, false, false, false]
    );
    assert_eq!(
        answers("args_regex"),
        [true, false, true, false, false, false]
    );
    assert_eq!(
        answers("mixed_precedence"),
        [true, false, false, true, false, false],
        "&& binds tighter than ||"
    );
    assert_eq!(
        answers("five_clauses"),
        [false, true, false, false, false, true]
    );
    assert_eq!(
        answers("string_escape"),
        [false, true, false, false, false, false]
    );
    assert_eq!(
        answers("args_string_number_mismatch"),
        [false, false, false, false, false, true],
        "a string that is exactly a JSON number is that number"
    );
    assert_eq!(
        answers("args_ne_num"),
        [false, true, false, false, false, false],
        "\"3\" is 3; 2.5 != 3; a missing value makes != false"
    );
    assert_eq!(
        answers("args_array_contains_num"),
        [true, false, false, false, false, true],
        "an element \"7\" equals 7"
    );
    assert_eq!(
        answers("args_negative"),
        [true, false, false, false, false, false],
        "\"-2.5\" > -1 is false, as -2 > -1 is"
    );
}
