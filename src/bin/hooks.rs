//! `hooks`: check an agent's hook config and dry-run tool calls through it.
//!
//! ```text
//! hooks check AGENT_CONFIG [--format json]
//! hooks explain AGENT_CONFIG --tool NAME [--args JSON] [--metadata JSON]
//!       [--user ID] [--org ID] [--read-only-org ID]... [--run-commands] [--format json]
//! ```
//!
//! Exit codes: 0 — the config is valid (`check`) or the call would go ahead
//! (`explain`); 1 — the config is invalid; 2 — bad usage; 3 — the call would
//! be blocked; 4 — it would ask a person for approval; 5 — it would run a
//! command hook whose verdict is unknown without `--run-commands`.

use std::process::ExitCode;

use hooks::std_hooks::offline_resources;
use hooks::{
    HookContext, HookRegistry,
    config::AgentConfig,
    trace::{ExplainOutcome, ExplainVerdict},
};
use serde_json::{Value, json};

const USAGE: &str = "\
usage:
  hooks check AGENT_CONFIG [--format json]
  hooks explain AGENT_CONFIG --tool NAME [--args JSON] [--metadata JSON]
        [--user ID] [--org ID] [--read-only-org ID]... [--run-commands] [--format json]

check    validates an agent config (YAML, JSON or TOML) and prints the run order.
         Every command hook's program must be found and executable (for a
         shell command line, its first word when that is a plain path or name),
         and the script a known interpreter (sh, bash, python3, node...) is
         given must exist. Config files over 1 MiB are refused.
explain  dry-runs one tool call through the pre hooks without running the tool:
         which hooks match, in what order, which would block and why. The
         approval gate shows as \"would ask\" and command hooks as \"would run\"
         unless --run-commands is given.

exit codes: 0 ok / would go ahead, 1 invalid config, 2 bad usage,
            3 would be blocked, 4 would ask for approval,
            5 would run a command whose verdict is unknown (no --run-commands)";

/// Parsed command line.
struct Options {
    command: String,
    config: String,
    tool: Option<String>,
    args: Value,
    metadata: Value,
    user: String,
    org: String,
    read_only_orgs: Vec<String>,
    run_commands: bool,
    json: bool,
}

fn parse(mut argv: impl Iterator<Item = String>) -> Result<Options, String> {
    let command = argv.next().ok_or("missing command: `check` or `explain`")?;
    if command == "--help" || command == "-h" || command == "help" {
        return Err(String::new());
    }
    if command != "check" && command != "explain" {
        return Err(format!(
            "unknown command `{command}`: use `check` or `explain`"
        ));
    }
    let mut options = Options {
        command,
        config: String::new(),
        tool: None,
        args: json!({}),
        metadata: json!({}),
        user: "cli-user".into(),
        org: "cli-org".into(),
        read_only_orgs: Vec::new(),
        run_commands: false,
        json: false,
    };
    let json_arg = |flag: &str, text: Option<String>| -> Result<Value, String> {
        let text = text.ok_or(format!("{flag} needs a value"))?;
        let value: Value =
            serde_json::from_str(&text).map_err(|e| format!("{flag} is not valid JSON: {e}"))?;
        if value.is_object() {
            Ok(value)
        } else {
            Err(format!("{flag} must be a JSON object"))
        }
    };
    while let Some(arg) = argv.next() {
        match arg.as_str() {
            "--tool" => options.tool = Some(argv.next().ok_or("--tool needs a value")?),
            "--args" => options.args = json_arg("--args", argv.next())?,
            "--metadata" => options.metadata = json_arg("--metadata", argv.next())?,
            "--user" => options.user = argv.next().ok_or("--user needs a value")?,
            "--org" => options.org = argv.next().ok_or("--org needs a value")?,
            "--read-only-org" => options
                .read_only_orgs
                .push(argv.next().ok_or("--read-only-org needs a value")?),
            "--run-commands" => options.run_commands = true,
            "--format" => match argv.next().as_deref() {
                Some("json") => options.json = true,
                Some("text") => options.json = false,
                _ => return Err("--format takes `text` or `json`".into()),
            },
            "--help" | "-h" => return Err(String::new()),
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`")),
            path if options.config.is_empty() => options.config = path.to_owned(),
            extra => return Err(format!("unexpected argument `{extra}`")),
        }
    }
    if options.config.is_empty() {
        return Err("missing the agent config file".into());
    }
    if options.command == "explain" && options.tool.is_none() {
        return Err("explain needs --tool NAME".into());
    }
    Ok(options)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1)) {
        Ok(options) => options,
        Err(message) if message.is_empty() => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("hooks: {message}\n\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // A private in-memory database, org modes from the command line, and an
    // approval gate that can reach nobody (it is reported, never run).
    let resources = match offline_resources(options.read_only_orgs.clone()).await {
        Ok(resources) => resources,
        Err(error) => {
            eprintln!("hooks: cannot open an in-memory database: {error}");
            return ExitCode::from(1);
        }
    };
    let built = AgentConfig::load(&options.config).and_then(|config| {
        config
            .build_registry_with_warnings(&resources)
            .map(|(registry, warnings)| (config, registry, warnings))
    });
    let (config, registry, warnings) = match built {
        Ok(built) => built,
        Err(errors) => {
            if options.json {
                let list: Vec<Value> = errors
                    .0
                    .iter()
                    .map(|e| json!({"file": e.file, "entry": e.entry, "message": e.message}))
                    .collect();
                println!("{}", json!({"valid": false, "errors": list}));
            } else {
                eprintln!("{errors}");
                eprintln!(
                    "hooks: {} error(s); the agent would not run",
                    errors.0.len()
                );
            }
            return ExitCode::from(1);
        }
    };
    match options.command.as_str() {
        "check" => check(&config, &registry, &warnings, options.json),
        _ => explain(&config, &registry, &options).await,
    }
}

fn check(
    config: &AgentConfig,
    registry: &HookRegistry,
    warnings: &[hooks::config::ConfigWarning],
    json: bool,
) -> ExitCode {
    if json {
        let hooks: Vec<Value> = registry
            .pre_tool_use()
            .iter()
            .map(|h| {
                (
                    hooks::HookPoint::PreToolUse.as_str(),
                    h.as_ref() as &dyn hooks::Hook,
                )
            })
            .chain(registry.post_tool_use().iter().map(|h| {
                (
                    hooks::HookPoint::PostToolUse.as_str(),
                    h.as_ref() as &dyn hooks::Hook,
                )
            }))
            .chain(registry.session_start_hooks().iter().map(|h| {
                (
                    hooks::HookPoint::SessionStart.as_str(),
                    h.as_ref() as &dyn hooks::Hook,
                )
            }))
            .map(|(point, hook)| {
                // `timeout_ms` as configured; `bound_ms` what the runtime
                // enforces, with `bound_note` saying what it adds (null when
                // the two are the same).
                let bound = hook.timeout();
                let (configured, note) = match hook.timeout_note() {
                    Some(note) if note.configured != bound => (note.configured, Some(note.why)),
                    _ => (bound, None),
                };
                json!({
                    "point": point,
                    "name": hook.name(),
                    "priority": hook.priority(),
                    "when": hook.when_source(),
                    "timeout_ms": u64::try_from(configured.as_millis()).unwrap_or(u64::MAX),
                    "bound_ms": u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
                    "bound_note": note,
                    "on_error": hook.on_error().as_str(),
                })
            })
            .collect();
        let observers: Vec<&str> = registry.observers().iter().map(|o| o.name()).collect();
        println!(
            "{}",
            json!({"valid": true, "agent": config.agent, "hooks": hooks, "observers": observers,
                   "warnings": warnings})
        );
    } else {
        println!("{}: valid; agent `{}`", config.source, config.agent);
        println!("{}", registry.describe());
        // What the build could not check (`args.…` paths no schema decides).
        for warning in warnings {
            println!("{warning}");
        }
    }
    ExitCode::SUCCESS
}

async fn explain(config: &AgentConfig, registry: &HookRegistry, options: &Options) -> ExitCode {
    let tool = options.tool.clone().unwrap_or_default();
    let mut ctx = HookContext::tool_call(&tool, options.args.clone())
        .with_agent(config.agent.clone())
        .with_user(options.user.clone())
        .with_org(options.org.clone())
        .with_conversation("hooks-explain")
        .with_tool_call_id("dry-run");
    if let Some(metadata) = options.metadata.as_object() {
        for (key, value) in metadata {
            ctx = ctx.with_metadata(key.clone(), value.clone());
        }
    }
    let explanation = registry.explain(ctx, options.run_commands).await;
    let code = exit_code(explanation.outcome);
    if options.json {
        // The explanation, with the exit code it leads to beside its outcome.
        let mut value =
            serde_json::to_value(&explanation).unwrap_or_else(|e| json!({"error": e.to_string()}));
        if let Some(object) = value.as_object_mut() {
            object.insert("exit_code".to_owned(), json!(code));
        }
        println!("{value}");
    } else {
        // Everything printed here may come from the model's call (pasted
        // into the command line) or quote it (reasons, failures, rewritten
        // arguments): escaped, so it cannot add a line or reorder one.
        println!(
            "{} through agent `{}` (dry run; the tool does not run):",
            printable(&tool),
            printable(&config.agent)
        );
        for (i, step) in explanation.steps.iter().enumerate() {
            let verdict = match &step.verdict {
                ExplainVerdict::NotMatched => "not matched".to_owned(),
                ExplainVerdict::Allow => "allow".to_owned(),
                ExplainVerdict::Rewrite { args } => format!("allow, rewrites args to {args}"),
                ExplainVerdict::Block { reason } => format!("BLOCK: {reason}"),
                ExplainVerdict::Fail { failure, blocks } => format!(
                    "{}: hook {failure}",
                    if *blocks {
                        "BLOCK (fails closed)"
                    } else {
                        "fails open"
                    }
                ),
                ExplainVerdict::WouldAsk => "would ask for approval".to_owned(),
                ExplainVerdict::WouldRun => {
                    "would run its command (--run-commands to run it)".to_owned()
                }
                ExplainVerdict::NotReached => "not reached".to_owned(),
            };
            println!(
                "  {:>2}. {:<24} p{:<4} {}",
                i + 1,
                printable(&step.name),
                step.priority,
                printable(&verdict)
            );
        }
        match (&explanation.blocked_by, explanation.outcome) {
            (Some(hook), _) => println!("=> blocked by `{}`", printable(hook)),
            (None, ExplainOutcome::WouldRun) => {
                println!("=> depends on a command hook's verdict (--run-commands to run it)")
            }
            (None, ExplainOutcome::WouldAsk) => {
                println!("=> would ask for approval; goes ahead only if approved")
            }
            (None, _) => println!("=> would go ahead"),
        }
    }
    ExitCode::from(code)
}

/// The exit code of `explain` for an outcome.
fn exit_code(outcome: ExplainOutcome) -> u8 {
    match outcome {
        ExplainOutcome::GoAhead => 0,
        ExplainOutcome::Blocked => 3,
        ExplainOutcome::WouldAsk => 4,
        ExplainOutcome::WouldRun => 5,
    }
}

/// `text` for one line of a table: hidden characters (line breaks, bidi
/// overrides, zero-width characters, …) written as `\u{…}` escapes.
fn printable(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if hooks::text::is_hidden(c) {
            out.push_str(&format!("\\u{{{:X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    out
}
