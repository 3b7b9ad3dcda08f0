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
//! `hooks --help` lists the subcommands, `hooks <subcommand> --help`
//! gives each one's options, and `hooks completions <shell>` prints a
//! completion script (bash, zsh, fish, elvish, powershell).
//!
//! Exit codes: 0 — the config is valid (`check`), the call would go ahead
//! (`explain`), every case passed (`test`); 1 — the config or the cases
//! file is invalid; 2 — bad usage; 3 — the call would be blocked; 4 — it
//! would ask a person for approval; 5 — it would run a command hook whose
//! verdict is unknown without `--run-commands`; 6 — a case failed.
//!
#![doc = include_str!("../../docs/cli.md")]

mod check;
mod connectors;
mod escape;
mod explain;
#[cfg(feature = "serve")]
mod init;
#[cfg(feature = "mcp")]
mod mcp_proxy;
mod options;
pub mod policy_test;
#[cfg(feature = "serve")]
mod serve;

use std::io::{self, Write};
use std::process::ExitCode;

use serde_json::{Value, json};

use crate::config::{AgentConfig, AgentConfigErrors, ConfigWarning};
use crate::factory::Resources;
use clap::Parser as _;
use options::{Format, Sub};
use policy_test::PolicyCases;

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
        let args = std::iter::once("hooks".to_owned()).chain(args);
        let parsed = match options::Cli::try_parse_from(args) {
            Ok(parsed) => parsed,
            Err(error) => {
                // Help and version go to stdout and succeed; a usage error
                // goes to stderr with exit 2 (which also blocks the call in
                // a client that runs `hooks hook-client` as a hook).
                let text = error.render().to_string();
                return if error.use_stderr() {
                    write!(err, "{text}")?;
                    Ok(2)
                } else {
                    write!(out, "{text}")?;
                    Ok(0)
                };
            }
        };
        let (config, dry_run, command) = match parsed.command {
            Sub::Completions { shell } => {
                let mut command = <options::Cli as clap::CommandFactory>::command();
                clap_complete::generate(shell, &mut command, "hooks", out);
                return Ok(0);
            }
            #[cfg(feature = "serve")]
            Sub::HookClient(client) => return serve::hook_client(client, out, err).await,
            #[cfg(feature = "serve")]
            Sub::RunBuffered { command } => {
                return Ok(crate::serve::codex::run::run_buffered(&command, out, err));
            }
            #[cfg(feature = "serve")]
            Sub::Init(options) => return init::run(options, out, err),
            #[cfg(feature = "serve")]
            Sub::Serve(options) => return serve::serve(options, self.add, out, err).await,
            #[cfg(feature = "mcp")]
            Sub::McpProxy(options) => return mcp_proxy::run(options, self.add, err).await,
            Sub::Check(check) => {
                let dry_run = options::DryRun {
                    read_only_orgs: Vec::new(),
                    run_commands: false,
                    format: check.format,
                };
                (check.config.path(), dry_run, Step::Check)
            }
            Sub::Explain(explain) => {
                let call = explain::Call {
                    tool: explain.tool,
                    args: explain.args,
                    metadata: explain.metadata,
                    user: explain.user,
                    org: explain.org,
                };
                (explain.config.path(), explain.dry_run, Step::Explain(call))
            }
            Sub::Test(test) => (test.config, test.dry_run, Step::Test(test.cases)),
        };
        let json = dry_run.format == Format::Json;
        // The cases file first: its org modes go into the resources.
        let mut read_only = dry_run.read_only_orgs.clone();
        let cases = match &command {
            Step::Test(cases) => match PolicyCases::load(cases) {
                Ok(cases) => {
                    read_only.extend(cases.read_only_orgs.iter().cloned());
                    Some(cases)
                }
                Err(error) => {
                    if json {
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
        let (loaded, server) = load_agent(&config);
        let built = loaded.and_then(|config| {
            config
                .build_registry_with_warnings(&resources)
                .map(|(registry, warnings)| (config, registry, warnings))
        });
        let (config, registry, warnings) = match built {
            Ok(built) => built,
            Err(errors) => {
                if json {
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
        match command {
            Step::Check => {
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
                // Persistent hook processes are started once and probed: a
                // program or Python module that cannot serve fails here,
                // not on every call.
                let mut probed = Vec::new();
                let mut failed = Vec::new();
                for entry in &config.commands {
                    match hooks_command::probe_declared(&entry.spec, config.command_base_dir())
                        .await
                    {
                        None => {}
                        Some(Ok(took)) => probed.push(format!(
                            "{}: the hook process answered a probe in {} ms",
                            entry.entry,
                            took.as_millis()
                        )),
                        Some(Err(problem)) => failed.push((entry.entry.clone(), problem)),
                    }
                }
                if !failed.is_empty() {
                    if json {
                        let list: Vec<Value> = failed
                            .iter()
                            .map(|(entry, message)| {
                                json!({"file": config.source, "entry": entry, "message": message})
                            })
                            .collect();
                        writeln!(out, "{}", json!({"valid": false, "errors": list}))?;
                    } else {
                        for (entry, problem) in &failed {
                            writeln!(err, "{}: {entry}: {problem}", config.source)?;
                        }
                        writeln!(
                            err,
                            "hooks: {} hook process(es) did not answer a probe; fix them before \
                             the agent runs (every call they guard would fail)",
                            failed.len()
                        )?;
                    }
                    return Ok(1);
                }
                check::check(&config, &registry, &warnings, json, out)?;
                if !json {
                    for line in probed {
                        writeln!(out, "{line}")?;
                    }
                }
                Ok(0)
            }
            Step::Explain(call) => {
                explain::explain(&config, &registry, call, dry_run.run_commands, json, out).await
            }
            Step::Test(_) => {
                // Loaded above (a file that fails to load ends the run there).
                let Some(cases) = cases else { return Ok(1) };
                let report = cases
                    .run(&registry, &config.agent, dry_run.run_commands)
                    .await;
                if json {
                    report.write_json(out)?;
                } else {
                    report.write_text(&cases, &config.source, &config.agent, out)?;
                }
                Ok(if report.failed() == 0 { 0 } else { 6 })
            }
        }
    }
}

/// What `check`, `explain` and `test` do once the agent is built.
enum Step {
    Check,
    Explain(explain::Call),
    /// The cases file.
    Test(String),
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
                Err(other) => Err(AgentConfigErrors(vec![crate::config::AgentConfigError {
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
