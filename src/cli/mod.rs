//! The `hooks` command line as a library: `check`, `explain` and `test`
//! with whatever hooks and factories the calling binary links in.
//!
//! The `hooks` binary that ships with this crate is [`run`] with the
//! standard hooks only, so it cannot check a config that names your own
//! attribute hooks or factories. Give your crate its own binary instead —
//! `src/bin/hooks.rs`, or a `[[bin]]` — whose `main` is this function; the
//! hooks your crate declares are then linked in and found by name:
//!
//! ```no_run
//! use hooks::prelude::*;
//!
//! #[pre_tool_use(when = tool_name == "shell_exec" && args.command contains "rm -rf")]
//! async fn no_rm_rf(_ctx: &HookContext) -> HookResult {
//!     HookResult::block("`rm -rf` is not allowed")
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     hooks::cli::run()
//! }
//! ```
//!
//! (In a `[[bin]]` of a library crate, refer to the library so the linker
//! keeps its hooks: `use my_agent as _;`.) Factories that need resources
//! of your own get them through [`Cli::with_resources`].
//!
//! ```text
//! hooks check AGENT_CONFIG [--format json]
//! hooks explain AGENT_CONFIG --tool NAME [--args JSON] [--metadata JSON]
//!       [--user ID] [--org ID] [--read-only-org ID]... [--run-commands] [--format json]
//! hooks test AGENT_CONFIG CASES [--read-only-org ID]... [--run-commands] [--format json]
//! hooks serve AGENT_CONFIG [--listen ADDR:PORT] [--database URL] [--org ID] [--user ID]
//!       [--user-header NAME] [--read-only-org ID]... [--answer-allow]
//! hooks hook-client --url URL [--timeout SECONDS]
//! hooks mcp-proxy --config AGENT_CONFIG [--name NAME] [--listen ADDR:PORT] [--database URL]
//!       [--org ID] [--user ID] [--read-only-org ID]...
//!       [--upstream-url URL | -- UPSTREAM_COMMAND...]
//! ```
//!
//! Exit codes: 0 — the config is valid (`check`), the call would go ahead
//! (`explain`), every case passed (`test`); 1 — the config or the cases
//! file is invalid; 2 — bad usage; 3 — the call would be blocked; 4 — it
//! would ask a person for approval; 5 — it would run a command hook whose
//! verdict is unknown without `--run-commands`; 6 — a case failed.

mod check;
mod connectors;
mod escape;
mod explain;
#[cfg(feature = "mcp")]
mod mcp_proxy;
mod options;
pub mod policy_test;
#[cfg(feature = "serve")]
mod serve;

use std::io::{self, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::config::{AgentConfig, AgentConfigError, AgentConfigErrors, ConfigWarning};
use crate::factory::Resources;
use options::{Command, Usage};
use policy_test::PolicyCases;

/// The usage text `hooks --help` prints.
pub const USAGE: &str = "\
usage:
  hooks check AGENT_CONFIG [--format json]
  hooks explain AGENT_CONFIG --tool NAME [--args JSON] [--metadata JSON]
        [--user ID] [--org ID] [--read-only-org ID]... [--run-commands] [--format json]
  hooks test AGENT_CONFIG CASES [--read-only-org ID]... [--run-commands] [--format json]
  hooks serve AGENT_CONFIG [--listen ADDR:PORT] [--database URL] [--org ID] [--user ID]
        [--user-header NAME] [--read-only-org ID]... [--answer-allow]
  hooks hook-client --url URL [--timeout SECONDS]
  hooks mcp-proxy --config AGENT_CONFIG [--name NAME] [--listen ADDR:PORT] [--database URL]
        [--org ID] [--user ID] [--read-only-org ID]...
        [--upstream-url URL | -- UPSTREAM_COMMAND...]

check    validates an agent config (YAML, JSON or TOML) and prints the run order.
         Every command hook's program must be found and executable (for a
         shell command line, its first word when that is a plain path or name),
         and the script a known interpreter (sh, bash, python3, node...) is
         given must exist. Config files over 1 MiB are refused.
explain  dry-runs one tool call through the pre hooks without running the tool:
         which hooks match, in what order, which would block and why. The
         approval gate shows as \"would ask\" and command hooks as \"would run\"
         unless --run-commands is given.
test     runs a table of cases (calls and the verdict each must get: allowed,
         blocked, asks, withheld, unknown) as dry runs and prints pass/fail.
         A case may script the approver's answer and the tool's result.
serve    answers Claude Code style hook requests (POST /hook: PreToolUse,
         PostToolUse, PostToolUseFailure, SessionStart) with the agent's hooks,
         on 127.0.0.1:8377 unless --listen says otherwise.
         The bearer token comes from HOOKS_SERVE_TOKEN (required unless the
         address is loopback); --database keeps the audit log and limits in
         SQLite or PostgreSQL (default: in memory). Approvals need a channel:
         serve from your own binary (hooks::serve) to configure one.
hook-client  a command hook that forwards its stdin to a hook server
         (token from HOOKS_SERVE_TOKEN) and prints the answer; exits 2 when
         the server denies or cannot be reached (fail closed).
mcp-proxy  serves MCP on stdin/stdout (or streamable HTTP at --listen ADDR,
         path /mcp, token from HOOKS_MCP_PROXY_TOKEN, required unless the
         address is loopback) in front of the MCP server it starts
         (the command after `--`, or `mcp_proxy.command` in the config) or
         reaches over streamable HTTP (--upstream-url URL, or `mcp_proxy.url`,
         its bearer token from the variable `mcp_proxy.bearer_token_env` names): every
         tools/call runs through the agent's hooks; --name is the server's
         name (every call's connector). The upstream gets a scrubbed
         environment (PATH, HOME, USER, LANG, LC_ALL, LC_CTYPE, TZ, TMPDIR,
         plus `mcp_proxy.pass_env` and `mcp_proxy.env`). Exits 1 when the
         config is wrong or the upstream does not start, answer or speak MCP.

The agent config may also be given as --config PATH.

exit codes: 0 ok / would go ahead / every case passed, 1 invalid config or
            cases file, 2 bad usage, 3 would be blocked, 4 would ask for
            approval, 5 would run a command whose verdict is unknown
            (no --run-commands), 6 a case failed";

/// A resource step: adds what the caller's factories need.
pub(crate) type AddResources = Box<dyn FnOnce(&mut Resources)>;

/// The command line, with resources of the caller's own.
///
/// ```no_run
/// use hooks::factory::ResourceKey;
///
/// const PRICE_LIST: ResourceKey<Vec<String>> = ResourceKey::new("price_list");
///
/// fn main() -> std::process::ExitCode {
///     hooks::cli::Cli::new()
///         .with_resources(|resources| resources.insert(PRICE_LIST, vec!["basic".into()]))
///         .run()
/// }
/// ```
#[derive(Default)]
pub struct Cli {
    add: Vec<AddResources>,
}

impl Cli {
    /// The command line with the standard hooks' offline resources only.
    pub fn new() -> Self {
        Cli::default()
    }

    /// Adds resources for the caller's factories, after the standard ones
    /// (a private in-memory database, org modes from `--read-only-org`, an
    /// approval gate that can reach nobody) are in place.
    pub fn with_resources(mut self, add: impl FnOnce(&mut Resources) + 'static) -> Self {
        self.add.push(Box::new(add));
        self
    }

    /// Runs the command line in `std::env::args()` on its own Tokio
    /// runtime, printing to stdout and stderr. Call it from a plain `main`,
    /// not from inside a Tokio runtime.
    pub fn run(self) -> ExitCode {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => {
                eprintln!("hooks: cannot start a Tokio runtime: {error}");
                return ExitCode::from(1);
            }
        };
        let args = std::env::args().skip(1);
        let code = runtime.block_on(self.run_with(args, &mut io::stdout(), &mut io::stderr()));
        ExitCode::from(code)
    }

    /// Runs the command line `args` (without the program name), writing
    /// what it prints to `out` and `err`; returns the exit code.
    pub async fn run_with(
        self,
        args: impl IntoIterator<Item = String>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> u8 {
        // An error here is the output closed (`hooks check … | head`):
        // nothing more can be said.
        self.dispatch(args, out, err).await.unwrap_or(1)
    }

    async fn dispatch(
        self,
        args: impl IntoIterator<Item = String>,
        out: &mut dyn Write,
        err: &mut dyn Write,
    ) -> io::Result<u8> {
        let mut args = args.into_iter().peekable();
        #[cfg(feature = "serve")]
        if args.peek().map(String::as_str) == Some("hook-client") {
            args.next();
            return match options::parse_hook_client(args) {
                Ok(client) => serve::hook_client(client, out, err).await,
                Err(Usage::Help) => {
                    writeln!(out, "{USAGE}")?;
                    Ok(0)
                }
                Err(Usage::Error(message)) => {
                    // Exit 2 blocks the call in a client that runs this as a hook.
                    writeln!(err, "hooks hook-client: {message}\n\n{USAGE}")?;
                    Ok(2)
                }
            };
        }
        #[cfg(feature = "mcp")]
        if args.peek().map(String::as_str) == Some("mcp-proxy") {
            args.next();
            return match mcp_proxy::parse(args) {
                Ok(options) => mcp_proxy::run(options, self.add, err).await,
                Err(Usage::Help) => {
                    writeln!(out, "{USAGE}")?;
                    Ok(0)
                }
                Err(Usage::Error(message)) => {
                    writeln!(err, "hooks mcp-proxy: {message}\n\n{USAGE}")?;
                    Ok(2)
                }
            };
        }
        let options = match options::parse(args) {
            Ok(options) => options,
            Err(Usage::Help) => {
                writeln!(out, "{USAGE}")?;
                return Ok(0);
            }
            Err(Usage::Error(message)) => {
                writeln!(err, "hooks: {message}\n\n{USAGE}")?;
                return Ok(2);
            }
        };
        // The cases file first: its org modes go into the resources.
        let mut read_only = options.read_only_orgs.clone();
        let cases = match &options.command {
            Command::Test { cases } => match PolicyCases::load(cases) {
                Ok(cases) => {
                    read_only.extend(cases.read_only_orgs.iter().cloned());
                    Some(cases)
                }
                Err(error) => {
                    if options.json {
                        let value = json!({"valid": false, "errors": error.problems, "file": error.source_name});
                        writeln!(out, "{value}")?;
                    } else {
                        writeln!(err, "{error}")?;
                        writeln!(
                            err,
                            "hooks: the cases file has {} problem(s); no case ran",
                            error.problems.len()
                        )?;
                    }
                    return Ok(1);
                }
            },
            _ => None,
        };
        #[cfg(feature = "serve")]
        if let Command::Serve(serve) = options.command {
            return serve::serve(
                &options.config,
                serve,
                options.read_only_orgs,
                self.add,
                out,
                err,
            )
            .await;
        }
        // A private in-memory database, org modes from the command line,
        // and an approval gate that can reach nobody (it is reported, never
        // run), then the caller's own resources.
        let mut resources = match crate::std_hooks::offline_resources(read_only).await {
            Ok(resources) => resources,
            Err(error) => {
                writeln!(err, "hooks: cannot open an in-memory database: {error}")?;
                return Ok(1);
            }
        };
        for add in self.add {
            add(&mut resources);
        }
        let (loaded, server) = load_agent(&options.config);
        let built = loaded.and_then(|config| {
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
                    writeln!(out, "{}", json!({"valid": false, "errors": list}))?;
                } else {
                    writeln!(err, "{errors}")?;
                    writeln!(
                        err,
                        "hooks: {} error(s); the agent would not run",
                        errors.0.len()
                    )?;
                }
                return Ok(1);
            }
        };
        match (options.command, cases) {
            (Command::Check, _) => {
                let mut warnings = warnings;
                let server = server.as_deref();
                warnings.extend(
                    connectors::never_matching(&registry, server)
                        .into_iter()
                        .map(|message| ConfigWarning {
                            file: config.source.clone(),
                            entry: None,
                            message,
                        }),
                );
                check::check(&config, &registry, &warnings, options.json, out)?;
                Ok(0)
            }
            (Command::Explain(call), _) => {
                explain::explain(
                    &config,
                    &registry,
                    call,
                    options.run_commands,
                    options.json,
                    out,
                )
                .await
            }
            (Command::Test { .. }, Some(cases)) => {
                let report = cases
                    .run(&registry, &config.agent, options.run_commands)
                    .await;
                if options.json {
                    report.write_json(out)?;
                } else {
                    report.write_text(&cases, &config.source, &config.agent, out)?;
                }
                Ok(if report.failed() == 0 { 0 } else { 6 })
            }
            (Command::Test { .. }, None) => unreachable!("a test command's cases are loaded above"),
            #[cfg(feature = "serve")]
            (Command::Serve(_), _) => unreachable!("served above"),
        }
    }
}

/// The agent of a config file, and the server its `mcp_proxy` section
/// names, if it names one. A config written for `hooks mcp-proxy` carries
/// that section beside the agent's hooks; the other commands check the
/// hooks and leave the section to the proxy (with the `mcp` feature; without
/// it the section is an unknown key).
fn load_agent(
    path: impl AsRef<std::path::Path>,
) -> (Result<AgentConfig, AgentConfigErrors>, Option<String>) {
    let path = path.as_ref();
    #[cfg(feature = "mcp")]
    {
        let section = crate::config::ConfigFormat::read(path)
            .ok()
            .and_then(|value| value.get("mcp_proxy").cloned());
        if let Some(section) = section {
            let server = section
                .get("server")
                .and_then(Value::as_str)
                .map(str::to_owned);
            let loaded = match crate::mcp_proxy::McpProxyConfig::load(path) {
                Ok((agent, _)) => Ok(agent),
                Err(crate::mcp_proxy::McpProxyError::Agent(errors)) => Err(errors),
                Err(other) => Err(AgentConfigErrors(vec![AgentConfigError {
                    file: path.display().to_string(),
                    entry: Some("mcp_proxy".to_owned()),
                    message: other.to_string(),
                }])),
            };
            return (loaded, server);
        }
    }
    (AgentConfig::load(path), None)
}

/// Runs the command line in `std::env::args()` with the hooks and factories
/// linked into this binary: `fn main() -> ExitCode { hooks::cli::run() }`.
pub fn run() -> ExitCode {
    Cli::new().run()
}
