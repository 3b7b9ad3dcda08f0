//! Agent config files: the three shapes in YAML, JSON and TOML, and every
//! kind of error — each naming the file and the entry, all reported at once,
//! and no registry built.

use hooks::prelude::*;
use hooks::{
    config::{AgentConfig, AgentConfigErrors, ConfigFormat, ConfigShape},
    factory::Resources,
};
use serde_json::{Value, json};

#[pre_tool_use(when = tool_name == "config_probe")]
async fn config_probe(_: &HookContext) -> HookResult {
    HookResult::block("probe hook ran")
}

async fn resources() -> Resources {
    hooks::std_hooks::offline_resources(["frozen"])
        .await
        .expect("in-memory database")
}

const YAML: &str = r#"
agent: finance-bot
require_confirmation_for_all: true
hooks:
  class_hooks:
    - readonly_guard
    - config_probe
    - name: connector_rate_limit
      config: { default: { calls: 5, period: 1m } }
  commands:
    - event: PreToolUse
      when: 'tool_name starts_with "shell_"'
      command: ["./hooks/check-shell.sh"]
      timeout: 10s
      on_error: fail_closed
"#;

const JSON: &str = r#"{
  "agent": "finance-bot",
  "require_confirmation_for_all": true,
  "hooks": {
    "class_hooks": ["readonly_guard", "config_probe",
      {"name": "connector_rate_limit", "config": {"default": {"calls": 5, "period": "1m"}}}],
    "commands": [{"event": "PreToolUse", "when": "tool_name starts_with \"shell_\"",
      "command": ["./hooks/check-shell.sh"], "timeout": "10s", "on_error": "fail_closed"}]
  }
}"#;

const TOML: &str = r#"
agent = "finance-bot"
require_confirmation_for_all = true

[hooks]
class_hooks = ["readonly_guard", "config_probe", { name = "connector_rate_limit", config = { default = { calls = 5, period = "1m" } } }]

[[hooks.commands]]
event = "PreToolUse"
when = 'tool_name starts_with "shell_"'
command = ["./hooks/check-shell.sh"]
timeout = "10s"
on_error = "fail_closed"
"#;

#[test]
fn the_three_formats_say_the_same_thing() {
    let parse = |text, format| AgentConfig::parse(text, format, "agent", None).expect("parses");
    let (yaml, json, toml) = (
        parse(YAML, ConfigFormat::Yaml),
        parse(JSON, ConfigFormat::Json),
        parse(TOML, ConfigFormat::Toml),
    );
    assert_eq!(yaml, json);
    assert_eq!(yaml, toml);
    assert_eq!(yaml.shape, ConfigShape::Native);
    assert!(yaml.flag("require_confirmation_for_all"));
    let names: Vec<&str> = yaml.class_hooks.iter().map(|h| h.name.as_str()).collect();
    assert_eq!(
        names,
        ["readonly_guard", "config_probe", "connector_rate_limit"]
    );
    assert_eq!(yaml.commands[0].entry, "hooks.commands[0]");
}

#[tokio::test]
async fn a_config_builds_its_registry_with_the_gate_always_attached() {
    let examples = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let config = AgentConfig::parse(YAML, ConfigFormat::Yaml, "agent.yaml", Some(&examples))
        .expect("parses");
    let registry = config.build_registry(&resources().await).expect("builds");
    let names: Vec<&str> = registry.pre_tool_use().iter().map(|h| h.name()).collect();
    assert_eq!(
        names[..2],
        ["readonly_guard", "approval_gate"],
        "run order by priority: the guard (5), then the gate (10)"
    );
    for name in [
        "readonly_guard",
        "config_probe",
        "connector_rate_limit",
        "command[0]",
    ] {
        assert!(names.contains(&name), "{name} in {names:?}");
    }
}

#[test]
fn the_seed_shape_is_accepted_as_object_or_string() {
    let object = json!({
        "name": "ops-bot",
        "model_config_json": {"require_confirmation_for_all": true,
                              "hooks": {"class_hooks": ["readonly_guard", "audit_log"]}}
    });
    let config = AgentConfig::from_value(&object, "agents.json", None).expect("seed");
    assert_eq!(config.shape, ConfigShape::Seed);
    assert_eq!(config.agent, "ops-bot");
    assert!(config.flag("require_confirmation_for_all"));
    assert_eq!(config.class_hooks.len(), 2);
    let string = json!({
        "id": "ops-bot",
        "model_config_json": "{\"hooks\": {\"class_hooks\": [\"readonly_guard\"]}}"
    });
    let config = AgentConfig::from_value(&string, "agents.json", None).expect("seed string");
    assert_eq!(config.class_hooks[0].name, "readonly_guard");
}

#[test]
fn a_claude_code_settings_block_is_accepted() {
    let settings = json!({
        "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Bash|sql_.*", "hooks": [
                {"type": "command", "command": "./hooks/guard.sh \"$X\"", "timeout": 60}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "cat ./CONTEXT.md"}]}]
        }
    });
    let config = AgentConfig::from_value(&settings, ".claude/settings.json", None).expect("cc");
    assert_eq!(config.shape, ConfigShape::ClaudeSettings);
    assert_eq!(config.commands.len(), 2);
    let pre = config
        .commands
        .iter()
        .find(|c| c.entry == "hooks.PreToolUse[0].hooks[0]")
        .expect("entry");
    assert_eq!(
        pre.spec,
        json!({"event": "PreToolUse", "matcher": "Bash|sql_.*", "shell": true,
               "command": "./hooks/guard.sh \"$X\"", "timeout": 60})
    );
}

fn errors_of(result: Result<AgentConfig, AgentConfigErrors>) -> Vec<String> {
    result
        .expect_err("must be refused")
        .0
        .iter()
        .map(ToString::to_string)
        .collect()
}

#[test]
fn shape_errors_name_the_file_and_entry() {
    let errors = errors_of(AgentConfig::from_value(
        &json!({"agnet": "x", "hooks": {"class_hooks": [{"config": {}}, 5], "commandz": []}}),
        "bot.yaml",
        None,
    ));
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("bot.yaml: agnet: unknown key (did you mean `agent`?)")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("bot.yaml: hooks.class_hooks[0] (?): needs a `name`")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("bot.yaml: hooks.class_hooks[1]: must be")),
        "{errors:?}"
    );
    assert!(
        errors
            .iter()
            .any(|e| e.starts_with("bot.yaml: hooks.commandz: unknown key")),
        "{errors:?}"
    );

    let unsupported = errors_of(AgentConfig::from_value(
        &json!({"hooks": {"Stop": [], "PreToolUse": [{"hooks": [{"type": "prompt", "prompt": "x"}]}]}}),
        "settings.json",
        None,
    ));
    assert!(
        unsupported
            .iter()
            .any(|e| e.contains("hooks.Stop: the Stop event is not supported")),
        "{unsupported:?}"
    );
    assert!(
        unsupported.iter().any(|e| e.contains(
            "hooks.PreToolUse[0].hooks[0]: unknown variant `prompt`, expected `command`"
        )),
        "{unsupported:?}"
    );
    let unknown_field = errors_of(AgentConfig::from_value(
        &json!({"hooks": {"PreToolUse": [{"hooks": [{"type": "command", "command": "x", "async": true}]},
                                         {"matcher": "Bash", "hooks": [], "extra": 1}]}}),
        "settings.json",
        None,
    ));
    for expected in [
        "hooks.PreToolUse[0].hooks[0]: unknown field `async`, expected one of `command`, `timeout`, `if`, `onFailure`, `statusMessage`",
        "hooks.PreToolUse[1]: a {matcher, hooks} group: unknown field `extra`",
    ] {
        assert!(
            unknown_field.iter().any(|e| e.contains(expected)),
            "{expected} in {unknown_field:?}"
        );
    }

    let syntax = errors_of(AgentConfig::parse(
        "agent: [",
        ConfigFormat::Yaml,
        "broken.yaml",
        None,
    ));
    assert!(
        syntax[0].starts_with("broken.yaml: syntax error"),
        "{syntax:?}"
    );
    let format = errors_of(AgentConfig::load("agent.ini"));
    assert!(
        format[0].contains("name the file .yaml, .yml, .json or .toml"),
        "{format:?}"
    );
}

#[tokio::test]
async fn build_errors_are_all_reported_with_file_and_entry() {
    let yaml = r#"
agent: broken-bot
hooks:
  class_hooks:
    - readonly_gaurd
    - name: approval_gate
      config: { when: 'args.amount >' }
    - name: connector_rate_limit
      config: { defualt: {} }
    - name: config_probe
      config: { strict: true }
  commands:
    - event: PreToolUse
      command: []
    - event: PreToolUse
      command: "rm -rf /tmp/x"
    - event: PreToolUse
      when: 'tool_nme == "x"'
      command: ["./x.sh"]
"#;
    let config =
        AgentConfig::parse(yaml, ConfigFormat::Yaml, "broken.yaml", None).expect("shape is fine");
    let errors: Vec<String> = config
        .build_registry(&resources().await)
        .expect_err("nothing builds")
        .0
        .iter()
        .map(ToString::to_string)
        .collect();
    let has = |needle: &str| errors.iter().any(|e| e.contains(needle));
    assert!(
        has(
            "broken.yaml: hooks.class_hooks[0] (readonly_gaurd): unknown hook \"readonly_gaurd\" (did you mean \"readonly_guard\"?)"
        ),
        "{errors:#?}"
    );
    assert!(
        has(
            "broken.yaml: hooks.class_hooks[1] (approval_gate): invalid config for hook \"approval_gate\": `when`"
        ),
        "{errors:#?}"
    );
    assert!(
        has("line 1, column"),
        "a bad `when` carries line and column: {errors:#?}"
    );
    assert!(
        has(
            "hooks.class_hooks[2] (connector_rate_limit): invalid config for hook \"connector_rate_limit\": unknown field `defualt`"
        ),
        "{errors:#?}"
    );
    assert!(
        has(
            "hooks.class_hooks[3] (config_probe): hook \"config_probe\" is declared with an attribute and takes no config"
        ),
        "{errors:#?}"
    );
    assert!(has("hooks.commands[0]:"), "an empty command: {errors:#?}");
    assert!(
        has("hooks.commands[1]:"),
        "a string command without shell: {errors:#?}"
    );
    assert!(
        has("hooks.commands[2]:"),
        "a bad when in a command: {errors:#?}"
    );
    assert_eq!(errors.len(), 7, "{errors:#?}");

    let missing = AgentConfig::parse(
        "hooks:\n  commands:\n    - {event: PreToolUse, command: [\"./no/such/script.sh\"]}\n",
        ConfigFormat::Yaml,
        "missing.yaml",
        Some(std::path::Path::new("/tmp")),
    )
    .expect("parses")
    .build_registry(&resources().await)
    .expect_err("a command that does not exist is an error");
    assert!(
        missing
            .to_string()
            .contains("the command `/tmp/./no/such/script.sh` does not exist"),
        "{missing}"
    );
}

/// Without approval machinery an agent still builds, with the gate
/// attached: a call that needs approval is blocked (nobody could be asked),
/// with what to configure; other calls run.
#[tokio::test]
async fn without_the_approval_machinery_the_agent_builds_and_gated_calls_are_blocked() {
    let config = AgentConfig::parse("agent: lonely", ConfigFormat::Yaml, "lonely.yaml", None)
        .expect("parses");
    let registry = config
        .build_registry(&Resources::new())
        .unwrap_or_else(|errors| panic!("builds without approvals: {errors}"));
    assert!(registry.describe().contains("approval_gate"));
    let flagged = HookContext::tool_call("oa__pay", json!({}))
        .with_metadata("requires_confirmation", json!(true));
    let report = registry
        .run_tool_call(flagged, async |_: &Value| Ok::<_, String>(json!("paid")))
        .await;
    assert!(!report.tool_ran);
    assert!(
        report.observation.to_string().contains(
            "this call needs approval, and no approval channel is configured: add an \
             `approval_gate` entry"
        ),
        "{}",
        report.observation
    );
    let plain = HookContext::tool_call("crm__get", json!({}));
    let report = registry
        .run_tool_call(plain, async |_: &Value| Ok::<_, String>(json!("read")))
        .await;
    assert!(report.tool_ran, "{}", report.observation);
}

#[tokio::test]
async fn the_gate_cannot_be_weakened_by_config() {
    let twice = "agent: x\nhooks:\n  class_hooks:\n    - {name: approval_gate, config: {when: 'tool_name == \"a\"'}}\n    - {name: approval_gate, config: {when: 'tool_name == \"b\"'}}\n";
    let errors = AgentConfig::parse(twice, ConfigFormat::Yaml, "twice.yaml", None)
        .expect("parses")
        .build_registry(&resources().await)
        .expect_err("two gates");
    assert!(
        errors.to_string().contains(
            "twice.yaml: hooks.class_hooks[1] (approval_gate): \"approval_gate\" is listed twice"
        ),
        "{errors}"
    );

    let stringly = "agent: x\nhooks:\n  class_hooks:\n    - {name: approval_gate, config: {require_confirmation_for_all: \"true\"}}\n";
    let errors = AgentConfig::parse(stringly, ConfigFormat::Yaml, "s.yaml", None)
        .expect("parses")
        .build_registry(&resources().await)
        .expect_err("a string is not a flag");
    assert!(
        errors
            .to_string()
            .contains("invalid type: string \"true\", expected a boolean"),
        "{errors}"
    );

    let seed = json!({"require_confirmation_for_all": true, "hooks": {},
                      "model_config_json": {"require_confirmation_for_all": false}});
    let errors = AgentConfig::from_value(&seed, "seed.json", None).expect_err("stray hooks");
    assert!(
        errors
            .to_string()
            .contains("seed.json: hooks: a seed-shaped config"),
        "{errors}"
    );
    let seed = json!({"require_confirmation_for_all": true, "model_config_json": {"require_confirmation_for_all": false}});
    assert!(
        AgentConfig::from_value(&seed, "seed.json", None)
            .expect("seed")
            .flag("require_confirmation_for_all"),
        "either place asking for confirmation is enough"
    );
    let claude = json!({"require_confirmation_for_all": true, "hooks": {"PreToolUse": []}});
    assert!(
        AgentConfig::from_value(&claude, "settings.json", None)
            .expect("cc")
            .flag("require_confirmation_for_all")
    );
}

// ---- commands that cannot run, files that cannot be parsed quickly (issue 11) ----

// ---- agent flags: declared by the crate whose hook reads them ----

// A flag whose hook is nowhere in this program, as a crate declaring a flag
// for a hook it failed to link would leave it.
hooks::agent_flag!(
    "require_flag_test_quorum",
    read_by = "flag_test_quorum",
    "a test flag whose hook is not linked"
);

#[tokio::test]
async fn a_guard_the_config_asks_for_and_no_hook_reads_stops_the_agent() {
    // Undeclared: a `require_…` key set to true is refused in every shape,
    // never ignored as an unknown model setting.
    let native = AgentConfig::parse(
        "agent: x\nrequire_two_people: true\n",
        ConfigFormat::Yaml,
        "agent.yaml",
        None,
    );
    let seed = AgentConfig::from_value(
        &json!({"agent": "x", "model_config_json": {"require_two_people": true, "temperature": 0.2}}),
        "seed.json",
        None,
    );
    for errors in [errors_of(native), errors_of(seed)] {
        let text = errors.join("\n");
        assert!(text.contains("require_two_people"), "{text}");
        assert!(
            text.contains("asks for a guard that no hook in this program declares"),
            "{text}"
        );
        assert!(
            text.contains("require_confirmation_for_all"),
            "the declared flags are listed: {text}"
        );
    }
    // Declared, but its hook is not linked: the registry is not built.
    let config = AgentConfig::parse(
        "agent: x\nrequire_flag_test_quorum: true\n",
        ConfigFormat::Yaml,
        "agent.yaml",
        None,
    )
    .expect("a declared flag parses");
    assert!(config.flag("require_flag_test_quorum"));
    let errors = config
        .build_registry(&resources().await)
        .expect_err("no hook reads the flag")
        .to_string();
    assert!(
        errors.contains(
            "require_flag_test_quorum: is set, but `flag_test_quorum`, the hook that reads it"
        ),
        "{errors}"
    );
    // A declared flag must be a boolean; an unset one costs nothing.
    let errors = errors_of(AgentConfig::parse(
        "agent: x\nrequire_confirmation_for_all: \"yes\"\n",
        ConfigFormat::Yaml,
        "agent.yaml",
        None,
    ));
    assert!(
        errors.join("\n").contains("must be true or false"),
        "{errors:?}"
    );
    let relaxed = AgentConfig::parse(
        "agent: x\nrequire_flag_test_quorum: false\n",
        ConfigFormat::Yaml,
        "agent.yaml",
        None,
    )
    .expect("parses");
    assert!(relaxed.build_registry(&resources().await).is_ok());
}

/// A directory holding `hooks/ok.sh` (executable) and `hooks/plain.sh` (not).
fn hook_dir() -> tempfile::TempDir {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().expect("dir");
    std::fs::create_dir(dir.path().join("hooks")).expect("hooks dir");
    for (name, mode) in [("ok.sh", 0o755), ("plain.sh", 0o644)] {
        let path = dir.path().join("hooks").join(name);
        std::fs::write(&path, "#!/bin/sh\nexit 0\n").expect("script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).expect("mode");
    }
    dir
}

#[tokio::test]
async fn a_command_that_cannot_be_found_or_run_fails_the_config() {
    let dir = hook_dir();
    let yaml = r#"
hooks:
  commands:
    - {event: PreToolUse, command: ["./hooks/ok.sh"]}
    - {event: PreToolUse, command: ["no-such-hook-program-4711", "--check"]}
    - {event: PreToolUse, command: ["./hooks/missing.sh"]}
    - {event: PreToolUse, command: ["./hooks/plain.sh"]}
    - {event: PreToolUse, command: "./hooks/missing.sh --strict | cat", shell: true}
    - {event: PreToolUse, command: "no-such-hook-program-4711 | cat", shell: true}
    - {event: PreToolUse, command: "./hooks/ok.sh \"$1\" || exit 2", shell: true}
    - {event: PreToolUse, command: ["sh", "./hooks/plain.sh"]}
"#;
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, yaml).expect("config");
    let errors = errors_of(
        AgentConfig::load(&path)
            .expect("the file parses")
            .build_registry(&resources().await)
            .map(|_| unreachable!("commands that cannot run must fail the config")),
    );
    let file = path.display().to_string();
    let at = |index: usize, parts: &[&str]| {
        let prefix = format!("{file}: hooks.commands[{index}]: ");
        let found = errors.iter().find(|e| e.starts_with(&prefix));
        let error = found.unwrap_or_else(|| panic!("no error for entry {index}: {errors:#?}"));
        for part in parts {
            assert!(error.contains(part), "{part:?} missing from {error}");
        }
    };
    at(
        1,
        &["`no-such-hook-program-4711` is not on PATH", "install it"],
    );
    at(2, &["/hooks/missing.sh` does not exist", "fix the path"]);
    at(3, &["plain.sh` is not executable", "chmod +x"]);
    at(
        4,
        &[
            "the script `./hooks/missing.sh` (",
            "does not exist",
            "cannot be checked whole",
        ],
    );
    at(5, &["`no-such-hook-program-4711` is not on PATH"]);
    assert_eq!(errors.len(), 5, "entries 0, 6 and 7 can run: {errors:#?}");
}

#[tokio::test]
async fn a_claude_settings_command_under_the_project_dir_is_checked() {
    let dir = hook_dir();
    std::fs::create_dir(dir.path().join(".claude")).expect(".claude");
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/hooks/ok.sh"},
        {"type": "command", "command": "\"$CLAUDE_PROJECT_DIR\"/.claude/hooks/gone.sh"}]}]}});
    let path = dir.path().join(".claude").join("settings.json");
    std::fs::write(&path, settings.to_string()).expect("settings");
    let errors = errors_of(
        AgentConfig::load(&path)
            .expect("the file parses")
            .build_registry(&resources().await)
            .map(|_| unreachable!("a missing script must fail the config")),
    );
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("hooks.PreToolUse[0].hooks[1]")
            && errors[0].contains(".claude/hooks/gone.sh` does not exist"),
        "{errors:#?}"
    );
}

#[test]
fn a_config_over_1_mib_is_refused_before_parsing() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("huge.yaml");
    // Valid YAML all through, so only the size can refuse it.
    let mut text = String::from("agent: huge\n");
    while text.len() <= 1 << 20 {
        text.push_str("# padding padding padding padding padding padding padding\n");
    }
    std::fs::write(&path, &text).expect("config");
    let errors = errors_of(AgentConfig::load(&path));
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].contains("over the 1048576-byte (1 MiB) limit")
            && errors[0].contains("not parsed"),
        "{errors:#?}"
    );
    let inline = errors_of(AgentConfig::parse(
        &text,
        ConfigFormat::Yaml,
        "inline",
        None,
    ));
    assert!(inline[0].contains("1 MiB"), "{inline:#?}");
    // Just under the limit is read.
    text.truncate(1 << 20);
    let cut = text.rfind('\n').expect("lines") + 1;
    text.truncate(cut);
    AgentConfig::parse(&text, ConfigFormat::Yaml, "inline", None).expect("under the limit");
}

/// Before the limits, the YAML file below took minutes to parse: a test that
/// hangs here is the failure.
#[test]
fn deeply_nested_configs_are_refused_promptly() {
    let depth = ((1 << 20) - 100) / 4;
    let yaml = format!("agent: {}", "{a: ".repeat(depth));
    assert!(yaml.len() < 1 << 20);
    let errors = errors_of(AgentConfig::parse(
        &yaml,
        ConfigFormat::Yaml,
        "deep.yaml",
        None,
    ));
    assert!(
        errors[0].contains("nested more than 64 levels"),
        "{errors:#?}"
    );
    let closed = format!("agent: {}1{}", "[".repeat(depth / 2), "]".repeat(depth / 2));
    let errors = errors_of(AgentConfig::parse(
        &closed,
        ConfigFormat::Yaml,
        "deep.yaml",
        None,
    ));
    assert!(
        errors[0].contains("nested more than 64 levels"),
        "{errors:#?}"
    );
    // Closing brackets in quotes cannot hide the depth: the opener count stops it.
    let hidden = format!("agent: {}", "{b: \"}\", a: ".repeat(60_000));
    let errors = errors_of(AgentConfig::parse(
        &hidden,
        ConfigFormat::Yaml,
        "deep.yaml",
        None,
    ));
    assert!(errors[0].contains("more than 5000"), "{errors:#?}");
    // JSON and TOML parsers stop at their own depth limits.
    let json = format!("{}1{}", "{\"a\": ".repeat(depth / 6), "}".repeat(depth / 6));
    assert!(AgentConfig::parse(&json, ConfigFormat::Json, "deep.json", None).is_err());
    let toml = format!(
        "a = {}1{}",
        "{a = ".repeat(depth / 5),
        "}".repeat(depth / 5)
    );
    assert!(AgentConfig::parse(&toml, ConfigFormat::Toml, "deep.toml", None).is_err());
}

#[tokio::test]
async fn an_interpreter_whose_script_is_missing_fails_the_config() {
    let dir = hook_dir();
    let yaml = r#"
hooks:
  commands:
    - {event: PreToolUse, command: ["bash", "missing.sh"]}
    - {event: PreToolUse, command: "sh ./hooks/missing.sh --strict", shell: true}
    - {event: PreToolUse, command: "bash $CLAUDE_PROJECT_DIR/hooks/gone.sh", shell: true}
    - {event: PreToolUse, command: ["/usr/bin/env", "sh", "-eu", "hooks/gone.sh"]}
    - {event: PreToolUse, command: ["sh", "./hooks/plain.sh"]}
    - {event: PreToolUse, command: ["bash", "-e", "hooks/plain.sh", "arg.sh"]}
    - {event: PreToolUse, command: ["sh", "-c", "exit 0", "missing.sh"]}
    - {event: PreToolUse, command: "bash -o pipefail $CLAUDE_PROJECT_DIR/hooks/ok.sh", shell: true}
    - {event: PreToolUse, command: "sh -c 'exit 0'", shell: true}
"#;
    let path = dir.path().join("agent.yaml");
    std::fs::write(&path, yaml).expect("config");
    let errors = errors_of(
        AgentConfig::load(&path)
            .expect("the file parses")
            .build_registry(&resources().await)
            .map(|_| unreachable!("scripts that do not exist must fail the config")),
    );
    let file = path.display().to_string();
    let at = |index: usize, parts: &[&str]| {
        let prefix = format!("{file}: hooks.commands[{index}]: ");
        let found = errors.iter().find(|e| e.starts_with(&prefix));
        let error = found.unwrap_or_else(|| panic!("no error for entry {index}: {errors:#?}"));
        for part in parts {
            assert!(error.contains(part), "{part:?} missing from {error}");
        }
    };
    at(
        0,
        &[
            "the script `missing.sh` (",
            "that `bash` runs",
            "does not exist",
        ],
    );
    at(1, &["the script `./hooks/missing.sh` (", "that `sh` runs"]);
    at(2, &["/hooks/gone.sh` that `bash` runs does not exist"]);
    at(3, &["the script `hooks/gone.sh` (", "that `sh` runs"]);
    assert_eq!(errors.len(), 4, "entries 4 to 8 can run: {errors:#?}");
}
