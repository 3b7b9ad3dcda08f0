//! Dead-guard checks: an `args.…` path that a tool's declared argument
//! schema rules out fails the agent's build with a did-you-mean; a path the
//! check cannot decide is a warning the agent (and `hooks check`) reports.

use hooks::prelude::*;
use hooks::{
    Agent, HookOutcome,
    config::{AgentConfig, AgentConfigErrors, ConfigFormat, ConfigWarning},
    factory::{Built, FactoryInput},
    registry::RegisteredHook,
};
use serde_json::{Map, Value};

/// A schema guard for `shell_exec`, closed to other properties.
const SCHEMA: &str = r#"
    - name: args_schema
      config:
        schemas:
          shell_exec:
            type: object
            properties:
              command: { type: string }
              env: { type: object, properties: { HOME: { type: string } }, additionalProperties: false }
            required: [command]
            additionalProperties: false
          open_tool:
            type: object
            properties: { path: { type: string } }
"#;

fn config(hooks: &str) -> AgentConfig {
    let yaml = format!("agent: shell-bot\nhooks:\n  class_hooks:{hooks}");
    AgentConfig::parse(&yaml, ConfigFormat::Yaml, "agent.yaml", None).expect("the file parses")
}

async fn build(hooks: &str) -> Result<Agent, AgentConfigErrors> {
    let resources = hooks::std_hooks::offline_resources(["frozen"])
        .await
        .expect("resources");
    Agent::build(config(hooks), &resources)
}

fn gate(when: &str) -> String {
    format!("\n    - name: approval_gate\n      config:\n        when: '{when}'\n")
}

fn warnings_about<'w>(agent: &'w Agent, path: &str) -> Vec<&'w ConfigWarning> {
    agent
        .config_warnings()
        .iter()
        .filter(|warning| warning.message.contains(&format!("`{path}`")))
        .collect()
}

#[tokio::test]
async fn a_misspelled_path_fails_the_build_with_a_did_you_mean() {
    let hooks = format!(
        "{SCHEMA}{}",
        gate(r#"tool_name == "shell_exec" && args.comand contains "rm""#)
    );
    let errors = build(&hooks).await.expect_err("a guard that never fires");
    let text = errors.to_string();
    assert_eq!(errors.0.len(), 1, "{text}");
    let error = &errors.0[0];
    assert_eq!(error.file, "agent.yaml");
    assert!(
        error
            .entry
            .as_deref()
            .is_some_and(|e| e.contains("approval_gate")),
        "{error:?}"
    );
    for part in [
        "`args.comand`",
        "tool `shell_exec` never has",
        "no property `comand`",
        "hook \"args_schema\"",
        "did you mean `args.command`?",
    ] {
        assert!(text.contains(part), "{part:?} missing from {text}");
    }
    // Nested, and in a list of tools.
    let hooks = format!(
        "{SCHEMA}{}",
        gate(r#"tool_name in ["shell_exec"] && args.env.HOEM == "/root""#)
    );
    let text = build(&hooks)
        .await
        .expect_err("nested misspelling")
        .to_string();
    assert!(text.contains("did you mean `args.env.HOME`?"), "{text}");
}

#[tokio::test]
async fn a_key_below_a_string_cannot_exist() {
    let hooks = format!(
        "{SCHEMA}{}",
        gate(r#"tool_name == "shell_exec" && args.command.text == "x""#)
    );
    let text = build(&hooks)
        .await
        .expect_err("a string has no keys")
        .to_string();
    assert!(
        text.contains("is of type string, which has no key `text`"),
        "{text}"
    );
}

/// Tests on `tool_name` no one tool passes together: the guard never
/// fires, which is an error, not a silent pass.
#[tokio::test]
async fn a_when_restricted_to_no_tool_fails_the_build() {
    let hooks = format!(
        "{SCHEMA}{}",
        gate(r#"tool_name == "shell_exec" && tool_name == "sql_exec" && args.command == "x""#)
    );
    let text = build(&hooks).await.expect_err("never matches").to_string();
    assert!(text.contains("no one tool can pass together"), "{text}");
}

#[tokio::test]
async fn correct_paths_build_without_warnings_about_them() {
    let hooks = format!(
        "{SCHEMA}{}",
        gate(
            r#"tool_name == "shell_exec" && (args.command contains "rm" || args.env.HOME exists)"#
        )
    );
    let agent = build(&hooks).await.expect("the paths exist");
    assert!(warnings_about(&agent, "args.command").is_empty());
    assert!(warnings_about(&agent, "args.env.HOME").is_empty());
}

#[tokio::test]
async fn paths_that_cannot_be_checked_are_warnings() {
    let hooks = format!(
        "{SCHEMA}{}",
        gate(
            r#"args.amount > 5 || tool_name == "no_schema_tool" && args.x exists || tool_name == "open_tool" && args.pth exists"#
        )
    );
    let agent = build(&hooks).await.expect("warnings do not stop the agent");
    let unrestricted = warnings_about(&agent, "args.amount");
    assert_eq!(unrestricted.len(), 1, "{:?}", agent.config_warnings());
    assert!(
        unrestricted[0]
            .message
            .contains("not restricted to named tools"),
        "{}",
        unrestricted[0]
    );
    assert!(
        unrestricted[0].to_string().starts_with("agent.yaml: "),
        "{}",
        unrestricted[0]
    );
    let no_schema = warnings_about(&agent, "args.x");
    assert!(
        no_schema[0]
            .message
            .contains("no hook declares a JSON Schema"),
        "{}",
        no_schema[0]
    );
    // `open_tool`'s schema allows other properties: a warning, with the hint.
    let open = warnings_about(&agent, "args.pth");
    assert!(
        open[0]
            .message
            .contains("`additionalProperties` is not false")
            && open[0].message.contains("did you mean `args.path`?"),
        "{}",
        open[0]
    );
}

// ---- the generic declaration, with hostile schema shapes ----------------

struct Noop;

impl Hook for Noop {
    fn name(&self) -> &str {
        "declares_schemas"
    }
    fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
        HookResult::allow().into()
    }
}
impl PreToolUseHook for Noop {}

/// How deep the `deep` tool's schema nests: as deep as the JSON parser lets
/// a config file go (128), built in code as a catalogue could build it.
const DEEP: usize = 127;

/// Declares each `{tool: schema}` of its config, unvalidated, and a `deep`
/// tool whose schema nests `a` objects [`DEEP`] levels down.
fn build_declarer(input: &FactoryInput<'_>) -> Result<Built, String> {
    let mut schemas: Map<String, Value> = input.parse_config()?;
    let mut deep = serde_json::json!({"type": "object", "additionalProperties": false});
    for _ in 0..DEEP {
        deep = serde_json::json!({"type": "object", "properties": {"a": deep}, "additionalProperties": false});
    }
    schemas.insert("deep".into(), deep);
    Ok(schemas.into_iter().fold(
        Built::from(RegisteredHook::pre(Noop)),
        |built, (tool, schema)| built.with_args_schema(tool, schema),
    ))
}

hooks::hook_factory!(
    "declares_schemas",
    "declares tools' argument schemas (test)",
    build_declarer
);

#[pre_tool_use(when = tool_name == "deep" && args.a.a.a.b exists)]
async fn reads_deep_paths(_: &HookContext) -> HookResult {
    HookResult::allow()
}

#[tokio::test]
async fn hostile_schema_shapes_do_not_panic_and_are_not_guessed() {
    let mut schemas = Map::new();
    for (tool, schema) in [
        (
            "refs",
            serde_json::json!({"$ref": "#/$defs/self", "$defs": {"self": {"$ref": "#/$defs/self"}}}),
        ),
        (
            "any_of",
            serde_json::json!({"anyOf": [{"properties": {"x": {}}}]}),
        ),
        ("boolean", serde_json::json!(true)),
        (
            "odd",
            serde_json::json!({"type": [1, null], "properties": [], "items": "x"}),
        ),
        (
            "patterns",
            serde_json::json!({"patternProperties": {"^x": {}}, "additionalProperties": false}),
        ),
    ] {
        schemas.insert(tool.into(), schema);
    }
    let yaml_hooks = format!(
        "\n    - name: declares_schemas\n      config: {}\n    - reads_deep_paths\n{}",
        serde_json::to_string(&schemas).expect("json"),
        gate(r#"tool_name in ["refs", "any_of", "boolean", "odd", "patterns"] && args.x.y exists"#)
    );
    // JSON is YAML: the config carries the schemas as they are.
    let result = build(&yaml_hooks).await;
    let text = match &result {
        Ok(_) => String::new(),
        Err(errors) => errors.to_string(),
    };
    // The deep path is ruled out at its fourth step.
    assert!(
        text.contains("`args.a.a.a.b`") && text.contains("no property `b`"),
        "{text}"
    );
    assert_eq!(
        result.as_ref().err().map(|e| e.0.len()),
        Some(1),
        "only the deep path is an error: {text}"
    );
    // The rest, checked alone, are warnings naming why.
    let hooks = format!(
        "\n    - name: declares_schemas\n      config: {}\n{}",
        serde_json::to_string(&schemas).expect("json"),
        gate(r#"tool_name in ["refs", "any_of", "boolean", "odd", "patterns"] && args.x.y exists"#)
    );
    let agent = build(&hooks).await.expect("not checkable is not an error");
    let messages: Vec<String> = agent
        .config_warnings()
        .iter()
        .map(|w| w.message.clone())
        .collect();
    for why in [
        "`$ref`",
        "`anyOf`",
        "allows any value",
        "`patternProperties`",
    ] {
        assert!(
            messages.iter().any(|m| m.contains(why)),
            "{why} missing from {messages:#?}"
        );
    }
    assert_eq!(messages.len(), 5, "{messages:#?}");
}
