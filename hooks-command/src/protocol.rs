//! The Claude Code hook protocol: the JSON a command reads on stdin, and what
//! its exit code, stdout and stderr mean.

use std::path::Path;

use hooks_runtime::config::ConfigDuration;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::output::{HookOutput, PermissionDecision, TopDecision};
use super::persistent::Answer;
use super::process::{COMMAND_OUTPUT_LIMIT, Exit, Finished};
use super::stdout;
use hooks_runtime::HookResult;
use hooks_runtime::{ErrorPolicy, HookError};
use hooks_runtime::{HookContext, HookPoint, ToolOutcome};

/// How much of stderr a failure message quotes.
const STDERR_EXCERPT: usize = 500;

/// How much of a text a side-effect line quotes.
const SIDE_EFFECT_EXCERPT: usize = 200;

/// The one JSON object a command reads on stdin.
///
/// The Claude Code fields (`session_id`, `hook_event_name`, `cwd`,
/// `tool_name`, `tool_input`, `tool_use_id`, `tool_response` for post hooks,
/// `source` for session start) come first, then this project's (`agent_id`,
/// `user_id`, `org_id`, `surface`, `agent_path`, `metadata`).
///
/// A `tool_failure` hook (Claude Code's `PostToolUseFailure`) reads that
/// event's name and the tool's `error` (with `is_interrupt: false`) instead
/// of `tool_response`.
pub(crate) fn input(
    ctx: &HookContext,
    event: HookPoint,
    tool_failure: bool,
    cwd: Option<&Path>,
) -> Map<String, Value> {
    let mut input = Map::new();
    input.insert("session_id".into(), ctx.conversation_id.clone().into());
    let name = if tool_failure {
        super::spec::POST_TOOL_USE_FAILURE
    } else {
        event.event_name()
    };
    input.insert("hook_event_name".into(), name.into());
    input.insert(
        "cwd".into(),
        cwd.map(|dir| dir.to_string_lossy().into_owned())
            .unwrap_or_default()
            .into(),
    );
    match event {
        HookPoint::SessionStart => {
            // Claude Code's session source; sessions here always start afresh.
            input.insert("source".into(), "startup".into());
        }
        HookPoint::PreToolUse | HookPoint::PostToolUse => {
            input.insert("tool_name".into(), ctx.tool_name.clone().into());
            input.insert("tool_input".into(), ctx.tool_args.clone());
            input.insert("tool_use_id".into(), ctx.tool_call_id.clone().into());
        }
    }
    if event == HookPoint::PostToolUse && tool_failure {
        let error = match &ctx.tool_outcome {
            Some(ToolOutcome::Error(message)) => message.clone(),
            _ => String::new(),
        };
        input.insert("error".into(), error.into());
        input.insert("is_interrupt".into(), false.into());
    } else if event == HookPoint::PostToolUse {
        let response = match &ctx.tool_outcome {
            Some(ToolOutcome::Success(value)) => value.clone(),
            Some(ToolOutcome::Error(message)) => {
                let mut error = Map::new();
                error.insert("error".into(), message.clone().into());
                Value::Object(error)
            }
            None => Value::Null,
        };
        input.insert("tool_response".into(), response);
    }
    input.insert("agent_id".into(), ctx.agent_id.clone().into());
    input.insert("user_id".into(), ctx.user_id.clone().into());
    input.insert("org_id".into(), ctx.org_id.clone().into());
    input.insert("surface".into(), ctx.surface.as_str().into());
    input.insert(
        "agent_path".into(),
        Value::Array(ctx.agent_path.iter().cloned().map(Value::from).collect()),
    );
    input.insert("metadata".into(), Value::Object(ctx.metadata.clone()));
    input
}

/// What a command decided, before any approval is asked for.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Verdict {
    /// The hook's result.
    Decided(HookResult),
    /// `permissionDecision: "ask"`: a person must decide.
    Ask {
        /// Why, for the approver.
        reason: String,
        /// Replacement arguments the script gave along with "ask".
        updated_input: Option<Value>,
        /// What the command reported.
        side_effects: Vec<String>,
    },
}

/// Who is being interpreted, for messages.
pub(crate) struct Subject<'a> {
    /// The hook's name.
    pub(crate) hook: &'a str,
    /// The command as written.
    pub(crate) command: &'a str,
    /// The event.
    pub(crate) event: HookPoint,
    /// The event's name as the command read it (`PostToolUseFailure` for a
    /// failure hook).
    pub(crate) event_name: &'static str,
    /// The kill timeout, for the timeout message.
    pub(crate) timeout: std::time::Duration,
    /// The hook's policy on failure; it does not cover stdout that cannot be
    /// read (see [`interpret`]).
    pub(crate) on_error: ErrorPolicy,
}

/// Reads a finished command: exit 0 decides through stdout, exit 2 blocks
/// with stderr, anything else is a failure.
///
/// After exit 0, stdout the runtime cannot read in full — over the cap, not
/// UTF-8, JSON that is invalid or breaks the protocol, plain text that looks
/// like it holds a decision — is a failure for a `fail_closed` hook and a
/// block for a `fail_open` one. The command did decide something, and
/// whether it is readable is often up to the model: a script that quotes an
/// argument in its reason prints more than the cap when the argument is long
/// enough, and invalid JSON when the argument holds a quote. Ignoring such
/// output would let the model turn any fail-open deny or sanitising rewrite
/// into "allow". The same holds for a decision on stderr after exit 0, and
/// for a decision printed before the command failed (see
/// [`decided_then_failed`]). `fail_open` keeps covering a command that
/// crashed, timed out or exited with another code without deciding
/// anything, or could not start. At session start every failure follows the
/// hook's own policy: the model has written nothing yet.
pub(crate) fn interpret(subject: &Subject<'_>, finished: &Finished) -> Result<Verdict, HookError> {
    let command = subject.command;
    let stderr = finished.stderr.text.trim();
    let stderr_note = if stderr.is_empty() {
        String::new()
    } else {
        format!("; stderr: {}", excerpt(stderr, STDERR_EXCERPT))
    };
    if let Some(problem) = &finished.io_error {
        return Err(HookError::new(format!(
            "command `{command}` {problem}{stderr_note}"
        )));
    }
    let failure = match finished.exit {
        Exit::Code(0) => {
            return read_stdout(subject, finished)
                .and_then(|verdict| quiet_stderr(subject, finished).map(|()| verdict))
                .or_else(|problem| unreadable(subject, problem));
        }
        Exit::Code(2) if subject.event == HookPoint::SessionStart => {
            return Err(HookError::new(format!(
                "command `{command}` exited with code 2, which stops the session{stderr_note}"
            )));
        }
        Exit::Code(2) => {
            let reason = if stderr.is_empty() {
                format!("blocked by command hook {} (exit 2)", subject.hook)
            } else {
                stderr.to_owned()
            };
            return Ok(Verdict::Decided(HookResult::block(reason)));
        }
        Exit::Code(code) => format!(
            "command `{command}` exited with code {code}{stderr_note} (a command hook exits 0 to decide or 2 to block; any other exit is a failure)"
        ),
        Exit::Signal(signal) => format!(
            "command `{command}` was killed by signal {signal}{}{stderr_note}",
            signal_name(signal)
                .map(|name| format!(" ({name})"))
                .unwrap_or_default()
        ),
        Exit::TimedOut => format!(
            "command `{command}` timed out after {} and was killed with the processes it started{stderr_note}; make it faster or raise its `timeout`",
            ConfigDuration::from(subject.timeout)
        ),
    };
    decided_then_failed(subject, finished, failure)
}

/// Reads a persistent hook process's answer to one call: its fields are a
/// command's JSON output, read by the same rules; an `error` answer is a
/// failure of the hook; an answer that cannot be read is handled like
/// stdout that cannot be read (see [`interpret`]).
pub(crate) fn interpret_answer(
    subject: &Subject<'_>,
    answer: Answer,
) -> Result<Verdict, HookError> {
    let command = subject.command;
    match answer {
        Answer::Output(fields) => decide(subject, Value::Object(fields), Vec::new()).or_else(
            |problem| {
                unreadable(
                    subject,
                    format!(
                        "hook process `{command}` answered with JSON the hook protocol does not allow: {problem}"
                    ),
                )
            },
        ),
        Answer::Error(message) => Err(HookError::new(format!(
            "hook process `{command}` failed on this call: {}",
            excerpt(&message, STDERR_EXCERPT)
        ))),
        Answer::Ambiguous(problem) => unreadable(
            subject,
            format!("hook process `{command}` answered what cannot be read: {problem}"),
        ),
    }
}

/// A command that failed (another exit code, a signal, a timeout) after
/// printing: if what it printed decides anything but a plain allow — block,
/// deny, ask, `continue: false`, a rewrite — or cannot be read, the call is
/// blocked even for a `fail_open` hook. The model can make a script fail
/// after it printed its deny (`set -e` and a step that breaks on a hostile
/// argument, `jq` refusing an unexpected type, a regex slowed by a huge
/// argument), so the failure must not erase the deny. At session start the
/// model has written nothing yet, and the hook's own policy applies.
fn decided_then_failed(
    subject: &Subject<'_>,
    finished: &Finished,
    failure: String,
) -> Result<Verdict, HookError> {
    if subject.event == HookPoint::SessionStart {
        return Err(HookError::new(failure));
    }
    let printed = match read_stdout(subject, finished) {
        Ok(Verdict::Decided(result))
            if !result.is_blocked()
                && result.modified_args().is_none()
                && result.modified_result().is_none()
                && result.modified_error().is_none() =>
        {
            return Err(HookError::new(failure));
        }
        Ok(Verdict::Decided(result)) if result.is_blocked() => format!(
            "it printed a block first ({})",
            excerpt(result.block_reason().unwrap_or(""), SIDE_EFFECT_EXCERPT)
        ),
        Ok(Verdict::Decided(_)) => "it printed a rewrite first".to_owned(),
        Ok(Verdict::Ask { .. }) => "it printed \"ask\" first".to_owned(),
        Err(problem) => format!("its stdout may hold a decision: {problem}"),
    };
    let message = format!(
        "{failure}; {printed}: blocked even if the hook is fail_open, because a failure after a decision must not undo it"
    );
    match subject.on_error {
        ErrorPolicy::FailClosed => Err(HookError::new(message)),
        ErrorPolicy::FailOpen => Ok(blocked(message, Vec::new())),
    }
}

/// Exit 0 with a decision on stderr, where the protocol does not read one:
/// most likely a script that wrote its JSON to the wrong stream, and
/// reading it as "allow" would drop the decision.
fn quiet_stderr(subject: &Subject<'_>, finished: &Finished) -> Result<(), String> {
    match stdout::hidden_decision(&finished.stderr.text, &DECIDING_KEYS) {
        None => Ok(()),
        Some(found) => Err(format!(
            "command `{}` exited 0 and, on stderr, {found}; print the decision on stdout (the hook protocol reads decisions from stdout only)",
            subject.command
        )),
    }
}

/// The fields that decide something (block, stop, ask, rewrite): one of them
/// in plain text, or on stderr, is a decision the runtime would otherwise
/// miss. Fields that only explain or inform (`reason`, `systemMessage`…)
/// are common words in logs and decide nothing alone.
const DECIDING_KEYS: [&str; 7] = [
    "continue",
    "decision",
    "hookSpecificOutput",
    "permissionDecision",
    "updatedInput",
    "updatedToolOutput",
    "updatedMCPToolOutput",
];

/// Stdout after exit 0 that cannot be read in full: a failure when the hook
/// fails closed, and a block (never an ignored failure) when it fails open.
///
/// At session start the hook's own policy applies: the model has written
/// nothing yet, so it cannot have made the output unreadable.
pub(crate) fn unreadable(subject: &Subject<'_>, problem: String) -> Result<Verdict, HookError> {
    if subject.event == HookPoint::SessionStart {
        return Err(HookError::new(problem));
    }
    match subject.on_error {
        ErrorPolicy::FailClosed => Err(HookError::new(problem)),
        ErrorPolicy::FailOpen => Ok(blocked(
            format!(
                "hook `{}` printed output that cannot be read in full: {problem}; blocked even though it is fail_open, because a decision may be in it",
                subject.hook
            ),
            Vec::new(),
        )),
    }
}

/// Exit 0: JSON on stdout decides; plain text is context at session start
/// and a side effect elsewhere. `Err` is why stdout cannot be read in full:
/// it reached the cap, is not valid UTF-8, is JSON the protocol cannot use,
/// or is plain text that looks like it holds a decision — each could hide a
/// decision, and a guard that cannot read its decision whole must not allow
/// the call.
fn read_stdout(subject: &Subject<'_>, finished: &Finished) -> Result<Verdict, String> {
    let command = subject.command;
    if finished.stdout.truncated {
        return Err(format!(
            "command `{command}` exited 0 but printed more than {COMMAND_OUTPUT_LIMIT} characters on \
             stdout, which is not read: a decision past the cap would go unseen; print one short JSON \
             object or a short text (send progress and diagnostics to stderr)"
        ));
    }
    if !finished.stdout.utf8 {
        return Err(format!(
            "command `{command}` exited 0 but its stdout is not valid UTF-8, so its decision cannot \
             be read; print UTF-8 JSON (without a UTF-16 byte order mark)"
        ));
    }
    let mut side_effects = Vec::new();
    let stderr = finished.stderr.text.trim();
    if !stderr.is_empty() {
        side_effects.push(format!("stderr: {}", excerpt(stderr, SIDE_EFFECT_EXCERPT)));
    }
    if let Some(json) = stdout::json_start(&finished.stdout.text) {
        let value: Value = stdout::parse_json(json).map_err(|error| {
            format!(
                "command `{command}` exited 0 but its stdout starts like a JSON object (`{{\"` or `{{}}`) and is not valid JSON: {error}; print exactly one JSON object (build it with a JSON tool such as jq, not printf), or plain text that does not start with `{{\"`"
            )
        })?;
        return decide(subject, value, side_effects).map_err(|problem| {
            format!("command `{command}` printed JSON the hook protocol does not allow: {problem}")
        });
    }
    let stdout = stdout::plain(&finished.stdout.text);
    // JSON after other output ("checking… {...}") is a decision that would
    // otherwise be missed: refuse it rather than allow the call.
    if let Some(found) = stdout::hidden_decision(stdout, &DECIDING_KEYS) {
        let session = if subject.event == HookPoint::SessionStart {
            " (session context that holds JSON goes in `hookSpecificOutput.additionalContext`)"
        } else {
            ""
        };
        return Err(format!(
            "command `{command}` exited 0 and {found}; print the JSON object alone on stdout (send \
             diagnostics to stderr){session}"
        ));
    }
    let mut result = HookResult::allow();
    if subject.event == HookPoint::SessionStart {
        if !stdout.is_empty() {
            result = result.with_context(stdout);
        }
    } else if !stdout.is_empty() {
        side_effects.push(format!("stdout: {}", excerpt(stdout, SIDE_EFFECT_EXCERPT)));
    }
    result.prepend_side_effects(side_effects);
    Ok(Verdict::Decided(result))
}

/// The JSON output's fields that this event may use, and what they decide.
fn decide(
    subject: &Subject<'_>,
    value: Value,
    mut side_effects: Vec<String>,
) -> Result<Verdict, String> {
    if !value.is_object() {
        return Err("the output must be a JSON object".into());
    }
    // A misspelt, misplaced or mistyped field must not pass for "no
    // decision": the types refuse them (see `output`).
    let output = HookOutput::deserialize(value).map_err(|error| error.to_string())?;
    let event = subject.event;
    let hook = subject.hook;
    if let Some(message) = &output.system_message {
        side_effects.push(format!(
            "systemMessage: {}",
            excerpt(message, SIDE_EFFECT_EXCERPT)
        ));
    }
    let specific = output.hook_specific_output.unwrap_or_default();
    if let Some(name) = &specific.hook_event_name
        && name != subject.event_name
    {
        return Err(format!(
            "`hookSpecificOutput.hookEventName` is {name:?}, but this is a {} hook",
            subject.event_name
        ));
    }
    if let Some((key, _, allowed)) = specific
        .fields()
        .into_iter()
        .find(|&(_, given, allowed)| given && allowed != event)
    {
        return Err(format!(
            "`hookSpecificOutput.{key}` applies to {} hooks only, and this is a {} hook",
            allowed.event_name(),
            event.event_name()
        ));
    }

    // 1. `continue: false` stops everything.
    if output.keep_going == Some(false) {
        let reason = output
            .stop_reason
            .unwrap_or_else(|| format!("stopped by command hook {hook} (continue: false)"));
        return Ok(blocked(reason, side_effects));
    }

    // 2. The top-level decision.
    match output.decision {
        None => {}
        Some(TopDecision::Block) => {
            let reason = output
                .reason
                .unwrap_or_else(|| format!("blocked by command hook {hook}"));
            return Ok(blocked(reason, side_effects));
        }
        Some(TopDecision::Approve) if event == HookPoint::PreToolUse => {}
        Some(TopDecision::Approve) => {
            return Err(format!(
                "`decision` is \"approve\", which only a PreToolUse hook may say; it can only be \"block\" (or be left out) in a {} hook",
                event.event_name()
            ));
        }
    }

    // 3. The permission decision (pre only, checked above).
    let reason = specific.permission_decision_reason;
    let ask = match specific.permission_decision {
        None | Some(PermissionDecision::Allow) => false,
        Some(PermissionDecision::Deny) => {
            let reason = reason.unwrap_or_else(|| format!("denied by command hook {hook}"));
            return Ok(blocked(reason, side_effects));
        }
        Some(PermissionDecision::Ask) => true,
    };

    // 4. Rewrites and context.
    let updated_input = specific.updated_input.map(Value::Object);
    let updated_output = match (
        specific.updated_tool_output,
        specific.updated_mcp_tool_output,
    ) {
        (Some(_), Some(_)) => {
            return Err(
                "give either `updatedToolOutput` or `updatedMCPToolOutput` in `hookSpecificOutput`, not both"
                    .into(),
            );
        }
        (Some(value), None) | (None, Some(value)) => Some(value),
        (None, None) => None,
    };
    let context = specific.additional_context;
    if let Some(context) = &context
        && event != HookPoint::SessionStart
    {
        side_effects.push(format!(
            "additionalContext: {}",
            excerpt(context, SIDE_EFFECT_EXCERPT)
        ));
    }

    if ask {
        return Ok(Verdict::Ask {
            reason: reason.unwrap_or_else(|| format!("command hook {hook} asks for approval")),
            updated_input,
            side_effects,
        });
    }
    let mut result = HookResult::allow();
    if let Some(args) = updated_input {
        result = result.with_args(args);
        side_effects.push("rewrote the tool input".into());
    }
    if let Some(output) = updated_output {
        result = result.with_result(output);
        side_effects.push("rewrote the tool output".into());
    }
    if event == HookPoint::SessionStart
        && let Some(context) = context.filter(|context| !context.is_empty())
    {
        result = result.with_context(context);
    }
    result.prepend_side_effects(side_effects);
    Ok(Verdict::Decided(result))
}

fn blocked(reason: String, side_effects: Vec<String>) -> Verdict {
    let mut result = HookResult::block(reason);
    result.prepend_side_effects(side_effects);
    Verdict::Decided(result)
}

/// The first `limit` characters, with `…` when cut.
pub(crate) fn excerpt(text: &str, limit: usize) -> String {
    match text.char_indices().nth(limit) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

fn signal_name(signal: i32) -> Option<&'static str> {
    Some(match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Captured;
    use serde_json::json;
    use std::time::Duration;

    fn finished(code: i32, stdout: &str, stderr: &str) -> Finished {
        Finished {
            exit: Exit::Code(code),
            stdout: Captured {
                text: stdout.into(),
                ..Captured::default()
            },
            stderr: Captured {
                text: stderr.into(),
                ..Captured::default()
            },
            io_error: None,
        }
    }

    fn run(event: HookPoint, code: i32, stdout: &str, stderr: &str) -> Result<Verdict, HookError> {
        let subject = Subject {
            hook: "h",
            command: "./h.sh",
            event,
            event_name: event.event_name(),
            timeout: Duration::from_secs(3),
            on_error: ErrorPolicy::FailClosed,
        };
        interpret(&subject, &finished(code, stdout, stderr))
    }

    fn result(verdict: Result<Verdict, HookError>) -> HookResult {
        match verdict {
            Ok(Verdict::Decided(result)) => result,
            other => panic!("expected a decision, got {other:?}"),
        }
    }

    const PRE: HookPoint = HookPoint::PreToolUse;
    const POST: HookPoint = HookPoint::PostToolUse;
    const START: HookPoint = HookPoint::SessionStart;

    #[test]
    fn exit_codes() {
        assert!(!result(run(PRE, 0, "", "")).is_blocked());
        assert_eq!(result(run(PRE, 2, "", " no \n")).block_reason(), Some("no"));
        assert_eq!(
            result(run(POST, 2, "", "")).block_reason(),
            Some("blocked by command hook h (exit 2)")
        );
        let error = run(START, 2, "", "stop").unwrap_err().to_string();
        assert!(
            error.contains("stops the session") && error.contains("stop"),
            "{error}"
        );
        let error = run(PRE, 1, "", &"e".repeat(900)).unwrap_err().to_string();
        assert!(error.contains("`./h.sh` exited with code 1"), "{error}");
        assert!(
            error.contains(&format!("{}…", "e".repeat(500))) && !error.contains(&"e".repeat(501))
        );
        let timed_out = Finished {
            exit: Exit::TimedOut,
            ..finished(0, "", "")
        };
        let subject = Subject {
            hook: "h",
            command: "./h.sh",
            event: PRE,
            event_name: PRE.event_name(),
            timeout: Duration::from_secs(3),
            on_error: ErrorPolicy::FailClosed,
        };
        let error = interpret(&subject, &timed_out).unwrap_err().to_string();
        assert!(error.contains("timed out after 3s"), "{error}");
        let killed = Finished {
            exit: Exit::Signal(libc::SIGSEGV),
            ..finished(0, "", "")
        };
        let error = interpret(&subject, &killed).unwrap_err().to_string();
        assert!(error.contains("signal 11 (SIGSEGV)"), "{error}");
    }

    #[test]
    fn plain_stdout() {
        let pre = result(run(PRE, 0, "checked\n", ""));
        assert!(!pre.is_blocked() && pre.additional_context().is_none());
        assert_eq!(pre.side_effects(), ["stdout: checked"]);
        let start = result(run(START, 0, "\n be careful \n", ""));
        assert_eq!(start.additional_context(), Some("be careful"));
        let long = result(run(PRE, 0, &"x".repeat(300), ""));
        assert_eq!(
            long.side_effects()[0].chars().count(),
            "stdout: ".len() + 200 + 1
        );
    }

    #[test]
    fn json_decisions() {
        let deny = json!({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny", "permissionDecisionReason": "nope"}});
        assert_eq!(
            result(run(PRE, 0, &deny.to_string(), "")).block_reason(),
            Some("nope")
        );
        let allow = json!({"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}});
        assert_eq!(
            result(run(PRE, 0, &allow.to_string(), ""))
                .modified_args()
                .cloned(),
            Some(json!({"a": 1}))
        );
        let ask = json!({"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "big", "updatedInput": {"a": 2}}});
        assert_eq!(
            run(PRE, 0, &ask.to_string(), "").unwrap(),
            Verdict::Ask {
                reason: "big".into(),
                updated_input: Some(json!({"a": 2})),
                side_effects: vec![]
            }
        );
        let stop = json!({"continue": false, "stopReason": "halt", "decision": "approve"});
        assert_eq!(
            result(run(PRE, 0, &stop.to_string(), "")).block_reason(),
            Some("halt")
        );
        let block = json!({"decision": "block", "reason": "pii"});
        assert_eq!(
            result(run(POST, 0, &block.to_string(), "")).block_reason(),
            Some("pii")
        );
        let rewrite = json!({"hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": "redacted"}});
        assert_eq!(
            result(run(POST, 0, &rewrite.to_string(), ""))
                .modified_result()
                .cloned(),
            Some(json!("redacted"))
        );
        let context = json!({"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "ctx"}});
        assert_eq!(
            result(run(START, 0, &context.to_string(), "")).additional_context(),
            Some("ctx")
        );
        let pre_context =
            json!({"hookSpecificOutput": {"additionalContext": "note"}, "systemMessage": "hi"});
        let pre = result(run(PRE, 0, &pre_context.to_string(), ""));
        assert!(!pre.is_blocked() && pre.additional_context().is_none());
        assert_eq!(
            pre.side_effects(),
            ["systemMessage: hi", "additionalContext: note"]
        );
    }

    #[test]
    fn bad_json_is_a_failure() {
        for (event, stdout, expected) in [
            (PRE, "{\"not json", "not valid JSON"),
            (PRE, "{} {}", "not valid JSON"),
            (PRE, r#"{"decision": "allow"}"#, "\"block\""),
            (
                PRE,
                r#"{"continue": "no"}"#,
                "`continue` must be true or false",
            ),
            (
                PRE,
                r#"{"hookSpecificOutput": {"permissionDecision": "maybe"}}"#,
                "\"allow\", \"deny\" or \"ask\"",
            ),
            (
                PRE,
                r#"{"hookSpecificOutput": {"updatedInput": [1]}}"#,
                "must be a JSON object",
            ),
            (
                PRE,
                r#"{"hookSpecificOutput": {"hookEventName": "PostToolUse"}}"#,
                "this is a PreToolUse hook",
            ),
            (
                POST,
                r#"{"hookSpecificOutput": {"permissionDecision": "deny"}}"#,
                "applies to PreToolUse hooks only",
            ),
            (
                PRE,
                r#"{"hookSpecificOutput": {"updatedToolOutput": 1}}"#,
                "applies to PostToolUse hooks only",
            ),
            (PRE, r#"{"hookSpecificOutput": 3}"#, "must be an object"),
            (
                PRE,
                r#"{"reason": 3, "decision": "block"}"#,
                "`reason` must be a string",
            ),
        ] {
            let error = run(event, 0, stdout, "").unwrap_err().to_string();
            assert!(error.contains(expected), "{stdout}: {error}");
        }
    }

    #[test]
    fn typed_output_fails_closed_on_every_misfit() {
        for (event, stdout, expected) in [
            (
                POST,
                r#"{"decision": "approve"}"#,
                "only a PreToolUse hook may say",
            ),
            (
                PRE,
                r#"{"suppressOutput": "yes"}"#,
                "`suppressOutput` must be true or false",
            ),
            (
                PRE,
                r#"{"hookSpecificOutput": {"permissionDecison": "deny"}}"#,
                "in `hookSpecificOutput`: unknown field `permissionDecison`",
            ),
            (PRE, r#"{"permissionDecision": "deny"}"#, "unknown field"),
            (
                POST,
                r#"{"hookSpecificOutput": {"updatedToolOutput": 1, "updatedMCPToolOutput": 2}}"#,
                "not both",
            ),
            (
                START,
                r#"{"hookSpecificOutput": {"updatedInput": {"a": 1}}}"#,
                "applies to PreToolUse hooks only, and this is a SessionStart hook",
            ),
        ] {
            let error = run(event, 0, stdout, "").unwrap_err().to_string();
            assert!(
                error.contains("printed JSON the hook protocol does not allow")
                    && error.contains(expected),
                "{stdout}: {error}"
            );
        }
        // A fail-open hook blocks on them too: the output may hold a decision.
        let subject = Subject {
            hook: "h",
            command: "./h.sh",
            event: PRE,
            event_name: PRE.event_name(),
            timeout: Duration::from_secs(3),
            on_error: ErrorPolicy::FailOpen,
        };
        let verdict = interpret(
            &subject,
            &finished(
                0,
                r#"{"hookSpecificOutput": {"permissionDecision": "DENY"}}"#,
                "",
            ),
        );
        let reason = result(verdict).block_reason().unwrap().to_owned();
        assert!(
            reason.contains("\"allow\", \"deny\" or \"ask\""),
            "{reason}"
        );
        // A rewrite to `null` is a rewrite, not an absent field.
        let nulled = result(run(
            POST,
            0,
            r#"{"hookSpecificOutput": {"updatedToolOutput": null}}"#,
            "",
        ));
        assert_eq!(nulled.modified_result(), Some(&Value::Null));
    }

    #[test]
    fn stdout_that_cannot_be_read_whole_is_a_failure() {
        let subject = Subject {
            hook: "h",
            command: "./h.sh",
            event: START,
            event_name: START.event_name(),
            timeout: Duration::from_secs(3),
            on_error: ErrorPolicy::FailClosed,
        };
        let mut cut = finished(0, "harmless", "");
        cut.stdout.truncated = true;
        let error = interpret(&subject, &cut).unwrap_err().to_string();
        assert!(error.contains("more than 10000 characters"), "{error}");
        let mut garbled = finished(0, "\u{FFFD}\u{FFFD}{}", "");
        garbled.stdout.utf8 = false;
        let error = interpret(&subject, &garbled).unwrap_err().to_string();
        assert!(error.contains("not valid UTF-8"), "{error}");
        let error = run(START, 0, "Rules:\n{\"continue\": false}", "")
            .unwrap_err()
            .to_string();
        assert!(error.contains("additionalContext"), "{error}");
        let deny = r#"{"decision": "block", "reason": "r"}"#;
        let bom = format!("\u{FEFF}\n {deny}\n");
        assert_eq!(result(run(PRE, 0, &bom, "")).block_reason(), Some("r"));
    }

    #[test]
    fn the_input_carries_the_call() {
        let ctx = HookContext::tool_call("sql_exec", json!({"q": "x"}))
            .with_conversation("conv")
            .with_tool_call_id("call")
            .with_agent_path(["root", "child"]);
        let pre = input(&ctx, PRE, false, Some(Path::new("/work")));
        assert_eq!(pre["session_id"], "conv");
        assert_eq!(pre["hook_event_name"], "PreToolUse");
        assert_eq!(pre["cwd"], "/work");
        assert_eq!(pre["tool_input"], json!({"q": "x"}));
        assert_eq!(pre["tool_use_id"], "call");
        assert_eq!(pre["agent_path"], json!(["root", "child"]));
        assert!(pre.get("tool_response").is_none());
        let mut failed = ctx.clone();
        failed.tool_outcome = Some(ToolOutcome::Error("boom".into()));
        assert_eq!(
            input(&failed, POST, false, None)["tool_response"],
            json!({"error": "boom"})
        );
        let start = input(&HookContext::session(), START, false, None);
        assert_eq!(start["source"], "startup");
        assert!(start.get("tool_input").is_none());
    }
}
