//! The command line, parsed.

use serde_json::{Value, json};

/// What the command line asks for.
pub(super) enum Command {
    /// `check AGENT_CONFIG`.
    Check,
    /// `explain AGENT_CONFIG --tool NAME …`.
    Explain(Call),
    /// `test AGENT_CONFIG CASES`.
    Test {
        /// The table of cases.
        cases: String,
    },
    /// `serve AGENT_CONFIG --listen ADDR …`.
    #[cfg(feature = "serve")]
    Serve(Serve),
}

/// How `serve` serves.
#[cfg(feature = "serve")]
pub(super) struct Serve {
    pub(super) listen: String,
    pub(super) database: Option<String>,
    pub(super) org: String,
    pub(super) user: String,
    pub(super) user_header: Option<String>,
    pub(super) answer_allow: bool,
}

/// `hook-client --url URL [--timeout SECONDS]`.
#[cfg(feature = "serve")]
pub(super) struct HookClient {
    pub(super) url: String,
    pub(super) timeout: std::time::Duration,
}

/// Where `serve` listens without `--listen`.
#[cfg(feature = "serve")]
pub(super) const DEFAULT_LISTEN: &str = "127.0.0.1:8377";

/// `hook-client` takes no agent config: parsed on its own.
#[cfg(feature = "serve")]
pub(super) fn parse_hook_client(
    mut argv: impl Iterator<Item = String>,
) -> Result<HookClient, Usage> {
    let mut url = None;
    let mut timeout = std::time::Duration::from_secs(600);
    while let Some(arg) = argv.next() {
        let mut value = |flag: &str| argv.next().ok_or(format!("{flag} needs a value"));
        match arg.as_str() {
            "--url" => url = Some(value("--url")?),
            "--timeout" => {
                let text = value("--timeout")?;
                let seconds: u64 = text
                    .parse()
                    .ok()
                    .filter(|s| *s > 0)
                    .ok_or(format!("--timeout takes a number of seconds, not `{text}`"))?;
                timeout = std::time::Duration::from_secs(seconds);
            }
            "--help" | "-h" => return Err(Usage::Help),
            other => return Err(format!("unexpected argument `{other}` for hook-client").into()),
        }
    }
    Ok(HookClient {
        url: url.ok_or("hook-client needs --url (the hook server's /hook endpoint)")?,
        timeout,
    })
}

/// The call `explain` dry-runs.
pub(super) struct Call {
    pub(super) tool: String,
    pub(super) args: Value,
    pub(super) metadata: Value,
    pub(super) user: String,
    pub(super) org: String,
}

/// A parsed command line.
pub(super) struct Options {
    pub(super) command: Command,
    pub(super) config: String,
    pub(super) read_only_orgs: Vec<String>,
    pub(super) run_commands: bool,
    pub(super) json: bool,
}

/// Why the command line was not run: help asked for, or a usage error.
pub(super) enum Usage {
    Help,
    Error(String),
}

impl From<&str> for Usage {
    fn from(message: &str) -> Self {
        Usage::Error(message.to_owned())
    }
}

impl From<String> for Usage {
    fn from(message: String) -> Self {
        Usage::Error(message)
    }
}

pub(super) fn parse(mut argv: impl Iterator<Item = String>) -> Result<Options, Usage> {
    let name = argv
        .next()
        .ok_or("missing command: `check`, `explain` or `test`")?;
    if matches!(name.as_str(), "--help" | "-h" | "help") {
        return Err(Usage::Help);
    }
    if !matches!(name.as_str(), "check" | "explain" | "test" | "serve") {
        return Err(format!(
            "unknown command `{name}`: use `check`, `explain`, `test`, `serve` or `hook-client`"
        )
        .into());
    }
    let mut paths: Vec<String> = Vec::new();
    let mut tool = None;
    let mut call = Call {
        tool: String::new(),
        args: json!({}),
        metadata: json!({}),
        user: "cli-user".into(),
        org: "cli-org".into(),
    };
    let mut read_only_orgs = Vec::new();
    #[cfg(feature = "serve")]
    let mut serve = Serve {
        listen: String::new(),
        database: None,
        org: String::new(),
        user: String::new(),
        user_header: None,
        answer_allow: false,
    };
    let mut run_commands = false;
    let mut json = false;
    while let Some(arg) = argv.next() {
        let mut value = |flag: &str| argv.next().ok_or(format!("{flag} needs a value"));
        let explain_only = |flag: &str| -> Result<(), Usage> {
            match name.as_str() {
                "explain" => Ok(()),
                "test" => Err(format!(
                    "{flag} is an option of `explain`; a `test` case sets it in the cases file"
                )
                .into()),
                _ => Err(format!("{flag} is an option of `explain`").into()),
            }
        };
        #[cfg(feature = "serve")]
        let serve_only = |flag: &str| -> Result<(), Usage> {
            if name == "serve" {
                Ok(())
            } else {
                Err(format!("{flag} is an option of `serve`").into())
            }
        };
        match arg.as_str() {
            "--tool" => {
                explain_only("--tool")?;
                tool = Some(value("--tool")?);
            }
            "--args" => {
                explain_only("--args")?;
                call.args = json_object("--args", &value("--args")?)?;
            }
            "--metadata" => {
                explain_only("--metadata")?;
                call.metadata = json_object("--metadata", &value("--metadata")?)?;
            }
            #[cfg(feature = "serve")]
            "--user" | "--org" if name == "serve" => {
                let given = value(&arg)?;
                if arg == "--user" {
                    serve.user = given;
                } else {
                    serve.org = given;
                }
            }
            "--user" => {
                explain_only("--user")?;
                call.user = value("--user")?;
            }
            "--org" => {
                explain_only("--org")?;
                call.org = value("--org")?;
            }
            #[cfg(feature = "serve")]
            "--listen" | "--database" | "--user-header" => {
                serve_only(&arg)?;
                let given = value(&arg)?;
                match arg.as_str() {
                    "--listen" => serve.listen = given,
                    "--database" => serve.database = Some(given),
                    _ => serve.user_header = Some(given),
                }
            }
            #[cfg(feature = "serve")]
            "--answer-allow" => {
                serve_only("--answer-allow")?;
                serve.answer_allow = true;
            }
            "--read-only-org" => read_only_orgs.push(value("--read-only-org")?),
            "--run-commands" => run_commands = true,
            "--format" => match value("--format")?.as_str() {
                "json" => json = true,
                "text" => json = false,
                _ => return Err("--format takes `text` or `json`".into()),
            },
            // `--config PATH` names the agent config as the positional argument does.
            "--config" => paths.insert(0, value("--config")?),
            "--help" | "-h" => return Err(Usage::Help),
            flag if flag.starts_with('-') => return Err(format!("unknown option `{flag}`").into()),
            path => paths.push(path.to_owned()),
        }
    }
    let wanted = if name == "test" { 2 } else { 1 };
    if paths.len() > wanted {
        return Err(format!("unexpected argument `{}`", paths[wanted]).into());
    }
    let mut paths = paths.into_iter();
    let config = paths.next().ok_or("missing the agent config file")?;
    let command = match name.as_str() {
        "check" => Command::Check,
        "explain" => {
            call.tool = tool.ok_or("explain needs --tool NAME")?;
            Command::Explain(call)
        }
        #[cfg(feature = "serve")]
        "serve" => {
            if serve.listen.is_empty() {
                // Loopback unless told otherwise.
                serve.listen = DEFAULT_LISTEN.to_owned();
            }
            Command::Serve(serve)
        }
        _ => Command::Test {
            cases: paths
                .next()
                .ok_or("missing the cases file: `hooks test AGENT_CONFIG CASES`")?,
        },
    };
    Ok(Options {
        command,
        config,
        read_only_orgs,
        run_commands,
        json,
    })
}

fn json_object(flag: &str, text: &str) -> Result<Value, String> {
    let value: Value =
        serde_json::from_str(text).map_err(|e| format!("{flag} is not valid JSON: {e}"))?;
    if value.is_object() {
        Ok(value)
    } else {
        Err(format!("{flag} must be a JSON object"))
    }
}
