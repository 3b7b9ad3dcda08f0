//! A factory registered for every agent: built for each agent whether its
//! config names it or not, with its entry's config when it does, and with the
//! agent's settings typed — the mechanism the approval gate uses, open to
//! any factory.

use std::sync::Mutex;

use hooks::prelude::*;
use hooks::{
    HookOutcome,
    config::{AgentConfig, ConfigFormat},
    factory::{Built, FactoryInput, Resources},
    registry::RegisteredHook,
};
use serde::Deserialize;
use serde_json::{Value, json};

/// What each build of `stamp` saw: (its config's label, the agent's flag).
static BUILDS: Mutex<Vec<(String, bool)>> = Mutex::new(Vec::new());

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct StampConfig {
    label: Option<String>,
}

/// Rewrites every call's args to carry its label (or "default").
struct Stamp(String);

impl Hook for Stamp {
    fn name(&self) -> &str {
        "stamp"
    }
    fn should_trigger(&self, _: &HookContext) -> bool {
        true
    }
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        let mut args = ctx.tool_args.clone();
        args["stamp"] = json!(self.0);
        HookResult::allow().with_args(args).into()
    }
}
impl PreToolUseHook for Stamp {}

fn build_stamp(input: &FactoryInput<'_>) -> Result<Built, String> {
    let config: StampConfig = input.parse_config()?;
    let label = config.label.unwrap_or_else(|| "default".to_owned());
    BUILDS.lock().expect("builds").push((
        label.clone(),
        input.agent.flag("require_confirmation_for_all"),
    ));
    Ok(RegisteredHook::pre(Stamp(label)).into())
}

hooks::hook_factory!(every_agent "stamp", "stamps every call's args", build_stamp);

async fn resources() -> Resources {
    hooks::std_hooks::offline_resources([] as [&str; 0])
        .await
        .expect("in-memory database")
}

fn config(yaml: &str, file: &str) -> AgentConfig {
    AgentConfig::parse(yaml, ConfigFormat::Yaml, file, None).expect("parses")
}

async fn stamped_args(agent: &hooks::Agent) -> Value {
    let ctx = agent.context("echo", json!({}));
    agent
        .call_tool(ctx, async |args: &Value| Ok::<_, String>(args.clone()))
        .await
        .args
}

#[tokio::test]
async fn every_agent_gets_the_hook_named_or_not_with_its_settings_typed() {
    let resources = resources().await;
    let plain = hooks::Agent::build(config("agent: plain\n", "plain.yaml"), &resources)
        .expect("builds without naming the hook");
    assert_eq!(stamped_args(&plain).await["stamp"], "default");

    let named = hooks::Agent::build(
        config(
            "agent: named\nhooks:\n  class_hooks:\n    - {name: stamp, config: {label: finance}}\n",
            "named.yaml",
        ),
        &resources,
    )
    .expect("builds with the entry's config");
    assert_eq!(stamped_args(&named).await["stamp"], "finance");

    // The agent's flag reaches the factory typed; a delegate inherits it.
    let strict = hooks::Agent::build(
        config(
            "agent: strict\nrequire_confirmation_for_all: true\n",
            "strict.yaml",
        ),
        &resources,
    )
    .expect("builds");
    strict
        .delegate(config("agent: child\n", "child.yaml"))
        .expect("delegate builds");
    let builds = BUILDS.lock().expect("builds").clone();
    assert!(
        builds.contains(&("default".to_owned(), false)),
        "{builds:?}"
    );
    assert!(
        builds.contains(&("finance".to_owned(), false)),
        "{builds:?}"
    );
    assert_eq!(
        builds.iter().filter(|(_, flag)| *flag).count(),
        2,
        "the strict agent and its delegate: {builds:?}"
    );
}

#[tokio::test]
async fn an_every_agent_hook_cannot_be_listed_twice_or_misconfigured() {
    let resources = resources().await;
    let twice = "agent: x\nhooks:\n  class_hooks:\n    - {name: stamp, config: {label: a}}\n    - {name: stamp, config: {label: b}}\n";
    let errors = config(twice, "twice.yaml")
        .build_registry(&resources)
        .expect_err("listed twice");
    assert!(
        errors.to_string().contains(
            "twice.yaml: hooks.class_hooks[1] (stamp): \"stamp\" is listed twice; every agent gets it once"
        ),
        "{errors}"
    );

    let typo = "agent: x\nhooks:\n  class_hooks:\n    - {name: stamp, config: {lable: a}}\n";
    let errors = config(typo, "typo.yaml")
        .build_registry(&resources)
        .expect_err("unknown field");
    assert!(
        errors
            .to_string()
            .contains("typo.yaml: hooks.class_hooks[0] (stamp): invalid config for hook \"stamp\""),
        "{errors}"
    );
}
