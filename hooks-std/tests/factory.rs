//! Building the standard hooks by name from their config-file form.

mod support;

use std::sync::Arc;

use hooks_runtime::{
    Agent, HookContext, HookRegistry, Observation,
    config::{AgentConfig, ConfigFormat},
    factory::Resources,
    trace::ExplainOutcome,
};
use hooks_std::approval_gate::NO_APPROVAL_CHANNEL;
use hooks_std::{
    DATABASE, Database, FactoryError, ORG_MODES, OrgModeSource, StaticOrgModes, build_std_hook,
};
use serde_json::{Value, json};

async fn resources() -> Resources {
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::with_read_only(["frozen"]));
    Resources::new()
        .with(DATABASE, Database::in_memory().await.expect("db"))
        .with(ORG_MODES, modes)
}

#[tokio::test]
async fn every_std_hook_builds_from_config_and_runs() {
    let resources = resources().await;
    let mut builder = HookRegistry::builder();
    for (name, config) in [
        ("audit_log", json!({"redact_keys": ["pin"]})),
        ("readonly_guard", json!(null)),
        ("result_truncate", json!({"max_chars": 5})),
        (
            "connector_rate_limit",
            json!({"default": {"calls": 1, "period": "1m"}}),
        ),
    ] {
        let built = build_std_hook(name, &config, &resources)
            .unwrap_or_else(|error| panic!("{name}: {error}"));
        builder = support::add(builder, built);
    }
    let registry = builder.build().expect("registry");
    let run = async |tool: &str, org: &str| {
        let ctx = HookContext::tool_call(tool, json!({"sql": "DELETE FROM t", "pin": 1234}))
            .with_org(org)
            .with_conversation("factory");
        registry
            .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("0123456789")))
            .await
            .observation
    };
    assert!(
        run("sql_exec", "frozen")
            .await
            .to_string()
            .contains("read-only")
    );
    let Observation::Output(Value::String(text)) = run("crm__get", "acme").await else {
        panic!("allowed");
    };
    assert!(text.starts_with("01234") && text.len() < 80, "{text}");
    assert!(run("crm__get", "acme").await.is_blocked(), "quota of 1");
    let rows = resources
        .get(DATABASE)
        .expect("db")
        .audit_entries("factory")
        .await
        .expect("rows");
    assert_eq!(rows.len(), 3);
    assert_eq!(rows[0].args["pin"], json!("[redacted]"));
}

#[tokio::test]
async fn bad_names_configs_and_missing_resources_are_errors() {
    let resources = resources().await;
    let unknown = build_std_hook("readonly_gaurd", &json!(null), &resources)
        .err()
        .expect("an error");
    assert!(matches!(unknown, FactoryError::UnknownHook { .. }));
    assert!(
        unknown
            .to_string()
            .contains("did you mean \"readonly_guard\""),
        "{unknown}"
    );

    let bad = build_std_hook("result_truncate", &json!({"max_char": 5}), &resources)
        .err()
        .expect("an error");
    assert!(
        bad.to_string().contains("unknown field `max_char`"),
        "{bad}"
    );

    let none = Resources::new();
    for name in ["audit_log", "readonly_guard"] {
        let missing = build_std_hook(name, &json!(null), &none)
            .err()
            .expect("an error");
        assert!(
            matches!(missing, FactoryError::MissingResource { .. }),
            "{name}"
        );
    }
    let db_limit = build_std_hook(
        "connector_rate_limit",
        &json!({"backend": "database"}),
        &none,
    );
    assert!(db_limit.is_err());
}

/// A resource is stored under its key's type: org modes given as a concrete
/// `Arc<StaticOrgModes>` are the guard's org modes, not a value it silently
/// never finds.
#[tokio::test]
async fn org_modes_of_a_concrete_type_are_found_under_their_key() {
    let resources = Resources::new().with(
        ORG_MODES,
        Arc::new(StaticOrgModes::with_read_only(["frozen"])),
    );
    let built = build_std_hook("readonly_guard", &json!(null), &resources).expect("guard");
    let registry = support::add(HookRegistry::builder(), built)
        .build()
        .expect("registry");
    let ctx = HookContext::tool_call("sql_exec", json!({"q": "DELETE FROM t"})).with_org("frozen");
    let report = registry
        .run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("deleted")))
        .await;
    assert!(!report.tool_ran, "{}", report.observation);
    assert_eq!(report.stopped_by(), Some("readonly_guard"));
}

/// An agent that gates nothing needs no approval machinery: it builds with
/// a read-only guard and a rate limit alone, its ordinary calls run, and a
/// call that would need approval is blocked (nobody could be asked), with a
/// message saying what to configure.
#[tokio::test]
async fn an_agent_without_approvals_builds_and_blocks_only_what_needs_approval() {
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::with_read_only(["frozen"]));
    let resources = Resources::new().with(ORG_MODES, modes);
    let agent = |yaml: &str| {
        let config =
            AgentConfig::parse(yaml, ConfigFormat::Yaml, "agent.yaml", None).expect("parses");
        Agent::build(config, &resources).unwrap_or_else(|errors| panic!("builds: {errors}"))
    };
    let call = async |agent: &Agent, ctx: HookContext| {
        agent
            .call_tool(ctx, async |_: &Value| Ok::<_, String>(json!("done")))
            .await
    };
    let plain = agent(
        "agent: plain\nhooks:\n  class_hooks:\n    - readonly_guard\n    \
         - name: connector_rate_limit\n      config: { per_user_per_minute: 5 }\n",
    );
    assert!(
        plain.registry().describe().contains("approval_gate"),
        "the gate is attached anyway"
    );
    let ordinary = call(&plain, plain.context("crm__get", json!({"id": 1}))).await;
    assert!(ordinary.tool_ran, "{}", ordinary.observation);
    assert_eq!(ordinary.observation, Observation::Output(json!("done")));

    let flagged = plain
        .context("oa__pay", json!({"amount": 10}))
        .with_metadata("requires_confirmation", json!(true));
    // A dry run says the same: blocked, not "would ask" (nobody could be asked).
    let dry = plain.registry().explain(flagged.clone(), false).await;
    assert_eq!(dry.outcome, ExplainOutcome::Blocked, "{dry:?}");
    assert_eq!(dry.blocked_by.as_deref(), Some("approval_gate"));
    let flagged = call(&plain, flagged).await;
    assert!(!flagged.tool_ran);
    assert_eq!(flagged.stopped_by(), Some("approval_gate"));
    let text = flagged.observation.to_string();
    assert!(
        text.contains("this call needs approval, and no approval channel is configured: add"),
        "{text}"
    );

    let all = agent("agent: careful\nrequire_confirmation_for_all: true\n");
    let gated = call(&all, all.context("crm__get", json!({"id": 1}))).await;
    assert!(!gated.tool_ran);
    assert!(
        gated.observation.to_string().contains(NO_APPROVAL_CHANNEL),
        "{}",
        gated.observation
    );

    let by_when = agent(
        "agent: when\nhooks:\n  class_hooks:\n    - name: approval_gate\n      \
         config: { when: 'tool_name == \"oa__pay\"' }\n",
    );
    let paid = call(&by_when, by_when.context("oa__pay", json!({}))).await;
    assert_eq!(paid.stopped_by(), Some("approval_gate"));
    let read = call(&by_when, by_when.context("crm__get", json!({}))).await;
    assert!(read.tool_ran, "{}", read.observation);
}

/// A gate config that selects a channel means approvals were meant: without
/// the machinery the agent does not build, and the error says what to add.
#[tokio::test]
async fn a_gate_that_names_a_channel_still_needs_the_approval_machinery() {
    let error = build_std_hook(
        "approval_gate",
        &json!({"channel": "slack", "slack": {
            "team_id": "T1", "channel_id": "C1",
            "bot_token_env": "SLACK_BOT_TOKEN", "signing_secret_env": "SLACK_SIGNING_SECRET"
        }}),
        &Resources::new(),
    )
    .err()
    .expect("an error");
    let text = error.to_string();
    assert!(text.contains("no approval machinery was given"), "{text}");
    assert!(text.contains("APPROVALS"), "{text}");
}

/// The channel is set in one place: a config with a channel section and
/// approval machinery started in code on a channel of its own is refused
/// (whichever channels they are), while checks and dry runs on the
/// offline machinery accept the section.
#[tokio::test]
async fn a_channel_set_both_in_the_config_and_in_code_is_refused() {
    use hooks_std::approval_gate::channel::feishu::FeishuChannel;
    use hooks_std::approval_gate::{
        Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
    };
    use hooks_testkit::feishu::{FakeFeishu, FakeFeishuConfig};

    let config = json!({"channel": "slack", "slack": {
        "team_id": "T1", "channel_id": "C1",
        "bot_token_env": "SLACK_BOT_TOKEN", "signing_secret_env": "SLACK_SIGNING_SECRET"
    }});
    let feishu = FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake feishu");
    let approvals = Approvals::start(
        ConfirmationStore::new(Database::in_memory().await.expect("db")),
        Arc::new(FeishuChannel::new(feishu.feishu_config("oc_general")).expect("channel")),
        Arc::new(StaticDirectory::new()),
        ApprovalsConfig::default(),
    );
    let resources = Resources::new().with(hooks_std::APPROVALS, approvals);
    let error = build_std_hook("approval_gate", &config, &resources)
        .err()
        .expect("refused");
    let text = error.to_string();
    assert!(text.contains("set twice"), "{text}");
    assert!(text.contains("builder_from_config"), "{text}");

    let offline = hooks_std::offline_resources(Vec::<String>::new())
        .await
        .expect("resources");
    build_std_hook("approval_gate", &config, &offline).expect("a dry run reads the section");
}
