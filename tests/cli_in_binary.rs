//! `hooks::cli` inside a user's own binary: `check`, `explain` and `test`
//! see the attribute hooks and factories that binary links in (here, this
//! test's), which the stand-alone `hooks` binary cannot.

use std::process::Command;

use hooks::HookOutcome;
use hooks::cli::Cli;
use hooks::factory::{Built, FactoryInput, ResourceKey};
use hooks::prelude::*;
use hooks::registry::RegisteredHook;
use serde_json::{Value, json};

/// A guard declared with the attribute, as a user would.
#[pre_tool_use(priority = 5, when = tool_name == "shell_exec" && args.command contains "rm -rf")]
async fn no_rm_rf(_ctx: &HookContext) -> HookResult {
    HookResult::block("`rm -rf` is not allowed here")
}

/// Withholds any result that mentions a secret.
#[post_tool_use(when = tool_name == "read_file")]
async fn no_secrets(ctx: &HookContext) -> HookResult {
    match ctx.result() {
        Some(result) if result.to_string().contains("BEGIN PRIVATE KEY") => {
            HookResult::block("the result holds a private key")
        }
        _ => HookResult::allow(),
    }
}

/// Which paths the `jail` factory keeps calls inside: a resource only this
/// binary provides.
const JAIL_ROOT: ResourceKey<String> = ResourceKey::new("jail root");

/// Rewrites a relative `path` argument to sit under the jail root.
struct Jail(String);

impl Hook for Jail {
    fn name(&self) -> &str {
        "jail"
    }
    fn should_trigger(&self, ctx: &HookContext) -> bool {
        ctx.tool_args.get("path").is_some_and(Value::is_string)
    }
    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        let path = ctx.tool_args["path"].as_str().unwrap_or_default();
        let mut args = ctx.tool_args.clone();
        args["path"] = json!(format!("{}/{}", self.0, path.trim_start_matches('/')));
        HookResult::allow().with_args(args).into()
    }
}
impl PreToolUseHook for Jail {}

fn build_jail(input: &FactoryInput<'_>) -> Result<Built, String> {
    let root = input
        .resources
        .get(JAIL_ROOT)
        .ok_or("the jail needs its root directory (JAIL_ROOT)")?;
    Ok(RegisteredHook::pre(Jail(root.clone())).into())
}

hooks::hook_factory!("jail", "keeps file paths under a root", build_jail);

const AGENT: &str = "\
agent: file-bot
hooks:
  class_hooks: [no_rm_rf, no_secrets, jail]
";

const CASES: &str = r#"
cases:
  - name: rm -rf is refused by the user's own guard
    tool: shell_exec
    args: { command: "rm -rf /" }
    expect: { verdict: blocked, by: no_rm_rf, observation_contains: "not allowed" }
  - name: paths are jailed
    tool: read_file
    args: { path: /etc/hosts }
    result: "127.0.0.1 localhost"
    expect: { verdict: allowed, args: { path: /srv/jail/etc/hosts }, output: "127.0.0.1 localhost" }
  - name: a key in a result is withheld
    tool: read_file
    args: { path: id_rsa }
    result: "-----BEGIN PRIVATE KEY-----"
    expect: { verdict: withheld, by: no_secrets, reason_contains: private key }
"#;

/// Writes the agent and cases files into a fresh directory.
fn files() -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().expect("dir");
    let agent = dir.path().join("agent.yaml");
    let cases = dir.path().join("agent.cases.yaml");
    std::fs::write(&agent, AGENT).expect("agent");
    std::fs::write(&cases, CASES).expect("cases");
    let path = |p: std::path::PathBuf| p.to_str().expect("utf-8").to_owned();
    (dir, path(agent), path(cases))
}

/// Runs this binary's CLI with the jail's root provided.
async fn cli(args: &[&str]) -> (u8, String, String) {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = Cli::new()
        .with_resources(|resources| resources.insert(JAIL_ROOT, "/srv/jail".to_owned()))
        .run_with(args.iter().map(|a| (*a).to_owned()), &mut out, &mut err)
        .await;
    let text = |bytes: Vec<u8>| String::from_utf8(bytes).expect("utf-8");
    (code, text(out), text(err))
}

#[tokio::test]
async fn check_sees_the_binarys_own_hooks_and_factories() {
    let (_dir, agent, _) = files();
    let (code, out, err) = cli(&["check", &agent]).await;
    assert_eq!(code, 0, "{err}");
    for name in ["no_rm_rf", "no_secrets", "jail"] {
        assert!(out.contains(name), "{name} missing from\n{out}");
    }
}

#[tokio::test]
async fn the_standalone_binary_cannot_see_them() {
    let (_dir, agent, _) = files();
    let out = Command::new(env!("CARGO_BIN_EXE_hooks"))
        .args(["check", &agent])
        .output()
        .expect("the hooks binary runs");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("unknown hook \"no_rm_rf\""), "{err}");
}

#[tokio::test]
async fn a_factory_without_its_resource_is_a_config_error() {
    let (_dir, agent, _) = files();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = Cli::new()
        .run_with(["check".to_owned(), agent], &mut out, &mut err)
        .await;
    assert_eq!(code, 1);
    let err = String::from_utf8(err).expect("utf-8");
    assert!(err.contains("the jail needs its root directory"), "{err}");
}

#[tokio::test]
async fn explain_runs_the_binarys_guard() {
    let (_dir, agent, _) = files();
    let (code, out, _) = cli(&[
        "explain",
        &agent,
        "--tool",
        "shell_exec",
        "--args",
        r#"{"command": "rm -rf /"}"#,
    ])
    .await;
    assert_eq!(code, 3, "{out}");
    assert!(out.contains("=> blocked by `no_rm_rf`"), "{out}");
}

#[tokio::test]
async fn test_runs_a_table_through_the_binarys_hooks() {
    let (_dir, agent, cases) = files();
    let (code, out, err) = cli(&["test", &agent, &cases]).await;
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("3 case(s): 3 passed, 0 failed"), "{out}");
    assert!(out.contains("withheld by `no_secrets`"), "{out}");
}

#[tokio::test]
async fn test_as_json_carries_each_case_and_what_it_got() {
    let (_dir, agent, cases) = files();
    let (code, out, _) = cli(&["test", &agent, &cases, "--format", "json"]).await;
    assert_eq!(code, 0);
    let report: Value = serde_json::from_str(&out).expect("one JSON object");
    assert_eq!(report["passed"], 3);
    assert_eq!(report["failed"], 0);
    let jailed = &report["cases"][1];
    assert_eq!(jailed["actual"]["verdict"], "allowed");
    assert_eq!(jailed["actual"]["args"]["path"], "/srv/jail/etc/hosts");
    let withheld = &report["cases"][2]["actual"];
    assert_eq!(withheld["verdict"], "withheld");
    assert_eq!(withheld["by"], "no_secrets");
    assert_eq!(
        withheld["observation"]["withheld"]["reason"],
        "the result holds a private key"
    );
}
