//! `hooks`: check an agent's hook config, dry-run tool calls through it,
//! and run a table of policy test cases against it — with the standard
//! hooks. To check a config that names your own attribute hooks or
//! factories, give your crate a binary whose `main` is [`hooks::cli::run`].
//!
//! ```text
//! hooks check AGENT_CONFIG [--format json]
//! hooks explain AGENT_CONFIG --tool NAME [--args JSON] [--metadata JSON]
//!       [--user ID] [--org ID] [--read-only-org ID]... [--run-commands] [--format json]
//! hooks test AGENT_CONFIG CASES [--read-only-org ID]... [--run-commands] [--format json]
//! ```
//!
//! Exit codes: see [`hooks::cli`].

fn main() -> std::process::ExitCode {
    hooks::cli::run()
}
