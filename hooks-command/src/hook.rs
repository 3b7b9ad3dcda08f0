//! [`CommandHook`]: a [`CommandSpec`] as a hook the registry can run.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use regex::Regex;
use tokio::process::Command;

use super::persistent::{CallFailure, Failure, FunctionLanguage, HookProcess};
use super::process;
use super::protocol::{self, Subject, Verdict};
use super::spec::{CommandLine, CommandSpec, CommandSpecError};
use hooks_runtime::HookResult;
use hooks_runtime::config::ConfigDuration;
use hooks_runtime::factory::AskHandler;
use hooks_runtime::registry::RegisteredHook;
use hooks_runtime::when::When;
use hooks_runtime::{
    DryRun, ErrorPolicy, Hook, HookError, HookOutcome, PostToolUseHook, PreToolUseHook,
    SessionStartHook, TimeoutNote,
};
use hooks_runtime::{HookContext, HookPoint};

/// The variables a command gets from the agent's environment (when set
/// there), besides the names its spec lists in `env`. Everything else —
/// credentials above all — is withheld.
pub const COMMAND_ENV_ALLOWLIST: &[&str] =
    &["PATH", "HOME", "LANG", "LC_ALL", "TZ", "TMPDIR", "USER"];

/// How much longer than its spec's timeout the runtime gives a command hook:
/// the command itself is killed at the spec's timeout, and this covers
/// killing and reaping it and everything it started.
const KILL_MARGIN: Duration = Duration::from_secs(4);

/// A Claude-Code-compatible command hook: runs a program, hands it the call
/// as JSON on stdin, and reads its decision from its exit code and output.
///
/// - **Input**: one JSON object on stdin (`session_id`, `hook_event_name`,
///   `cwd`, `tool_name`, `tool_input`, `tool_use_id`, `tool_response` for
///   post hooks, `source` at session start, then `agent_id`, `user_id`,
///   `org_id`, `surface`, `agent_path`, `metadata`). The tool arguments reach
///   the command only there: never on its command line, never in its
///   environment.
/// - **Exit 0**: stdout that opens like a JSON object (`{"` or `{}`, after
///   byte order marks and whitespace) is the Claude Code JSON output
///   (`continue`/`stopReason`, `decision: "block"`/`reason`,
///   `hookSpecificOutput.permissionDecision` `allow`/`deny`/`ask`,
///   `updatedInput`, `updatedToolOutput`, `additionalContext`); invalid JSON
///   is a failure. Other stdout is the session's context at session start,
///   and a side effect in the trace otherwise — unless it, or stderr, holds
///   a decision (a deciding key in quotes followed by `:`, a JSON object
///   holding one, an array of objects, double-encoded JSON), which is a
///   failure.
/// - **Output that cannot be read in full** after exit 0 — over the cap, not
///   UTF-8, invalid or protocol-breaking JSON, a decision hidden in plain
///   text or on stderr — blocks **even under `on_error: fail_open`**: the
///   command decided something, and the model can often make it unreadable
///   (a long argument quoted in the reason), which would otherwise turn a
///   deny into an allow. At session start the hook's own policy applies (the
///   model has written nothing yet).
/// - **Exit 2**: blocks (withholds the result, for post hooks) with stderr as
///   the reason; at session start it is a failure, which stops the session.
/// - **Anything else** — another exit code, a signal, a command that cannot
///   start, a timeout — is a hook failure, which blocks unless the spec says
///   `on_error: fail_open`; but a command that printed a decision other than
///   a plain allow (or unreadable stdout) before it failed blocks even then.
///   This is stricter than Claude Code, on purpose.
/// - **`ask`** goes to the [`AskHandler`] (the approval gate) if there is
///   one, and blocks otherwise.
///
/// The command runs without a shell (unless the spec says `shell: true`),
/// with an environment of [`COMMAND_ENV_ALLOWLIST`], the spec's `env` names,
/// `HOOKS_EVENT` and `CLAUDE_PROJECT_DIR` (its working directory). On Linux
/// no process it starts outlives the hook: when it exits, times out or is
/// abandoned, every descendant is killed, even one that called `setsid`
/// (elsewhere only its process group is killed, on timeout). Stdout and
/// stderr are each read up to
/// [`COMMAND_OUTPUT_LIMIT`](crate::COMMAND_OUTPUT_LIMIT) characters; stdout
/// that reaches it, or is not UTF-8, blocks (see above).
///
/// A **persistent** hook ([`CommandSpec::persistent`], and every
/// [`CommandLine::Function`]) starts its program once, on its first call,
/// and sends it each call as one line of JSON with an `id`; the answer line
/// with that id holds the same JSON output. A crash, a hang, closed stdout
/// or output that is no answer fails the calls waiting (output that is no
/// answer blocks even a `fail_open` hook) and the program is started again,
/// with back-off; see [`probe`](Self::probe) and the command hooks guide.
///
/// Running one needs a Tokio runtime with the IO and time drivers
/// (`#[tokio::main]` has both).
///
/// ```no_run
/// # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
/// use hooks::{HookContext, HookRegistry, command::{CommandHook, CommandSpec}};
/// use serde_json::{Value, json};
///
/// let spec = CommandSpec::from_value(&json!({
///     "event": "PreToolUse",
///     "matcher": "Bash",
///     "command": ["./hooks/check-bash.sh"],
///     "timeout": "10s",
/// }))?;
/// let registry = HookRegistry::builder()
///     .hook(CommandHook::new(spec, None)?.into_registered())
///     .build()?;
/// let ctx = HookContext::tool_call("Bash", json!({"command": "rm -rf /"}));
/// let report = registry.run_tool_call(ctx, async |_: &Value| Ok::<_, String>(json!("ok"))).await;
/// println!("{}", report.observation);
/// # Ok(())
/// # }
/// ```
pub struct CommandHook {
    spec: CommandSpec,
    name: String,
    matcher: Option<Regex>,
    when: Option<When>,
    when_source: Option<String>,
    description: String,
    command_text: String,
    ask: Option<Arc<dyn AskHandler>>,
    /// The running program of a persistent hook.
    process: Option<HookProcess>,
}

impl CommandHook {
    /// Checks `spec` and builds the hook. `ask` receives the calls the command
    /// answers `permissionDecision: "ask"` for; without it those calls block.
    pub fn new(
        spec: CommandSpec,
        ask: Option<Arc<dyn AskHandler>>,
    ) -> Result<Self, CommandSpecError> {
        let compiled = spec.compile()?;
        let name = spec.hook_name();
        let matcher_source = spec
            .matcher
            .as_deref()
            .map(str::trim)
            .filter(|_| compiled.matcher.is_some());
        let when_source = match (&spec.when, matcher_source) {
            (Some(when), None) => Some(when.clone()),
            (None, Some(matcher)) => Some(format!("matcher: {matcher}")),
            (Some(when), Some(matcher)) => Some(format!("{when} [matcher: {matcher}]")),
            (None, None) => None,
        };
        let command_text = protocol::excerpt(&spec.command.to_string(), 200);
        let kind = match (&spec.command, spec.persistent) {
            (CommandLine::Function(function), _) => match function.language() {
                FunctionLanguage::Python => "Python function",
                _ => "JavaScript function",
            },
            (_, true) => "persistent hook process",
            (_, false) => "command hook",
        };
        let process = spec
            .persistent
            .then(|| HookProcess::new(&name, spec.timeout));
        Ok(CommandHook {
            description: format!(
                "runs `{command_text}` ({kind}, {})",
                spec.event.event_name()
            ),
            process,
            command_text,
            matcher: compiled.matcher,
            when: compiled.when,
            when_source,
            name,
            spec,
            ask,
        })
    }

    /// The spec it was built from.
    pub fn spec(&self) -> &CommandSpec {
        &self.spec
    }

    /// Wraps the hook for a registry, at the point its event names.
    pub fn into_registered(self) -> RegisteredHook {
        match self.spec.event {
            HookPoint::PreToolUse => RegisteredHook::pre(self),
            HookPoint::PostToolUse => RegisteredHook::post(self),
            HookPoint::SessionStart => RegisteredHook::session_start(self),
        }
    }

    /// The working directory: the spec's `cwd` (relative to the agent's own
    /// directory when relative), else the agent's own directory.
    fn working_dir(&self) -> Option<PathBuf> {
        match &self.spec.cwd {
            Some(dir) if dir.is_absolute() => Some(dir.clone()),
            Some(dir) => {
                Some(std::env::current_dir().map_or_else(|_| dir.clone(), |here| here.join(dir)))
            }
            None => std::env::current_dir().ok(),
        }
    }

    /// The process to start, with its scrubbed environment.
    fn command(&self, cwd: Option<&Path>) -> Result<Command, HookError> {
        let mut command = match &self.spec.command {
            CommandLine::Exec(argv) => {
                // `CommandHook::new` checked that there is a program.
                let Some((program, args)) = argv.split_first() else {
                    return Err(HookError::new(CommandSpecError::EmptyCommand));
                };
                let mut command = Command::new(program);
                command.args(args);
                command
            }
            CommandLine::Shell(line) => {
                let mut command = Command::new("/bin/sh");
                command.arg("-c").arg(line);
                command
            }
            CommandLine::Function(function) => function.command(),
            CommandLine::Http(endpoint) => {
                return Err(HookError::new(format!(
                    "{endpoint} is an HTTP hook, not a process to start"
                )));
            }
        };
        command.env_clear();
        let passed = COMMAND_ENV_ALLOWLIST
            .iter()
            .copied()
            .chain(self.spec.env.iter().map(String::as_str));
        for name in passed {
            if let Some(value) = std::env::var_os(name) {
                command.env(name, value);
            }
        }
        // Only fixed text here: the tool name and arguments are the model's
        // words and reach the command on stdin alone, where any character is
        // JSON-escaped — a NUL in an environment value would make every
        // spawn fail.
        command.env("HOOKS_EVENT", self.spec.event_name());
        if let Some(dir) = cwd {
            command.env("CLAUDE_PROJECT_DIR", dir);
        }
        if let Some(dir) = &self.spec.cwd {
            command.current_dir(cwd.unwrap_or(dir));
        }
        Ok(command)
    }

    async fn run(&self, ctx: &HookContext) -> Result<HookResult, HookError> {
        let event = self.spec.event;
        if ctx.point != event {
            return Err(HookError::new(format!(
                "command hook `{}` is declared for {} but ran at {}; register it with `CommandHook::into_registered`",
                self.name,
                event.event_name(),
                ctx.point
            )));
        }
        let cwd = self.working_dir();
        let input = protocol::input(ctx, event, self.spec.tool_failure, cwd.as_deref());
        if let Some(process) = &self.process {
            return self.call_process(ctx, process, input, cwd.as_deref()).await;
        }
        let input = serde_json::to_vec(&input).map_err(|error| {
            HookError::new(format!("could not encode the hook input as JSON: {error}"))
        })?;
        if let CommandLine::Http(endpoint) = &self.spec.command {
            let finished = endpoint
                .call(input, self.spec.timeout)
                .await
                .map_err(|problem| {
                    HookError::new(format!("HTTP hook `{}` ({endpoint}) {problem}", self.name))
                })?;
            return self.decide(ctx, &finished).await;
        }
        let command = self.command(cwd.as_deref())?;
        let finished = process::run(command, &input, self.spec.timeout)
            .await
            .map_err(|error| {
                let dir = match &self.spec.cwd {
                    Some(dir) => format!(", and that its `cwd` {} exists", dir.display()),
                    None => String::new(),
                };
                HookError::new(format!(
                    "command `{}` could not be run: {error}; check that the program exists and is executable{dir}",
                    self.command_text
                ))
            })?;
        self.decide(ctx, &finished).await
    }

    /// One call through the persistent process: its answer decides like a
    /// command's JSON output.
    async fn call_process(
        &self,
        ctx: &HookContext,
        process: &HookProcess,
        input: serde_json::Map<String, serde_json::Value>,
        cwd: Option<&Path>,
    ) -> Result<HookResult, HookError> {
        let subject = self.subject();
        let answered = match process.call(input, || self.launch(cwd)).await {
            Ok(answered) => answered,
            // The process's stderr stays out of the reason (the log has
            // it): another session's arguments may be in it.
            Err(CallFailure {
                failure: Failure::Process(reason),
                ..
            }) => {
                return Err(HookError::new(format!(
                    "hook process `{}` {reason}",
                    self.command_text
                )));
            }
            Err(CallFailure {
                failure: Failure::Unreadable(reason),
                ..
            }) => {
                let verdict = protocol::unreadable(
                    &subject,
                    format!("hook process `{}` {reason}", self.command_text),
                )?;
                return self.settle(ctx, verdict).await;
            }
        };
        let verdict = protocol::interpret_answer(&subject, answered.answer)?;
        let mut result = self.settle(ctx, verdict).await?;
        result.prepend_side_effects(answered.notes);
        Ok(result)
    }

    /// The persistent process's command, for its (re)start.
    fn launch(&self, cwd: Option<&Path>) -> Result<Command, String> {
        self.command(cwd)
            .map_err(|error| error.message().to_owned())
    }

    /// Starts a persistent hook's process (if it is not running) and sends
    /// it a probe, `{"id": …, "probe": true}`, which it must answer like any
    /// request (`{"id": …}` will do). `hooks check` does this, so a program
    /// that cannot start, a Python module that does not import or a
    /// function that is not there fails the check instead of every call.
    /// Returns how long the answer took; `Err` says what went wrong (also
    /// for a hook that is not persistent).
    pub async fn probe(&self) -> Result<Duration, String> {
        let Some(process) = &self.process else {
            return Err(format!(
                "hook `{}` is not a persistent hook process: there is nothing to probe",
                self.name
            ));
        };
        let cwd = self.working_dir();
        let mut request = serde_json::Map::new();
        request.insert("probe".into(), true.into());
        let started = std::time::Instant::now();
        let answered = process
            .call(request, || self.launch(cwd.as_deref()))
            .await
            .map_err(|CallFailure { failure, stderr }| {
                let (Failure::Process(reason) | Failure::Unreadable(reason)) = failure;
                let stderr = if stderr.is_empty() {
                    String::new()
                } else {
                    format!("; stderr: {stderr}")
                };
                format!("hook process `{}` {reason}{stderr}", self.command_text)
            })?;
        match answered.answer {
            super::persistent::Answer::Output(_) => Ok(started.elapsed()),
            super::persistent::Answer::Error(message) => Err(format!(
                "hook process `{}` answered the probe with an error: {message}",
                self.command_text
            )),
            super::persistent::Answer::Ambiguous(problem) => Err(format!(
                "hook process `{}` answered the probe with what cannot be read: {problem}",
                self.command_text
            )),
        }
    }

    /// Who is deciding, for the protocol's messages.
    fn subject(&self) -> Subject<'_> {
        Subject {
            hook: &self.name,
            command: &self.command_text,
            event: self.spec.event,
            event_name: self.spec.event_name(),
            timeout: self.spec.timeout,
            on_error: self.spec.on_error,
        }
    }

    /// What the command's (or the endpoint's) output decides.
    async fn decide(
        &self,
        ctx: &HookContext,
        finished: &process::Finished,
    ) -> Result<HookResult, HookError> {
        let verdict = protocol::interpret(&self.subject(), finished)?;
        self.settle(ctx, verdict).await
    }

    /// A verdict as the hook's result: "ask" goes to the handler.
    async fn settle(&self, ctx: &HookContext, verdict: Verdict) -> Result<HookResult, HookError> {
        match verdict {
            Verdict::Decided(result) => Ok(result),
            Verdict::Ask {
                reason,
                updated_input,
                side_effects,
            } => self.ask(ctx, &reason, updated_input, side_effects).await,
        }
    }

    /// `permissionDecision: "ask"`: the handler decides, on the arguments as
    /// the command rewrote them (if it did).
    async fn ask(
        &self,
        ctx: &HookContext,
        reason: &str,
        updated_input: Option<serde_json::Value>,
        mut side_effects: Vec<String>,
    ) -> Result<HookResult, HookError> {
        let Some(handler) = &self.ask else {
            let mut result = HookResult::block(format!(
                "command hook {} answered \"ask\" ({reason}), but nothing is configured to ask a person; add the approval gate, with an approval channel, to this agent's hooks, or make the command answer \"allow\" or \"deny\"",
                self.name
            ));
            result.prepend_side_effects(side_effects);
            return Ok(result);
        };
        if hooks_runtime::trace::in_dry_run() {
            // As if approved: with the command's rewrite, which the dry run
            // then seals as the approval would.
            let mut result = match updated_input {
                Some(args) => HookResult::allow().with_args(args),
                None => HookResult::allow(),
            };
            side_effects.insert(0, hooks_runtime::trace::WOULD_ASK.to_owned());
            result.prepend_side_effects(side_effects);
            return Ok(result);
        }
        let asked = match &updated_input {
            Some(args) => {
                let mut rewritten = ctx.clone();
                rewritten.tool_args = args.clone();
                handler.ask(&rewritten, reason).await
            }
            None => handler.ask(ctx, reason).await,
        };
        // The command answered; asking is the gate's job. A failure there is
        // a block, whatever this command's own `on_error` says.
        let mut result = match asked {
            Ok(result) => result,
            Err(error) => HookResult::block(format!(
                "command hook {} asked for approval, and asking failed: {error}",
                self.name
            )),
        };
        if !result.is_blocked()
            && result.modified_args().is_none()
            && let Some(args) = updated_input
        {
            result.default_args(args);
            side_effects.push("rewrote the tool input".into());
        }
        side_effects.push(format!("asked for approval: {reason}"));
        result.prepend_side_effects(side_effects);
        Ok(result)
    }
}

impl fmt::Debug for CommandHook {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CommandHook")
            .field("name", &self.name)
            .field("spec", &self.spec)
            .field("ask_handler", &self.ask.is_some())
            .finish()
    }
}

impl Hook for CommandHook {
    fn name(&self) -> &str {
        &self.name
    }

    fn priority(&self) -> i32 {
        self.spec.priority
    }

    /// The matcher (over the tool name; over `startup` at session start) and
    /// the `when` expression must both match, when present.
    fn should_trigger(&self, ctx: &HookContext) -> bool {
        let subject = match self.spec.event {
            HookPoint::SessionStart => "startup",
            HookPoint::PreToolUse | HookPoint::PostToolUse => ctx.tool_name.as_str(),
        };
        // A `PostToolUseFailure` hook runs after a failed tool only.
        if self.spec.tool_failure
            && !matches!(ctx.tool_outcome, Some(hooks_runtime::ToolOutcome::Error(_)))
        {
            return false;
        }
        self.matcher
            .as_ref()
            .is_none_or(|matcher| matcher.is_match(subject))
            && self.when.as_ref().is_none_or(|when| when.matches(ctx))
    }

    fn execute<'a>(&'a self, ctx: &'a HookContext) -> HookOutcome<'a> {
        HookOutcome::pending(self.run(ctx))
    }

    /// The spec's timeout plus a margin: the command is killed at the spec's
    /// timeout, and the margin covers killing and reaping it.
    /// With an approval handler, the handler's longest wait is added: a
    /// person deciding must not run into this hook's timeout.
    fn timeout(&self) -> Duration {
        let ask = self
            .ask
            .as_ref()
            .map_or(Duration::ZERO, |ask| ask.max_wait());
        self.spec
            .timeout
            .saturating_add(KILL_MARGIN)
            .saturating_add(ask)
    }

    fn on_error(&self) -> ErrorPolicy {
        self.spec.on_error
    }

    /// The spec's timeout, with the kill margin and (when the command may
    /// answer "ask") the approval handler's longest wait written out.
    fn timeout_note(&self) -> Option<TimeoutNote> {
        let mut why = match self.spec.command {
            CommandLine::Http(_) => format!(
                "+{} past the request's own timeout",
                ConfigDuration::from(KILL_MARGIN)
            ),
            _ => format!(
                "+{} to kill and reap the command",
                ConfigDuration::from(KILL_MARGIN)
            ),
        };
        if let Some(ask) = &self.ask {
            why.push_str(&format!(
                ", +{} while a person decides if the command asks for approval (the approval \
                 gate's wait plus delivery)",
                ConfigDuration::from(ask.max_wait())
            ));
        }
        Some(TimeoutNote {
            configured: self.spec.timeout,
            why,
        })
    }

    fn when_source(&self) -> Option<&str> {
        self.when_source.as_deref()
    }

    fn description(&self) -> Option<&str> {
        Some(&self.description)
    }

    fn dry_run(&self) -> DryRun {
        DryRun::External
    }
}

impl PreToolUseHook for CommandHook {}
impl PostToolUseHook for CommandHook {}
impl SessionStartHook for CommandHook {}

#[cfg(test)]
mod tests {
    use super::*;
    use hooks_runtime::registry::HookRegistry;
    use serde_json::json;

    /// The type-level doc example, minus running it.
    #[test]
    fn builds_into_a_registry() -> Result<(), Box<dyn std::error::Error>> {
        let spec = CommandSpec::from_value(&json!({
            "event": "PreToolUse",
            "matcher": "Bash",
            "command": ["./hooks/check-bash.sh"],
            "timeout": "10s",
        }))?;
        let hook = CommandHook::new(spec, None)?;
        assert_eq!(hook.name(), "command:PreToolUse:./hooks/check-bash.sh");
        assert_eq!(
            hook.description(),
            Some("runs `./hooks/check-bash.sh` (command hook, PreToolUse)")
        );
        assert_eq!(hook.timeout(), Duration::from_secs(14));
        let registry = HookRegistry::builder()
            .hook(hook.into_registered())
            .build()?;
        assert_eq!(registry.pre_tool_use().len(), 1);
        Ok(())
    }

    #[tokio::test]
    async fn a_hook_registered_at_the_wrong_point_fails() {
        let spec = CommandSpec::new(HookPoint::PostToolUse, CommandLine::exec(["true"]));
        let hook = CommandHook::new(spec, None).unwrap();
        let error = hook
            .execute(&HookContext::tool_call("x", json!({})))
            .await
            .unwrap_err();
        assert!(
            error.message().contains("declared for PostToolUse"),
            "{error}"
        );
    }
}
