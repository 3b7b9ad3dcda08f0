//! What a command hook runs and when: [`CommandSpec`], as written in an
//! agent's config or built in code.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regex::Regex;
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::Value;

use super::http::HttpEndpoint;
use super::persistent::{FunctionLanguage, HookFunction};
use hooks_runtime::HookPoint;
use hooks_runtime::config::ConfigDuration;
use hooks_runtime::when::When;
use hooks_runtime::when::WhenErrors;
use hooks_runtime::{DEFAULT_PRIORITY, ErrorPolicy};

/// Claude Code's event for the post phase after a tool failed.
pub(crate) const POST_TOOL_USE_FAILURE: &str = "PostToolUseFailure";

/// How long a command may run when its spec sets no `timeout` (Claude Code's default).
pub const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

/// The command to run.
///
/// In config, an array of strings is the exec form (`["./hooks/check.sh",
/// "--strict"]`: the first element is the program, run directly with no
/// shell). A single string is the shell form: it runs as `/bin/sh -c
/// <string>` and is accepted only together with `shell: true`, so that
/// nothing goes through a shell by accident.
///
/// An HTTP hook (`url:` in config instead of `command:`, Claude Code's
/// `http` handler type) is [`CommandLine::Http`]: its input is POSTed to the
/// URL and the answer read as the command's stdout.
///
/// A Python or JavaScript function (`python:` or `node:` in config) is
/// [`CommandLine::Function`]: a runner shipped with this crate loads it once
/// and serves it as a persistent hook process (see
/// [`CommandSpec::persistent`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    /// The program and its arguments, run without a shell.
    Exec(Vec<String>),
    /// A shell command line, run as `/bin/sh -c <line>` (needs `shell: true`).
    Shell(String),
    /// An endpoint the hook input is POSTed to.
    Http(HttpEndpoint),
    /// A function, served by a shipped runner in a persistent process.
    Function(HookFunction),
}

impl CommandLine {
    /// The exec form: the program, then its arguments.
    pub fn exec<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        CommandLine::Exec(argv.into_iter().map(Into::into).collect())
    }

    /// The shell form: a line for `/bin/sh -c`.
    pub fn shell(line: impl Into<String>) -> Self {
        CommandLine::Shell(line.into())
    }

    /// A Python function for the shipped runner: `module:function` (see
    /// [`HookFunction::new`]), run by `python3`.
    pub fn python(target: &str) -> Result<Self, CommandSpecError> {
        HookFunction::new(FunctionLanguage::Python, target, None)
            .map(CommandLine::Function)
            .map_err(CommandSpecError::Invalid)
    }

    /// A JavaScript function for the shipped runner: `module:function` (see
    /// [`HookFunction::new`]), run by `node`.
    pub fn node(target: &str) -> Result<Self, CommandSpecError> {
        HookFunction::new(FunctionLanguage::Node, target, None)
            .map(CommandLine::Function)
            .map_err(CommandSpecError::Invalid)
    }

    /// The first word: the program of the exec form, the first
    /// whitespace-separated word of the shell form (empty when there is
    /// none), the host of an HTTP endpoint, the `module:function` of a
    /// function.
    pub fn first_word(&self) -> &str {
        match self {
            CommandLine::Exec(argv) => argv.first().map_or("", String::as_str),
            CommandLine::Shell(line) => line.split_whitespace().next().unwrap_or(""),
            CommandLine::Http(endpoint) => endpoint.host(),
            CommandLine::Function(function) => function.target(),
        }
    }

    fn is_empty(&self) -> bool {
        match self {
            CommandLine::Exec(argv) => argv.first().is_none_or(|program| program.trim().is_empty()),
            CommandLine::Shell(line) => line.trim().is_empty(),
            CommandLine::Http(_) | CommandLine::Function(_) => false,
        }
    }

    fn has_nul(&self) -> bool {
        match self {
            CommandLine::Exec(argv) => argv.iter().any(|arg| arg.contains('\0')),
            CommandLine::Shell(line) => line.contains('\0'),
            CommandLine::Http(_) | CommandLine::Function(_) => false,
        }
    }
}

/// Shows the command as a person would type it (arguments quoted when needed).
impl fmt::Display for CommandLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CommandLine::Shell(line) => f.write_str(line),
            CommandLine::Http(endpoint) => write!(f, "{endpoint}"),
            CommandLine::Function(function) => write!(f, "{function}"),
            CommandLine::Exec(argv) => {
                for (index, arg) in argv.iter().enumerate() {
                    if index > 0 {
                        f.write_str(" ")?;
                    }
                    let plain = !arg.is_empty()
                        && arg
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "_-./:=@%+,".contains(c));
                    if plain {
                        f.write_str(arg)?;
                    } else {
                        write!(f, "'{}'", arg.replace('\'', r"'\''"))?;
                    }
                }
                Ok(())
            }
        }
    }
}

impl<'de> Deserialize<'de> for CommandLine {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct LineVisitor;

        impl<'de> Visitor<'de> for LineVisitor {
            type Value = CommandLine;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(
                    "an array of strings (the program and its arguments), or a string together with `shell: true`",
                )
            }

            fn visit_str<E: de::Error>(self, line: &str) -> Result<CommandLine, E> {
                Ok(CommandLine::Shell(line.to_owned()))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<CommandLine, A::Error> {
                let mut argv = Vec::with_capacity(seq.size_hint().unwrap_or(1).min(64));
                while let Some(arg) = seq.next_element::<String>()? {
                    argv.push(arg);
                }
                Ok(CommandLine::Exec(argv))
            }
        }

        deserializer.deserialize_any(LineVisitor)
    }
}

/// A command hook as declared: which event, which calls, what to run, and how.
///
/// Deserializes from an agent config entry (unknown fields are errors) and is
/// checked while deserializing, so a `CommandSpec` read from config is always
/// valid; one built in code is checked by [`validate`](Self::validate) and by
/// [`CommandHook::new`](crate::CommandHook::new).
///
/// ```
/// use std::time::Duration;
/// use hooks::command::{CommandLine, CommandSpec};
/// use hooks::{ErrorPolicy, HookPoint};
/// use serde_json::json;
///
/// let spec: CommandSpec = serde_json::from_value(json!({
///     "event": "PreToolUse",
///     "matcher": "Bash|sql_.*",
///     "command": ["./hooks/check.sh", "--strict"],
///     "timeout": "10s",
/// }))
/// .unwrap();
/// assert_eq!(spec.timeout, Duration::from_secs(10));
/// assert_eq!(spec.on_error, ErrorPolicy::FailClosed);
/// assert_eq!(spec.hook_name(), "command:PreToolUse:./hooks/check.sh");
///
/// // A string runs through a shell, so it must say so.
/// let error = serde_json::from_value::<CommandSpec>(json!({
///     "event": "PreToolUse",
///     "command": "./hooks/check.sh | tee log",
/// }))
/// .unwrap_err();
/// assert!(error.to_string().contains("shell: true"));
///
/// // The same in code.
/// let spec = CommandSpec::new(HookPoint::SessionStart, CommandLine::exec(["./hooks/context.sh"]))
///     .with_timeout(Duration::from_secs(5));
/// assert!(spec.validate().is_ok());
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "RawCommandSpec")]
#[non_exhaustive]
pub struct CommandSpec {
    /// The hook's name; `None` means [`default_name`](Self::default_name).
    pub name: Option<String>,
    /// The hook point, written as Claude Code's event name (`PreToolUse`,
    /// `PostToolUse` or `SessionStart`; see [`HookPoint::event_name`]).
    /// `PostToolUseFailure` reads as `PostToolUse` with
    /// [`tool_failure`](Self::tool_failure) set.
    pub event: HookPoint,
    /// Claude Code's `PostToolUseFailure`: the hook runs only after a tool
    /// failed, and the command reads that event's input (`error` instead of
    /// `tool_response`). Only with [`event`](Self::event) `PostToolUse`.
    pub tool_failure: bool,
    /// A `when` expression (this project's language) the call must match.
    pub when: Option<String>,
    /// A Claude Code matcher: a regex the whole tool name must match (`*`
    /// or empty matches every tool). Session-start hooks match it against
    /// the session source, which is always `startup` here.
    pub matcher: Option<String>,
    /// What to run.
    pub command: CommandLine,
    /// Run [`CommandLine::Shell`] through `/bin/sh -c`; required for the string form.
    pub shell: bool,
    /// Keep the program running and send it every call as one line of JSON
    /// with an `id`, instead of starting it per call (`persistent: true`
    /// in config; always so for [`CommandLine::Function`]). See the
    /// persistent hook processes section of the command hooks guide.
    pub persistent: bool,
    /// When the command is killed (with its whole process group) and counts as failed.
    pub timeout: Duration,
    /// What a failure (crash, bad exit code, bad output, timeout) means.
    pub on_error: ErrorPolicy,
    /// Lower runs earlier.
    pub priority: i32,
    /// The working directory (default: the agent process's). Also sent as
    /// `cwd` and `CLAUDE_PROJECT_DIR`. A relative program path such as
    /// `./check.sh` is found from this directory; see
    /// [`resolve_relative_to`](Self::resolve_relative_to) to anchor it to the
    /// config file's directory instead.
    pub cwd: Option<PathBuf>,
    /// Names of extra environment variables to pass through from the agent's
    /// environment, besides [`COMMAND_ENV_ALLOWLIST`](crate::COMMAND_ENV_ALLOWLIST).
    pub env: Vec<String>,
}

impl CommandSpec {
    /// A spec with the defaults: no name (so the default one), no `when`, no
    /// matcher, a 60 s timeout, fail closed, priority 50, the agent's working
    /// directory and no extra variables. `shell` is set when `command` is the
    /// shell form, since choosing [`CommandLine::Shell`] in code is explicit.
    pub fn new(event: HookPoint, command: CommandLine) -> Self {
        let shell = matches!(command, CommandLine::Shell(_));
        let persistent = matches!(command, CommandLine::Function(_));
        CommandSpec {
            name: None,
            event,
            tool_failure: false,
            when: None,
            matcher: None,
            command,
            shell,
            persistent,
            timeout: DEFAULT_COMMAND_TIMEOUT,
            on_error: ErrorPolicy::FailClosed,
            priority: DEFAULT_PRIORITY,
            cwd: None,
            env: Vec::new(),
        }
    }

    /// Reads and checks a config entry (the JSON form of any config format).
    pub fn from_value(value: &Value) -> Result<Self, CommandSpecError> {
        CommandSpec::deserialize(value)
            .map_err(|error| CommandSpecError::Invalid(error.to_string()))
    }

    /// Sets the name.
    pub fn with_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Sets the `when` expression.
    pub fn with_when(mut self, when: impl Into<String>) -> Self {
        self.when = Some(when.into());
        self
    }

    /// Sets the Claude Code matcher (a regex over the whole tool name).
    pub fn with_matcher(mut self, matcher: impl Into<String>) -> Self {
        self.matcher = Some(matcher.into());
        self
    }

    /// Sets the timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Keeps the program running between calls (see the
    /// [`persistent`](CommandSpec#structfield.persistent) field).
    pub fn persistent_process(mut self) -> Self {
        self.persistent = true;
        self
    }

    /// Sets the error policy.
    pub fn with_on_error(mut self, on_error: ErrorPolicy) -> Self {
        self.on_error = on_error;
        self
    }

    /// Sets the priority.
    pub fn with_priority(mut self, priority: i32) -> Self {
        self.priority = priority;
        self
    }

    /// Sets the working directory.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Adds names of environment variables to pass through.
    pub fn with_env<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.env.extend(names.into_iter().map(Into::into));
        self
    }

    /// The hook point the command runs at.
    pub fn point(&self) -> HookPoint {
        self.event
    }

    /// The event name the command reads as `hook_event_name`:
    /// `PostToolUseFailure` for a [`tool_failure`](Self::tool_failure) hook,
    /// else the hook point's event name.
    pub fn event_name(&self) -> &'static str {
        if self.tool_failure {
            POST_TOOL_USE_FAILURE
        } else {
            self.event.event_name()
        }
    }

    /// The name used when `name` is not set: `command:<event>:<first word of
    /// the command>`, e.g. `command:PreToolUse:./hooks/check.sh`, or
    /// `python:<event>:<module:function>` (or `node:…`) for a function. Two such
    /// hooks running the same program need explicit names to be told apart.
    pub fn default_name(&self) -> String {
        let kind = match &self.command {
            CommandLine::Function(function) => function.language().key(),
            _ => "command",
        };
        format!("{kind}:{}:{}", self.event_name(), self.command.first_word())
    }

    /// The name the hook registers under: `name`, or [`default_name`](Self::default_name).
    pub fn hook_name(&self) -> String {
        self.name.clone().unwrap_or_else(|| self.default_name())
    }

    /// Makes a relative program path (one with a `/`, like `./hooks/check.sh`)
    /// and a relative `cwd` relative to `base_dir` — typically the directory
    /// of the config file that declared the hook. Bare program names (looked
    /// up on `PATH`) and the shell form are left alone.
    pub fn resolve_relative_to(&mut self, base_dir: &Path) {
        if let CommandLine::Exec(argv) = &mut self.command
            && let Some(program) = argv.first_mut()
            && program.contains('/')
            && Path::new(program.as_str()).is_relative()
        {
            *program = base_dir
                .join(program.as_str())
                .to_string_lossy()
                .into_owned();
        }
        if let CommandLine::Function(function) = &mut self.command {
            function.resolve_relative_to(base_dir);
        }
        if let Some(cwd) = &mut self.cwd
            && cwd.is_relative()
        {
            *cwd = base_dir.join(&*cwd);
        }
    }

    /// Checks everything that can be checked before running: the command's
    /// form, the name, the matcher regex, the `when` expression (for this
    /// event's hook point), the timeout and the `env` names.
    pub fn validate(&self) -> Result<(), CommandSpecError> {
        self.compile().map(drop)
    }

    /// Validates and compiles the matcher and the `when` expression.
    pub(crate) fn compile(&self) -> Result<Compiled, CommandSpecError> {
        if self.command.is_empty() {
            return Err(CommandSpecError::EmptyCommand);
        }
        match (&self.command, self.shell) {
            (CommandLine::Shell(_), false) => return Err(CommandSpecError::StringWithoutShell),
            (CommandLine::Exec(_), true) => return Err(CommandSpecError::ShellWithArray),
            (CommandLine::Http(_) | CommandLine::Function(_), true) => {
                return Err(CommandSpecError::Invalid(
                    "`shell: true` is for a command line, not a `url` or a function".into(),
                ));
            }
            _ => {}
        }
        match (&self.command, self.persistent) {
            (CommandLine::Http(_), true) => {
                return Err(CommandSpecError::Invalid(
                    "`persistent: true` keeps a program running; an HTTP hook (`url`) has no \
                     program: remove `persistent`"
                        .into(),
                ));
            }
            (CommandLine::Function(_), false) => {
                return Err(CommandSpecError::Invalid(
                    "a function is always served by a persistent process: remove \
                     `persistent: false`"
                        .into(),
                ));
            }
            _ => {}
        }
        if self.command.has_nul() {
            return Err(CommandSpecError::NulInCommand);
        }
        if self
            .name
            .as_deref()
            .is_some_and(|name| name.trim().is_empty())
        {
            return Err(CommandSpecError::EmptyName);
        }
        if self.timeout.is_zero() {
            return Err(CommandSpecError::ZeroTimeout);
        }
        if self.tool_failure && self.event != HookPoint::PostToolUse {
            return Err(CommandSpecError::Invalid(format!(
                "`tool_failure` is for the post phase: the event must be PostToolUse, not {}",
                self.event.event_name()
            )));
        }
        if let Some(name) = self
            .env
            .iter()
            .find(|name| name.is_empty() || name.contains(['=', '\0']))
        {
            return Err(CommandSpecError::BadEnvName { name: name.clone() });
        }
        let matcher = match self.matcher.as_deref().map(str::trim) {
            None | Some("" | "*") => None,
            Some(source) => Some(compile_matcher(source)?),
        };
        let when = match &self.when {
            None => None,
            Some(source) => Some(When::parse(source, self.point()).map_err(|errors| {
                CommandSpecError::BadWhen {
                    event: self.event,
                    errors,
                }
            })?),
        };
        Ok(Compiled { matcher, when })
    }
}

/// A checked spec's matcher and `when`, ready to evaluate.
pub(crate) struct Compiled {
    pub(crate) matcher: Option<Regex>,
    pub(crate) when: Option<When>,
}

/// Compiles a matcher as a full match. The source is compiled alone first so
/// that text like `a)|(b` cannot close the anchoring group and match anywhere.
fn compile_matcher(source: &str) -> Result<Regex, CommandSpecError> {
    let bad = |error: regex::Error| CommandSpecError::BadMatcher {
        matcher: source.to_owned(),
        message: error.to_string(),
    };
    Regex::new(source).map_err(bad)?;
    Regex::new(&format!("^(?:{source})$")).map_err(bad)
}

/// Why a command hook declaration cannot be used. The hook (and the agent
/// whose config declares it) must not run until it is fixed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CommandSpecError {
    /// No program to run.
    #[error(
        "`command` is empty: give the program and its arguments as an array, e.g. [\"./hooks/check.sh\"]"
    )]
    EmptyCommand,
    /// A string command without `shell: true`.
    #[error(
        "`command` is a string, which would run through a shell: use the array form (`command: [\"./hooks/check.sh\", \"--flag\"]`) to run the program directly, or set `shell: true` to run the string with /bin/sh -c"
    )]
    StringWithoutShell,
    /// `shell: true` with the array form.
    #[error(
        "`shell: true` needs `command` as one string (it runs as /bin/sh -c <string>): write the command as a string, or remove `shell` to run the array directly"
    )]
    ShellWithArray,
    /// A NUL byte in the command.
    #[error("`command` contains a NUL byte, which no program argument can hold: remove it")]
    NulInCommand,
    /// `name` is set but empty.
    #[error("`name` is empty: give the hook a name, or leave `name` out to get a default one")]
    EmptyName,
    /// A zero timeout.
    #[error("`timeout` must be longer than zero, e.g. \"10s\" or 10 (seconds)")]
    ZeroTimeout,
    /// An `env` entry that is not a variable name.
    #[error(
        "`env` entry {name:?} is not a variable name: list the names of variables to pass through (e.g. `GITHUB_TOKEN`), without `=` or values"
    )]
    BadEnvName {
        /// The entry.
        name: String,
    },
    /// The matcher is not a valid regex.
    #[error(
        "`matcher` {matcher:?} is not a valid regular expression: {message}\nwrite a regex the whole tool name must match, such as \"Bash|sql_.*\", or \"*\" for every tool"
    )]
    BadMatcher {
        /// The matcher as written.
        matcher: String,
        /// The regex engine's complaint.
        message: String,
    },
    /// The `when` expression does not parse or does not fit the event.
    #[error("`when` is not valid for a {} hook:\n{errors}", event.event_name())]
    BadWhen {
        /// The hook's event.
        event: HookPoint,
        /// Every mistake, with line and column.
        errors: WhenErrors,
    },
    /// The entry does not have the shape of a command hook (wrong type,
    /// unknown field, missing `event` or `command`…).
    #[error("invalid command hook: {0}")]
    Invalid(String),
}

/// The config shape, before checking.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCommandSpec {
    #[serde(default)]
    name: Option<String>,
    event: String,
    #[serde(default)]
    when: Option<String>,
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    command: Option<CommandLine>,
    #[serde(default)]
    url: Option<String>,
    #[serde(default)]
    python: Option<String>,
    #[serde(default)]
    node: Option<String>,
    #[serde(default)]
    interpreter: Option<String>,
    #[serde(default)]
    persistent: Option<bool>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, String>,
    #[serde(default)]
    allowed_env_vars: Vec<String>,
    #[serde(default)]
    shell: bool,
    #[serde(default = "default_timeout", deserialize_with = "timeout_from_config")]
    timeout: Duration,
    #[serde(default, deserialize_with = "policy_from_config")]
    on_error: ErrorPolicy,
    #[serde(default = "default_priority")]
    priority: i32,
    #[serde(default)]
    cwd: Option<PathBuf>,
    #[serde(default)]
    env: Vec<String>,
}

impl TryFrom<RawCommandSpec> for CommandSpec {
    type Error = CommandSpecError;

    fn try_from(raw: RawCommandSpec) -> Result<Self, Self::Error> {
        let (event, tool_failure) = match raw.event.as_str() {
            POST_TOOL_USE_FAILURE => (HookPoint::PostToolUse, true),
            name => (
                name.parse::<HookPoint>().map_err(|_| {
                    CommandSpecError::Invalid(format!(
                        "unknown `event` {name:?}: use PreToolUse, PostToolUse, \
                         PostToolUseFailure or SessionStart"
                    ))
                })?,
                false,
            ),
        };
        let http_only = !raw.headers.is_empty() || !raw.allowed_env_vars.is_empty();
        if http_only && raw.url.is_none() {
            return Err(CommandSpecError::Invalid(
                "`headers` and `allowed_env_vars` go with a `url`, not a `command` or a function"
                    .into(),
            ));
        }
        let function = match (raw.python, raw.node) {
            (Some(target), None) => Some((FunctionLanguage::Python, target)),
            (None, Some(target)) => Some((FunctionLanguage::Node, target)),
            (None, None) => None,
            (Some(_), Some(_)) => {
                return Err(CommandSpecError::Invalid(
                    "give a `python` or a `node` function, not both".into(),
                ));
            }
        };
        if raw.interpreter.is_some() && function.is_none() {
            return Err(CommandSpecError::Invalid(
                "`interpreter` names the program that runs a `python` or `node` function: give \
                 `python: \"module:function\"` with it, or remove it"
                    .into(),
            ));
        }
        let command = match (raw.command, raw.url, function) {
            (Some(command), None, None) => command,
            #[cfg(not(feature = "http"))]
            (None, Some(_), None) => {
                return Err(CommandSpecError::Invalid(super::http::NO_HTTP.into()));
            }
            #[cfg(feature = "http")]
            (None, Some(url), None) => CommandLine::Http(
                HttpEndpoint::new(&url, raw.headers, &raw.allowed_env_vars)
                    .map_err(CommandSpecError::Invalid)?,
            ),
            (None, None, Some((language, target))) => CommandLine::Function(
                HookFunction::new(language, &target, raw.interpreter.as_deref())
                    .map_err(CommandSpecError::Invalid)?,
            ),
            (None, None, None) => {
                return Err(CommandSpecError::Invalid(
                    "missing `command` (what to run), `url` (where to post the hook input), or \
                     `python` or `node` (a `module:function` to call)"
                        .into(),
                ));
            }
            _ => {
                return Err(CommandSpecError::Invalid(
                    "give one of `command` (a program to run), `url` (where to post) or \
                     `python`/`node` (a function to call), not several"
                        .into(),
                ));
            }
        };
        let persistent = match (&command, raw.persistent) {
            (CommandLine::Function(_), None) => true,
            (_, given) => given.unwrap_or(false),
        };
        let spec = CommandSpec {
            name: raw.name,
            event,
            tool_failure,
            when: raw.when,
            matcher: raw.matcher,
            command,
            shell: raw.shell,
            persistent,
            timeout: raw.timeout,
            on_error: raw.on_error,
            priority: raw.priority,
            cwd: raw.cwd,
            env: raw.env,
        };
        spec.validate()?;
        Ok(spec)
    }
}

fn default_timeout() -> Duration {
    DEFAULT_COMMAND_TIMEOUT
}

fn default_priority() -> i32 {
    DEFAULT_PRIORITY
}

/// Claude Code's `timeout`: a duration or whole seconds, named in errors.
fn timeout_from_config<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    ConfigDuration::seconds_or_text(deserializer)
        .map_err(|error| de::Error::custom(format_args!("`timeout`: {error}")))
}

fn policy_from_config<'de, D: Deserializer<'de>>(deserializer: D) -> Result<ErrorPolicy, D::Error> {
    /// The config spelling of [`ErrorPolicy`].
    #[derive(Deserialize)]
    #[serde(rename_all = "snake_case")]
    enum Policy {
        FailClosed,
        FailOpen,
    }

    Ok(match Policy::deserialize(deserializer)? {
        Policy::FailClosed => ErrorPolicy::FailClosed,
        Policy::FailOpen => ErrorPolicy::FailOpen,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(value: Value) -> Result<CommandSpec, CommandSpecError> {
        CommandSpec::from_value(&value)
    }

    #[test]
    fn defaults_fill_what_the_entry_leaves_out() {
        let spec =
            parse(json!({"event": "PreToolUse", "command": ["./x.sh"], "timeout": "10s"})).unwrap();
        assert_eq!(spec.timeout, Duration::from_secs(10));
        assert_eq!(spec.priority, DEFAULT_PRIORITY);
        assert_eq!(spec.on_error, ErrorPolicy::FailClosed);
        assert!(!spec.shell && spec.env.is_empty() && spec.cwd.is_none());
        assert_eq!(spec.hook_name(), "command:PreToolUse:./x.sh");
        let spec = parse(json!({"event": "PostToolUse", "command": ["x"], "timeout": 60, "on_error": "fail_open"})).unwrap();
        assert_eq!(spec.timeout, Duration::from_secs(60));
        assert_eq!(spec.on_error, ErrorPolicy::FailOpen);
        let spec =
            parse(json!({"event": "SessionStart", "command": "echo hi", "shell": true})).unwrap();
        assert_eq!(spec.timeout, DEFAULT_COMMAND_TIMEOUT);
        assert_eq!(spec.hook_name(), "command:SessionStart:echo");
    }

    #[test]
    fn mistakes_are_errors_that_say_what_to_do() {
        let message = |value| parse(value).unwrap_err().to_string();
        assert!(
            message(json!({"event": "PreToolUse", "command": "./x.sh"})).contains("array form")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["./x.sh"], "shell": true}))
                .contains("one string")
        );
        assert!(message(json!({"event": "PreToolUse", "command": []})).contains("empty"));
        assert!(
            message(json!({"event": "PreToolUse", "command": "  ", "shell": true}))
                .contains("empty")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "shel": true}))
                .contains("unknown field `shel`")
        );
        assert!(message(json!({"event": "Stop", "command": ["x"]})).contains("PreToolUse"));
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "timeout": 0}))
                .contains("longer than zero")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "timeout": -5}))
                .contains("positive")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "timeout": "soon"}))
                .contains("invalid duration")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "on_error": "ignore"}))
                .contains("fail_open")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "env": ["A=b"]}))
                .contains("without `=`")
        );
        assert!(
            message(json!({"event": "PreToolUse", "command": ["x"], "matcher": "a)|(b"}))
                .contains("not a valid regular expression")
        );
        let when =
            message(json!({"event": "PreToolUse", "command": ["x"], "when": "tool_nme == \"x\""}));
        assert!(when.contains("line 1, column 1"), "{when}");
        let when = message(
            json!({"event": "SessionStart", "command": ["x"], "when": "tool_name == \"x\""}),
        );
        assert!(when.contains("SessionStart"), "{when}");
    }

    #[test]
    fn matchers_match_the_whole_tool_name() {
        let compiled =
            parse(json!({"event": "PreToolUse", "command": ["x"], "matcher": "Bash|sql_.*"}))
                .unwrap()
                .compile()
                .unwrap();
        let matcher = compiled.matcher.unwrap();
        assert!(matcher.is_match("sql_exec") && matcher.is_match("Bash"));
        assert!(!matcher.is_match("my_sql_exec") && !matcher.is_match("Bashful"));
        for all in ["*", "", " "] {
            let compiled = parse(json!({"event": "PreToolUse", "command": ["x"], "matcher": all}))
                .unwrap()
                .compile()
                .unwrap();
            assert!(compiled.matcher.is_none());
        }
    }

    #[test]
    fn relative_paths_resolve_against_the_config_directory() {
        let mut spec = CommandSpec::new(
            HookPoint::PreToolUse,
            CommandLine::exec(["./hooks/x.sh", "./arg"]),
        )
        .with_cwd("work");
        spec.resolve_relative_to(Path::new("/etc/agent"));
        assert_eq!(
            spec.command,
            CommandLine::exec(["/etc/agent/./hooks/x.sh", "./arg"])
        );
        assert_eq!(spec.cwd.as_deref(), Some(Path::new("/etc/agent/work")));
        let mut bare = CommandSpec::new(HookPoint::PreToolUse, CommandLine::exec(["python3"]));
        bare.resolve_relative_to(Path::new("/etc/agent"));
        assert_eq!(bare.command, CommandLine::exec(["python3"]));
    }

    #[test]
    fn commands_display_as_typed() {
        assert_eq!(
            CommandLine::exec(["./x.sh", "a b", "it's"]).to_string(),
            r"./x.sh 'a b' 'it'\''s'"
        );
        assert_eq!(
            CommandLine::shell("echo hi | cat").to_string(),
            "echo hi | cat"
        );
    }
}
