//! The command line, parsed by clap: one struct per subcommand.

use clap::builder::NonEmptyStringValueParser;
use clap::{Args, Parser, Subcommand, ValueEnum};
use serde_json::Value;

/// What `hooks --help` says after the list of subcommands.
const AFTER_HELP: &str = "\
The agent config (YAML, JSON or TOML) is the first argument; check, explain, serve and
mcp-proxy also take it as --config PATH.

Exit codes: 0 ok / would go ahead / every case passed, 1 invalid config or cases file (or a
server that could not start), 2 bad usage, 3 would be blocked, 4 would ask for approval,
5 would run a command whose verdict is unknown (no --run-commands), 6 a case failed.";

/// `hooks`: check an agent's hook config, dry-run tool calls through it,
/// run policy tests, and serve its hooks.
#[derive(Debug, Parser)]
#[command(
    name = "hooks",
    version,
    about = "Deterministic enforcement around an AI agent's tool calls.",
    after_help = AFTER_HELP,
    arg_required_else_help = true,
    args_override_self = true
)]
pub(super) struct Cli {
    #[command(subcommand)]
    pub(super) command: Sub,
}

/// The subcommands.
// Parsed once per process: the size of the largest variant costs nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Subcommand)]
pub(super) enum Sub {
    /// Validates an agent config and prints the run order.
    ///
    /// Every command hook's program must be found and executable (for a
    /// shell command line, its first word when that is a plain path or
    /// name), and the script a known interpreter (sh, bash, python3,
    /// node...) is given must exist. Config files over 1 MiB are refused.
    Check(CheckArgs),
    /// Dry-runs one tool call through the pre hooks without running the tool.
    ///
    /// Shows which hooks match, in what order, which would block and why.
    /// The approval gate shows as "would ask" and command hooks as "would
    /// run" unless --run-commands is given.
    Explain(ExplainArgs),
    /// Runs a table of policy cases as dry runs and prints pass/fail.
    ///
    /// Each case is a call and the verdict it must get: allowed, blocked,
    /// asks, withheld, unknown. A case may script the approver's answer and
    /// the tool's result.
    Test(TestArgs),
    /// Answers Claude Code style hook requests with the agent's hooks.
    ///
    /// POST /hook: PreToolUse, PostToolUse, PostToolUseFailure,
    /// SessionStart. The bearer token comes from HOOKS_SERVE_TOKEN
    /// (required unless the address is loopback). Approvals need a channel:
    /// serve from your own binary (hooks::serve) to configure one.
    #[cfg(feature = "serve")]
    Serve(ServeArgs),
    /// A command hook that forwards its stdin to a hook server and prints
    /// the answer.
    ///
    /// The token comes from HOOKS_SERVE_TOKEN. Exits 2 when the server
    /// denies or cannot be reached (fail closed).
    #[cfg(feature = "serve")]
    HookClient(HookClientArgs),
    /// Runs a command with no input and prints its output only when it
    /// has exited, with its exit code.
    ///
    /// Codex runs every shell command this way under `hook-client --client
    /// codex`, so the hooks see all of a command's output before the model
    /// reads any. Not run in a terminal (exit 126).
    #[cfg(feature = "serve")]
    RunBuffered {
        /// The program and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Serves MCP in front of an MCP server; every tools/call runs through
    /// the agent's hooks.
    ///
    /// On stdin/stdout, or over streamable HTTP at --listen ADDR (path
    /// /mcp, token from HOOKS_MCP_PROXY_TOKEN, required unless the address
    /// is loopback). The upstream is the command after `--` (or
    /// `mcp_proxy.command` in the config), or a streamable HTTP server
    /// (--upstream-url, or `mcp_proxy.url`, its bearer token from the
    /// variable `mcp_proxy.bearer_token_env` names). The upstream gets a
    /// scrubbed environment (PATH, HOME, USER, LANG, LC_ALL, LC_CTYPE, TZ,
    /// TMPDIR, plus `mcp_proxy.pass_env` and `mcp_proxy.env`). Exits 1 when
    /// the config is wrong or the upstream does not start, answer or speak
    /// MCP.
    #[cfg(feature = "mcp")]
    McpProxy(McpProxyArgs),
    /// Writes a client's hook settings for hook-client -> hooks serve.
    ///
    /// Claude Code: .claude/settings.json in --dir (default: here). Codex:
    /// $CODEX_HOME/hooks.json (~/.codex), or .codex/hooks.json in --dir.
    /// --settings FILE names the file instead. Every event fails closed; the token is read from HOOKS_SERVE_TOKEN in
    /// the client's environment and never written. Settings and hooks of
    /// your own are kept, entries an earlier `hooks init` wrote are
    /// replaced, and what changes is printed. --dry-run prints the result
    /// and writes nothing.
    #[cfg(feature = "serve")]
    Init(InitArgs),
    /// Prints a shell completion script for `hooks`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// The agent config, as the first argument or `--config`.
#[derive(Debug, Args)]
pub(super) struct ConfigPath {
    /// The agent config file (YAML, JSON or TOML).
    #[arg(value_name = "AGENT_CONFIG", value_parser = NonEmptyStringValueParser::new(), required_unless_present = "config")]
    path: Option<String>,
    /// The agent config file, as a flag.
    #[arg(long = "config", value_name = "PATH", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "path")]
    config: Option<String>,
}

impl ConfigPath {
    /// The path, however it was given.
    pub(super) fn path(&self) -> String {
        self.path
            .clone()
            .or_else(|| self.config.clone())
            .unwrap_or_default()
    }
}

/// How results are printed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(super) enum Format {
    /// For people.
    #[default]
    Text,
    /// One JSON document.
    Json,
}

/// `hooks check`.
#[derive(Debug, Args)]
pub(super) struct CheckArgs {
    #[command(flatten)]
    pub(super) config: ConfigPath,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t)]
    pub(super) format: Format,
}

/// The org modes and command hooks of a dry run.
#[derive(Debug, Args)]
pub(super) struct DryRun {
    /// An org in read-only mode (repeatable).
    #[arg(long = "read-only-org", value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub(super) read_only_orgs: Vec<String>,
    /// Run command hooks instead of reporting "would run".
    #[arg(long)]
    pub(super) run_commands: bool,
    /// How to print the result.
    #[arg(long, value_enum, default_value_t)]
    pub(super) format: Format,
}

/// `hooks explain`.
#[derive(Debug, Args)]
pub(super) struct ExplainArgs {
    #[command(flatten)]
    pub(super) config: ConfigPath,
    /// The tool the call names.
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub(super) tool: String,
    /// The call's arguments (a JSON object).
    #[arg(long, value_name = "JSON", value_parser = json_object, default_value = "{}")]
    pub(super) args: Value,
    /// The call's metadata (a JSON object).
    #[arg(long, value_name = "JSON", value_parser = json_object, default_value = "{}")]
    pub(super) metadata: Value,
    /// The user making the call.
    #[arg(long, value_name = "ID", default_value = "cli-user")]
    pub(super) user: String,
    /// The user's org.
    #[arg(long, value_name = "ID", default_value = "cli-org")]
    pub(super) org: String,
    #[command(flatten)]
    pub(super) dry_run: DryRun,
}

/// `hooks test`.
#[derive(Debug, Args)]
pub(super) struct TestArgs {
    /// The agent config file (YAML, JSON or TOML).
    #[arg(value_name = "AGENT_CONFIG", value_parser = NonEmptyStringValueParser::new())]
    pub(super) config: String,
    /// The table of cases (YAML, JSON or TOML).
    #[arg(value_name = "CASES", value_parser = NonEmptyStringValueParser::new())]
    pub(super) cases: String,
    #[command(flatten)]
    pub(super) dry_run: DryRun,
}

/// Where `serve` listens without `--listen`.
#[cfg(feature = "serve")]
pub(super) const DEFAULT_LISTEN: &str = "127.0.0.1:8377";

/// `hooks serve`.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub(super) struct ServeArgs {
    #[command(flatten)]
    pub(super) config: ConfigPath,
    /// The address to listen on.
    #[arg(long, value_name = "ADDR:PORT", default_value = DEFAULT_LISTEN, value_parser = NonEmptyStringValueParser::new())]
    pub(super) listen: String,
    /// Keep the audit log and limits in this SQLite or PostgreSQL database
    /// (default: in memory).
    #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
    pub(super) database: Option<String>,
    /// The org every call is made in.
    #[arg(long, value_name = "ID", default_value = "")]
    pub(super) org: String,
    /// The user every call is made by.
    #[arg(long, value_name = "ID", default_value = "")]
    pub(super) user: String,
    /// A request header naming the user, set by a proxy that authenticates
    /// people (needs --user-header-from).
    #[arg(long, value_name = "NAME", requires = "user_header_from", value_parser = NonEmptyStringValueParser::new())]
    pub(super) user_header: Option<String>,
    /// The address of a proxy whose --user-header is believed (repeatable);
    /// the header from any other peer blocks the call.
    #[arg(long = "user-header-from", value_name = "IP", requires = "user_header")]
    pub(super) user_header_from: Vec<std::net::IpAddr>,
    /// An org in read-only mode (repeatable; needs --org).
    #[arg(long = "read-only-org", value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub(super) read_only_orgs: Vec<String>,
    /// Answer "allow" (not "no opinion") when the hooks let a call go ahead.
    #[arg(long)]
    pub(super) answer_allow: bool,
}

/// `hooks hook-client`.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub(super) struct HookClientArgs {
    /// The hook server's /hook endpoint.
    #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
    pub(super) url: String,
    /// How long to wait for the answer, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub(super) timeout: u64,
    /// The client running this hook, whose output shapes are printed.
    #[arg(long, value_enum, default_value_t)]
    pub(super) client: HookClientKind,
}

/// The clients `hooks hook-client` answers.
#[cfg(feature = "serve")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(super) enum HookClientKind {
    /// Claude Code.
    #[default]
    ClaudeCode,
    /// OpenAI's Codex CLI.
    Codex,
}

#[cfg(feature = "serve")]
impl From<HookClientKind> for crate::serve::client::HookClient {
    fn from(kind: HookClientKind) -> Self {
        match kind {
            HookClientKind::ClaudeCode => crate::serve::client::HookClient::ClaudeCode,
            HookClientKind::Codex => crate::serve::client::HookClient::Codex,
        }
    }
}

/// The clients `hooks init` configures.
#[cfg(feature = "serve")]
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(super) enum InitClient {
    /// Claude Code (`.claude/settings.json`).
    ClaudeCode,
    /// Codex CLI (`$CODEX_HOME/hooks.json`).
    Codex,
}

/// `hooks init`.
#[cfg(feature = "serve")]
#[derive(Debug, Args)]
pub(super) struct InitArgs {
    /// The client whose settings are written.
    #[arg(value_enum)]
    pub(super) client: InitClient,
    /// The hook server's /hook endpoint.
    #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8377/hook", value_parser = NonEmptyStringValueParser::new())]
    pub(super) url: String,
    /// The project whose settings are written (Claude Code: default the
    /// current directory; Codex: default $CODEX_HOME/hooks.json).
    #[arg(long, value_name = "DIR")]
    pub(super) dir: Option<std::path::PathBuf>,
    /// The settings file to write instead of the project's.
    #[arg(long, value_name = "FILE", conflicts_with = "dir")]
    pub(super) settings: Option<std::path::PathBuf>,
    /// The `hooks` program as the hook command names it.
    #[arg(long, value_name = "PATH", default_value = "hooks", value_parser = NonEmptyStringValueParser::new())]
    pub(super) program: String,
    /// HTTP hooks to the server instead of hook-client commands (Claude
    /// Code; a post event whose server is down then leaves the result).
    #[arg(long)]
    pub(super) http: bool,
    /// Print the settings and what would change; write nothing.
    #[arg(long)]
    pub(super) dry_run: bool,
}

/// `hooks mcp-proxy`.
#[cfg(feature = "mcp")]
#[derive(Debug, Args)]
pub(super) struct McpProxyArgs {
    #[command(flatten)]
    pub(super) config: ConfigPath,
    /// The upstream server's name (every call's connector).
    #[arg(long, value_name = "NAME", value_parser = NonEmptyStringValueParser::new())]
    pub(super) name: Option<String>,
    /// Serve streamable HTTP at this address instead of stdio.
    #[arg(long, value_name = "ADDR:PORT", value_parser = NonEmptyStringValueParser::new())]
    pub(super) listen: Option<String>,
    /// Keep the audit log and limits in this SQLite or PostgreSQL database
    /// (default: in memory).
    #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new())]
    pub(super) database: Option<String>,
    /// The org every stdio call is made in.
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub(super) org: Option<String>,
    /// The user every stdio call is made by.
    #[arg(long, value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub(super) user: Option<String>,
    /// An org in read-only mode (repeatable; needs an org).
    #[arg(long = "read-only-org", value_name = "ID", value_parser = NonEmptyStringValueParser::new())]
    pub(super) read_only_orgs: Vec<String>,
    /// The upstream MCP server over streamable HTTP.
    #[arg(long, value_name = "URL", value_parser = NonEmptyStringValueParser::new(), conflicts_with = "command")]
    pub(super) upstream_url: Option<String>,
    /// The upstream MCP server's command, after `--`.
    #[arg(last = true, value_name = "UPSTREAM_COMMAND")]
    pub(super) command: Vec<String>,
}

fn json_object(text: &str) -> Result<Value, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|error| format!("not valid JSON: {error}"))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err("must be a JSON object".to_owned())
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory as _;

    use super::Cli;

    #[test]
    fn the_command_line_is_consistent() {
        Cli::command().debug_assert();
    }
}
