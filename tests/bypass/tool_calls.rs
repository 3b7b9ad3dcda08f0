//! Whole tool calls through an agent's standard hook stack, built from a
//! config file as a user would: what runs, what is blocked, and by whom.

use hooks::std_hooks::offline_resources;
use hooks::{
    Agent,
    config::{AgentConfig, ConfigFormat},
    factory::Resources,
};
use serde_json::{Value, json};

/// The stack: the gate asks for payments over 50,000 (the offline channel
/// can reach nobody, so a gated call is blocked by the gate: it fails
/// closed); the read-only guard; a tight rate limit.
pub(super) const AGENT: &str = r#"
agent: finance-bot
hooks:
  class_hooks:
    - name: approval_gate
      config:
        when: 'tool_name == "oa__pay" && args.amount > 50000'
    - readonly_guard
    - name: connector_rate_limit
      config: { per_user_per_minute: 2 }
"#;

/// The same stack with a schema for the payment tool in front.
const AGENT_WITH_SCHEMA: &str = r#"
agent: finance-bot
hooks:
  class_hooks:
    - name: args_schema
      config:
        schemas:
          oa__pay:
            type: object
            properties:
              amount: { type: number }
              payee: { type: string }
            required: [amount, payee]
            additionalProperties: false
    - name: approval_gate
      config:
        when: 'tool_name == "oa__pay" && args.amount > 50000'
    - readonly_guard
"#;

/// What must happen to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    /// The tool runs.
    Runs,
    /// This hook (or `runtime`) stops it; the tool never runs.
    StoppedBy(&'static str),
}

pub(super) async fn agent(yaml: &str) -> (Agent, Resources) {
    let resources = offline_resources(["frozen"]).await.expect("resources");
    let config = AgentConfig::parse(yaml, ConfigFormat::Yaml, "bypass.yaml", None).expect("config");
    (Agent::build(config, &resources).expect("agent"), resources)
}

/// Runs one call as `user` in `org` and returns what happened.
async fn verdict(
    agent: &Agent,
    n: usize,
    user: &str,
    org: &str,
    tool: &str,
    args: Value,
) -> Verdict {
    let ctx = agent
        .context(tool, args)
        .with_user(user)
        .with_org(org)
        .with_conversation("bypass")
        .with_tool_call_id(format!("call-{n}"));
    let report = agent
        .call_tool(ctx, async |_: &Value| Ok::<_, String>(json!("done")))
        .await;
    match report.stopped_by() {
        None if report.tool_ran => Verdict::Runs,
        None => panic!("{tool}: neither ran nor stopped: {}", report.observation),
        Some(hook) => {
            assert!(!report.tool_ran, "{tool}: stopped by {hook} after running");
            Verdict::StoppedBy(match hook {
                "runtime" => "runtime",
                "approval_gate" => "approval_gate",
                "readonly_guard" => "readonly_guard",
                "connector_rate_limit" => "connector_rate_limit",
                "args_schema" => "args_schema",
                other => panic!("{tool}: stopped by unexpected hook {other}"),
            })
        }
    }
}

use Verdict::{Runs, StoppedBy};

/// (why, tool, args, verdict): each call made by its own user, so no rate
/// limit interferes.
fn single_calls() -> Vec<(&'static str, &'static str, Value, Verdict)> {
    vec![
        (
            "a payment under the threshold",
            "oa__pay",
            json!({"amount": 50000, "payee": "acme"}),
            Runs,
        ),
        (
            "a payment over it",
            "oa__pay",
            json!({"amount": 60000, "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
        (
            "the amount as a string",
            "oa__pay",
            json!({"amount": "60000", "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
        (
            "padded",
            "oa__pay",
            json!({"amount": " 60000\n", "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
        (
            "an exponent",
            "oa__pay",
            json!({"amount": "6e4", "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
        (
            "a fraction",
            "oa__pay",
            json!({"amount": "50000.01", "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
        (
            "beyond u64",
            "oa__pay",
            json!({"amount": "99999999999999999999999", "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
        (
            "a NUL in the tool name",
            "oa__pay\u{0}",
            json!({"amount": 1}),
            StoppedBy("runtime"),
        ),
        (
            "a bidi override in the tool name",
            "oa__\u{202E}yap",
            json!({"amount": 1}),
            StoppedBy("runtime"),
        ),
        (
            "a zero-width space in the tool name",
            "oa__pay\u{200B}",
            json!({"amount": 60000}),
            StoppedBy("runtime"),
        ),
        (
            "a BOM before the tool name",
            "\u{FEFF}oa__pay",
            json!({"amount": 60000}),
            StoppedBy("runtime"),
        ),
        (
            "a newline in the tool name",
            "sql_exec\n",
            json!({"sql": "SELECT 1"}),
            StoppedBy("runtime"),
        ),
        ("no tool name", "", json!({}), StoppedBy("runtime")),
    ]
}

#[tokio::test]
async fn hostile_single_calls_get_their_verdicts() {
    let (agent, _resources) = agent(AGENT).await;
    for (n, (why, tool, args, expected)) in single_calls().into_iter().enumerate() {
        let got = verdict(&agent, n, &format!("user-{n}"), "acme", tool, args).await;
        assert_eq!(got, expected, "{why}: {tool:?}");
    }
}

#[tokio::test]
async fn with_a_schema_spellings_the_trigger_cannot_read_are_blocked_first() {
    let (agent, _resources) = agent(AGENT_WITH_SCHEMA).await;
    let cases = [
        (
            "a plain payment",
            json!({"amount": 100, "payee": "acme"}),
            Runs,
        ),
        (
            "a thousands separator",
            json!({"amount": "60,000", "payee": "acme"}),
            StoppedBy("args_schema"),
        ),
        (
            "a number as a string",
            json!({"amount": "60000", "payee": "acme"}),
            StoppedBy("args_schema"),
        ),
        (
            "fullwidth digits",
            json!({"amount": "６００００", "payee": "acme"}),
            StoppedBy("args_schema"),
        ),
        (
            "an array",
            json!({"amount": [60000], "payee": "acme"}),
            StoppedBy("args_schema"),
        ),
        (
            "an extra key the tool may read",
            json!({"amount": 1, "payee": "acme", "amount_override": 60000}),
            StoppedBy("args_schema"),
        ),
        (
            "no amount at all",
            json!({"payee": "acme"}),
            StoppedBy("args_schema"),
        ),
        (
            "not an object",
            json!("pay 60000 to acme"),
            StoppedBy("args_schema"),
        ),
        (
            "a real amount over the threshold",
            json!({"amount": 60000, "payee": "acme"}),
            StoppedBy("approval_gate"),
        ),
    ];
    for (n, (why, args, expected)) in cases.into_iter().enumerate() {
        let got = verdict(&agent, n, &format!("user-{n}"), "acme", "oa__pay", args).await;
        assert_eq!(got, expected, "{why}");
    }
}

#[tokio::test]
async fn every_sql_argument_is_read_in_a_read_only_org() {
    let (agent, _resources) = agent(AGENT).await;
    let cases = [
        ("a read", json!({"sql": "SELECT * FROM invoices"}), Runs),
        (
            "a write under a second key",
            json!({"sql": "SELECT 1", "query": "DELETE FROM invoices"}),
            StoppedBy("readonly_guard"),
        ),
        (
            "EXPLAIN ANALYZE runs its statement",
            json!({"q": "EXPLAIN (ANALYZE) DELETE FROM invoices"}),
            StoppedBy("readonly_guard"),
        ),
        (
            "PostgreSQL ends -- comments at \\r",
            json!({"sql": "SELECT 1; -- x\rDELETE FROM invoices"}),
            StoppedBy("readonly_guard"),
        ),
        (
            "SQLite does not nest block comments",
            json!({"sql": "SELECT 1 /* /* */ ; DELETE FROM invoices; -- */"}),
            StoppedBy("readonly_guard"),
        ),
        (
            "a writing function in a SELECT",
            json!({"sql": "SELECT setval('invoices_id_seq', 1)"}),
            StoppedBy("readonly_guard"),
        ),
        (
            "turning read-only off",
            json!({"sql": "SELECT set_config('default_transaction_read_only', 'off', false)"}),
            StoppedBy("readonly_guard"),
        ),
        (
            "a procedural block",
            json!({"sql": "BEGIN DELETE FROM invoices; END"}),
            StoppedBy("readonly_guard"),
        ),
    ];
    for (n, (why, args, expected)) in cases.into_iter().enumerate() {
        let got = verdict(&agent, n, &format!("user-{n}"), "frozen", "sql_exec", args).await;
        assert_eq!(got, expected, "{why}");
    }
}

#[tokio::test]
async fn one_connector_spelled_many_ways_shares_one_limit() {
    let (agent, _resources) = agent(AGENT).await;
    // Two calls a minute per (connector, user): the third spelling is over.
    let spellings = ["oa__lookup", "OA__lookup", "ｏａ__lookup"];
    let got: Vec<Verdict> = {
        let mut got = Vec::new();
        for (n, tool) in spellings.into_iter().enumerate() {
            got.push(verdict(&agent, n, "mallory", "acme", tool, json!({})).await);
        }
        got
    };
    assert_eq!(got, [Runs, Runs, StoppedBy("connector_rate_limit")]);
    // Nor does a user id spelled another way get a fresh bucket.
    let again = verdict(&agent, 9, "MALLORY", "acme", "oa__lookup", json!({})).await;
    assert_eq!(again, StoppedBy("connector_rate_limit"));
    // Tools with no connector are limited too (their own bucket), never unlimited.
    let mut plain = Vec::new();
    for n in 0..3 {
        plain.push(verdict(&agent, 20 + n, "trudy", "acme", "lookup", json!({})).await);
    }
    assert_eq!(plain, [Runs, Runs, StoppedBy("connector_rate_limit")]);
}
