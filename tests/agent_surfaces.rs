//! Hooks fire on every surface — chat, API, DAG step, delegated sub-agent,
//! workflow node — and evaluation bypasses them, saying so. A delegated agent
//! builds its own registry from its own config and always gets the approval
//! gate, asking for every call when its own `require_confirmation_for_all` or
//! any caller's is set; neither a delegated agent nor a workflow node can run
//! a gated tool without approval.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use hooks::prelude::*;
use hooks::std_hooks::approval_gate::channel::feishu::FeishuChannel;
use hooks::std_hooks::approval_gate::{
    ApprovalDecision, Approvals, ApprovalsConfig, ConfirmationStore, StaticDirectory,
};
use hooks::std_hooks::readonly_guard::{OrgModeSource, StaticOrgModes};
use hooks::std_hooks::{APPROVALS, DATABASE, Database, ORG_MODES};
use hooks::{
    Agent, ToolCallReport,
    config::{AgentConfig, ConfigFormat},
    factory::Resources,
};
use hooks_testkit::feishu::{CardClick, FakeFeishu, FakeFeishuConfig};
use serde_json::{Value, json};

/// Tells the LLM who called it, from where: proves what hooks see.
#[pre_tool_use(when = tool_name == "whoami")]
async fn report_caller(ctx: &HookContext) -> HookResult {
    HookResult::block(format!(
        "{} via {:?} on {}",
        ctx.agent_id, ctx.agent_path, ctx.surface
    ))
}

fn config(yaml: &str) -> AgentConfig {
    AgentConfig::parse(yaml, ConfigFormat::Yaml, "test.yaml", None).expect("config")
}

async fn offline_resources() -> Resources {
    hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("in-memory database")
}

async fn call(agent: &Agent, tool: &str, metadata: Option<(&str, Value)>) -> ToolCallReport {
    let mut ctx = agent
        .context(tool, json!({"amount": 1}))
        .with_user("alice")
        .with_org("acme")
        .with_conversation("conv")
        .with_tool_call_id(format!("{tool}-{}", agent.surface()));
    if let Some((key, value)) = metadata {
        ctx = ctx.with_metadata(key, value);
    }
    agent
        .call_tool(ctx, async |_: &Value| Ok::<_, String>(json!("ran")))
        .await
}

const PARENT: &str = "agent: parent\nhooks:\n  class_hooks: [report_caller]\n";

#[tokio::test]
async fn hooks_fire_on_every_surface_but_evaluation() {
    let agent = Agent::build(config(PARENT), &offline_resources().await).expect("agent");
    for surface in [
        Surface::Chat,
        Surface::Api,
        Surface::DagStep,
        Surface::Delegated,
        Surface::WorkflowNode,
    ] {
        let report = call(&agent.on_surface(surface), "whoami", None).await;
        assert!(!report.tool_ran, "{surface}");
        assert_eq!(
            report.observation.to_string(),
            format!("Blocked by hook `report_caller`: parent via [\"parent\"] on {surface}")
        );
        let gated = call(
            &agent.on_surface(surface),
            "pay",
            Some(("requires_confirmation", json!(true))),
        )
        .await;
        assert!(!gated.tool_ran, "the gate fires on {surface}");
    }
    let evaluation = call(&agent.on_surface(Surface::Evaluation), "whoami", None).await;
    assert!(evaluation.tool_ran);
    assert!(
        evaluation.trace.bypassed(),
        "the trace says hooks were bypassed"
    );
}

#[tokio::test]
async fn a_delegate_builds_its_own_registry_and_always_gets_the_gate() {
    let parent = Agent::build(config(PARENT), &offline_resources().await).expect("parent");
    // The child declares no hooks at all, but needs confirmation for everything.
    let child = parent
        .delegate(config("agent: child\nrequire_confirmation_for_all: true\n"))
        .expect("child");
    assert_eq!(child.path(), ["parent", "child"]);
    assert_eq!(child.surface(), Surface::Delegated);
    let names: Vec<&str> = child
        .registry()
        .pre_tool_use()
        .iter()
        .map(|h| h.name())
        .collect();
    assert_eq!(
        names,
        ["approval_gate"],
        "the parent's hooks are not inherited"
    );

    let report = call(&child, "whoami", None).await;
    assert!(!report.tool_ran, "every call of the child is gated");
    assert_eq!(report.stopped_by(), Some("approval_gate"));
    // The parent is not governed by the child's flag.
    let parent_call = call(&parent, "lookup", None).await;
    assert!(parent_call.tool_ran);

    // A grandchild sees the whole path (under a child that does not gate
    // every call: under `child` it would be gated too).
    let grandchild = parent
        .delegate(config("agent: child\n"))
        .expect("child")
        .delegate(config(
            "agent: grandchild\nhooks:\n  class_hooks: [report_caller]\n",
        ))
        .expect("grandchild");
    let report = call(&grandchild, "whoami", None).await;
    assert_eq!(
        report.observation.to_string(),
        "Blocked by hook `report_caller`: grandchild via [\"parent\", \"child\", \"grandchild\"] on delegated"
    );
    // A delegate whose config is broken does not run.
    assert!(
        parent
            .delegate(config("agent: bad\nhooks:\n  class_hooks: [nope]\n"))
            .is_err()
    );
}

#[tokio::test]
async fn a_delegate_is_never_less_guarded_than_its_caller() {
    let resources = offline_resources().await;
    let strict = Agent::build(
        config("agent: treasurer\nrequire_confirmation_for_all: true\n"),
        &resources,
    )
    .expect("parent");
    // The child's own config does not ask for confirmation; its caller does.
    let child = strict
        .delegate(config(
            "agent: payer\nrequire_confirmation_for_all: false\n",
        ))
        .expect("child");
    assert!(child.config().flag("require_confirmation_for_all"));
    let report = call(&child, "oa__pay", None).await;
    assert!(!report.tool_ran, "the child cannot pay unapproved");
    assert_eq!(report.stopped_by(), Some("approval_gate"));
    // Nor can a grandchild, two levels down.
    let grandchild = child
        .delegate(config("agent: clerk\n"))
        .expect("grandchild");
    let report = call(&grandchild, "oa__pay", None).await;
    assert!(!report.tool_ran);
    assert_eq!(report.stopped_by(), Some("approval_gate"));

    // A relaxed parent does not relax a strict child.
    let relaxed = Agent::build(config("agent: relaxed\n"), &resources).expect("parent");
    let strict_child = relaxed
        .delegate(config("agent: payer\nrequire_confirmation_for_all: true\n"))
        .expect("child");
    assert!(!call(&strict_child, "oa__pay", None).await.tool_ran);
    assert!(call(&relaxed, "oa__pay", None).await.tool_ran);
}

/// With a real channel (the fake Feishu), a delegated agent's and a
/// workflow node's gated calls wait for a person; approval lets them run.
#[tokio::test]
async fn delegated_and_workflow_calls_need_a_real_approval() {
    let feishu = FakeFeishu::start(FakeFeishuConfig::default())
        .await
        .expect("fake");
    let database = Database::in_memory().await.expect("db");
    let approvals = Approvals::start(
        ConfirmationStore::new(database.clone()),
        Arc::new(FeishuChannel::new(feishu.feishu_config("oc_ops")).expect("channel")),
        Arc::new(StaticDirectory::new().person("feishu", "ou_alice", "alice", "acme")),
        ApprovalsConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let url = format!("http://{}/cb", listener.local_addr().expect("addr"));
    let app = Router::new().nest("/cb", approvals.router());
    tokio::spawn(async move { axum::serve(listener, app).await });
    let modes: Arc<dyn OrgModeSource> = Arc::new(StaticOrgModes::new());
    let resources = Resources::new()
        .with(DATABASE, database)
        .with(APPROVALS, approvals)
        .with(ORG_MODES, modes);

    let parent = Agent::build(config("agent: parent\n"), &resources).expect("parent");
    let child = parent
        .delegate(config("agent: payer\nrequire_confirmation_for_all: true\n"))
        .expect("child");
    let workflow = parent.on_surface(Surface::WorkflowNode);

    for (n, (agent, metadata)) in [
        (child, None),
        (workflow, Some(("requires_confirmation", json!(true)))),
    ]
    .into_iter()
    .enumerate()
    {
        let pending = tokio::spawn(async move { call(&agent, "oa__pay", metadata).await });
        let card = feishu
            .wait_for_card(n + 1, Duration::from_secs(5))
            .await
            .expect("a card");
        let id = card.request_id().expect("request id").to_owned();
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(!pending.is_finished(), "call {n} waits for approval");
        feishu
            .click(
                &url,
                &CardClick::new(&id, ApprovalDecision::Approve, "ou_alice", "oc_ops"),
            )
            .await
            .expect("click");
        let report = tokio::time::timeout(Duration::from_secs(5), pending)
            .await
            .expect("approval wakes it")
            .expect("task");
        assert!(report.tool_ran, "call {n}: {}", report.observation);
    }
}
