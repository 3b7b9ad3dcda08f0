//! The hook output Codex CLI reads, for `hooks hook-client --client codex`.
//!
//! Codex sends the same hook input as Claude Code (plus `turn_id` and
//! `model`), so the server answers it unchanged; the client puts the answer
//! into the few shapes Codex honours (checked against Codex 0.171.0):
//!
//! - Codex refuses a whole answer that carries one field it does not know
//!   (a block then does nothing), so only its own fields are printed.
//! - A result is replaced only by `decision: "block"` with a non-empty
//!   `reason`, which the model then reads as the whole result; Codex reads
//!   no `updatedToolOutput`. A rewrite and a withheld result are both that.
//! - Every failure of a hook (another exit code, unreadable output, a
//!   timeout) lets the call go ahead, so a failure here is exit 2 with the
//!   reason on stderr, which blocks a pre event and, on a post event, is
//!   what the model reads in place of the result.
//! - A shell command (`Bash`) the hooks let through runs under `hooks
//!   run-buffered` (see [`command`]): Codex's post event then sees all the
//!   output the model will read, which it does not for a command that
//!   outlives its wait. The post event's input is read back to the
//!   model's own command before the server sees it.
//! - No shell command runs while Codex keeps a shell snapshot for the
//!   session (see [`snapshot`]): code in it runs before the command,
//!   outside the hooks.

mod command;
pub(crate) mod run;
pub(crate) mod snapshot;

use serde_json::{Map, Value, json};

use super::client::ClientAnswer;
use super::input::{self, Event};
use crate::output::{OutputForm, ToolOutput};

/// `answer` (the server's, or a refusal: exit 2 with the reason) in
/// Codex's terms, for the hook `input` it answers.
pub(super) fn answer(input: &[u8], answer: ClientAnswer) -> ClientAnswer {
    let event = event_of(input);
    if answer.code != 0 {
        let reason = non_empty(&answer.stderr, "the hook server refused the call");
        return match event {
            // Exit 2 cannot stop a session; `continue: false` does.
            Some(Event::SessionStart) => printed(json!({"continue": false, "stopReason": reason})),
            _ => blocked(reason),
        };
    }
    let Ok(Value::Object(server)) = serde_json::from_str::<Value>(&answer.stdout) else {
        return blocked(
            "hooks hook-client: the hook server's answer is not a JSON object; the call is blocked"
                .to_owned(),
        );
    };
    let specific = server.get("hookSpecificOutput").and_then(Value::as_object);
    let field = |key: &str| specific.and_then(|s| s.get(key));
    match event {
        Some(Event::PreToolUse) => buffered(input, pre(&server, specific)),
        Some(Event::PostToolUse | Event::PostToolUseFailure) => {
            if server.get("decision").and_then(Value::as_str) == Some("block") {
                let reason = server
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return replaced(non_empty(reason, "the hooks withheld the result"));
            }
            match field("updatedToolOutput").or_else(|| field("updatedMCPToolOutput")) {
                Some(output) => replaced(non_empty(
                    &text_of(output),
                    "(the hooks replaced the result with nothing)",
                )),
                None => ClientAnswer::quiet(),
            }
        }
        Some(Event::SessionStart) => {
            if server.get("continue") == Some(&Value::Bool(false)) {
                let reason = server
                    .get("stopReason")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                return printed(json!({
                    "continue": false,
                    "stopReason": non_empty(reason, "a session-start hook stopped the session"),
                }));
            }
            match field("additionalContext").and_then(Value::as_str) {
                Some(context) if !context.is_empty() => printed(json!({"hookSpecificOutput": {
                    "hookEventName": "SessionStart",
                    "additionalContext": context,
                }})),
                _ => ClientAnswer::quiet(),
            }
        }
        None => blocked(
            "hooks hook-client: the hook input names no event this server answers; the call \
             is blocked"
                .to_owned(),
        ),
    }
}

/// A pre event: a denial or a block is exit 2 with the reason (the shape
/// Codex reads most simply); an allow with rewritten input is printed in
/// Codex's fields only; anything else lets Codex go on.
fn pre(server: &Map<String, Value>, specific: Option<&Map<String, Value>>) -> ClientAnswer {
    let field = |key: &str| specific.and_then(|s| s.get(key));
    let decision = field("permissionDecision").and_then(Value::as_str);
    if decision == Some("deny") {
        let reason = field("permissionDecisionReason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return blocked(non_empty(reason, "denied by the hook server"));
    }
    if server.get("decision").and_then(Value::as_str) == Some("block") {
        let reason = server
            .get("reason")
            .and_then(Value::as_str)
            .unwrap_or_default();
        return blocked(non_empty(reason, "blocked by the hook server"));
    }
    match (decision, field("updatedInput")) {
        (Some("allow"), Some(input)) => printed(json!({"hookSpecificOutput": {
            "hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": input,
        }})),
        // Codex reads an `allow` without new input as a failed hook (and
        // goes on): say nothing instead.
        _ => ClientAnswer::quiet(),
    }
}

/// The tool whose shell commands run under `hooks run-buffered`.
const SHELL_TOOL: &str = "Bash";

/// The hook input to send to the server: for the post event of a shell
/// command that [`answer`] put under `hooks run-buffered`, the model's own
/// command again (what the pre event saw). Any other input as it is.
pub(super) fn request(input: Vec<u8>) -> Vec<u8> {
    let Ok(Value::Object(mut parsed)) = serde_json::from_slice::<Value>(&input) else {
        return input;
    };
    let post = matches!(
        parsed
            .get("hook_event_name")
            .and_then(Value::as_str)
            .and_then(Event::from_name),
        Some(Event::PostToolUse | Event::PostToolUseFailure)
    );
    if !post || parsed.get("tool_name").and_then(Value::as_str) != Some(SHELL_TOOL) {
        return input;
    }
    let Some(program) = this_program() else {
        return input;
    };
    let command = parsed
        .get("tool_input")
        .and_then(|tool_input| tool_input.get("command"))
        .and_then(Value::as_str)
        .and_then(|text| command::unwrapped(&program, text));
    match (command, parsed.get_mut("tool_input")) {
        (Some(command), Some(Value::Object(tool_input))) => {
            tool_input.insert("command".to_owned(), Value::String(command));
            serde_json::to_vec(&Value::Object(parsed)).unwrap_or(input)
        }
        _ => input,
    }
}

/// A pre event's `answer` with a shell command put under `hooks
/// run-buffered`, when the answer lets it run.
fn buffered(input: &[u8], answer: ClientAnswer) -> ClientAnswer {
    if answer.code != 0 || cfg!(not(unix)) {
        return answer;
    }
    let Ok(Value::Object(parsed)) = serde_json::from_slice::<Value>(input) else {
        return answer;
    };
    if parsed.get("tool_name").and_then(Value::as_str) != Some(SHELL_TOOL) {
        return answer;
    }
    // Code Codex would run before the command, outside the hooks.
    let session = parsed.get("session_id").and_then(Value::as_str);
    if let Some(found) =
        snapshot::codex_home().and_then(|home| snapshot::of_session(&home, session))
    {
        return blocked(snapshot::refusal(&found));
    }
    // The input the call runs with: the server's rewrite, or the model's.
    let rewritten = serde_json::from_str::<Value>(&answer.stdout)
        .ok()
        .and_then(|printed| printed.pointer("/hookSpecificOutput/updatedInput").cloned());
    let Some(Value::Object(mut tool_input)) =
        rewritten.or_else(|| parsed.get("tool_input").cloned())
    else {
        return answer;
    };
    let Some(command) = tool_input.get("command").and_then(Value::as_str) else {
        return answer;
    };
    if command::is_patch_heredoc(command) {
        return answer;
    }
    let Some(program) = this_program() else {
        return blocked(
            "hooks hook-client: cannot tell its own path, to run the command under `hooks \
             run-buffered`; the call is blocked"
                .to_owned(),
        );
    };
    let wrapped = command::wrapped(&program, command);
    tool_input.insert("command".to_owned(), Value::String(wrapped));
    printed(json!({"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "permissionDecision": "allow",
        "updatedInput": tool_input,
    }}))
}

/// The path of this `hooks` binary, which Codex runs the command under.
fn this_program() -> Option<String> {
    std::env::current_exe()
        .ok()
        .and_then(|path| path.to_str().map(str::to_owned))
}

/// The event of `input`, read in full or picked out of its start.
fn event_of(input: &[u8]) -> Option<Event> {
    let parsed = serde_json::from_slice::<Value>(input).ok();
    match parsed
        .as_ref()
        .and_then(|input| input.get("hook_event_name"))
        .and_then(Value::as_str)
    {
        Some(name) => Event::from_name(name),
        None => input::sniff_event(input),
    }
}

/// The text the model reads of a rewritten result: a string as it is, an
/// MCP result or content list as its text, anything else as its leaves.
fn text_of(output: &Value) -> String {
    match output {
        Value::String(text) => text.clone(),
        Value::Array(_) => ToolOutput::new(output, OutputForm::McpResult).text(),
        Value::Object(result) if result.get("content").is_some_and(Value::is_array) => {
            ToolOutput::new(output, OutputForm::McpResult).text()
        }
        other => ToolOutput::new(other, OutputForm::Leaves).text(),
    }
}

fn non_empty(text: &str, fallback: &str) -> String {
    if text.trim().is_empty() {
        fallback.to_owned()
    } else {
        text.to_owned()
    }
}

/// The result replaced by `text`: what the model reads.
fn replaced(text: String) -> ClientAnswer {
    printed(json!({"decision": "block", "reason": text}))
}

fn blocked(reason: String) -> ClientAnswer {
    ClientAnswer {
        code: 2,
        stdout: String::new(),
        stderr: reason,
    }
}

fn printed(answer: Value) -> ClientAnswer {
    ClientAnswer {
        code: 0,
        stdout: answer.to_string(),
        stderr: String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(event: &str, tool: &str) -> Vec<u8> {
        json!({"hook_event_name": event, "session_id": "s", "turn_id": "t", "model": "m",
               "tool_name": tool, "tool_input": {"command": "ls"}, "tool_use_id": "call_1"})
        .to_string()
        .into_bytes()
    }

    fn server(answer: Value) -> ClientAnswer {
        printed(answer)
    }

    #[test]
    fn a_denial_blocks_with_its_reason_and_a_failure_blocks_too() {
        let pre = input("PreToolUse", "Bash");
        let denied = answer(
            &pre,
            server(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no rm"}})),
        );
        assert_eq!((denied.code, denied.stderr.as_str()), (2, "no rm"));
        let failed = answer(&pre, ClientAnswer::blocked("cannot reach".to_owned()));
        assert_eq!((failed.code, failed.stderr.as_str()), (2, "cannot reach"));
        let post = input("PostToolUse", "Bash");
        let failed = answer(&post, ClientAnswer::blocked(String::new()));
        assert_eq!(failed.code, 2, "a post failure replaces the result too");
        assert!(!failed.stderr.is_empty(), "Codex needs a reason to block");
    }

    #[test]
    fn only_codexs_own_fields_are_printed() {
        let pre = input("PreToolUse", "mcp__files__write");
        let allowed = answer(
            &pre,
            server(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "allow", "permissionDecisionReason": "ok",
                "updatedInput": {"command": "ls -l"}}, "extra": 1})),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&allowed.stdout).unwrap(),
            json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "allow", "updatedInput": {"command": "ls -l"}}})
        );
        let plain_allow = answer(
            &pre,
            server(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "allow", "permissionDecisionReason": "approved"}})),
        );
        assert_eq!((plain_allow.code, plain_allow.stdout.as_str()), (0, ""));
    }

    /// The command Codex runs for `command`.
    fn under_run_buffered(command: &str) -> Value {
        json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
            "permissionDecision": "allow",
            "updatedInput": {"command": command::wrapped(&this_program().unwrap(), command)}}})
    }

    #[test]
    fn a_shell_command_let_through_runs_under_run_buffered() {
        let pre = input("PreToolUse", "Bash");
        let quiet = answer(&pre, server(json!({})));
        assert_eq!(
            serde_json::from_str::<Value>(&quiet.stdout).unwrap(),
            under_run_buffered("ls")
        );
        let rewritten = answer(
            &pre,
            server(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "allow", "updatedInput": {"command": "ls -l"}}})),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&rewritten.stdout).unwrap(),
            under_run_buffered("ls -l")
        );
        let denied = answer(
            &pre,
            server(json!({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                "permissionDecision": "deny", "permissionDecisionReason": "no"}})),
        );
        assert_eq!((denied.code, denied.stdout.as_str()), (2, ""));
    }

    #[test]
    fn the_server_sees_the_models_own_command_at_the_post_event() {
        let program = this_program().unwrap();
        let post = |command: &str| {
            json!({"hook_event_name": "PostToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command}, "tool_response": "out"})
        };
        let wrapped = post(&command::wrapped(&program, "cat a; sleep 3"));
        let sent: Value =
            serde_json::from_slice(&request(wrapped.to_string().into_bytes())).unwrap();
        assert_eq!(sent, post("cat a; sleep 3"));
        // Anything else goes as it came: the server then finds the input
        // changed since the pre event and withholds the result.
        for other in [
            post("cat a"),
            post(&format!("{}; cat b", command::wrapped(&program, "ls"))),
            json!({"hook_event_name": "PreToolUse", "tool_name": "Bash",
                   "tool_input": {"command": command::wrapped(&program, "ls")}}),
        ] {
            let bytes = other.to_string().into_bytes();
            assert_eq!(request(bytes.clone()), bytes);
        }
    }

    #[test]
    fn a_rewrite_or_a_withheld_result_is_the_whole_result() {
        let post = input("PostToolUse", "Bash");
        let withheld = answer(
            &post,
            server(
                json!({"decision": "block", "reason": "Result withheld by hook `k`: key",
                "continue": false, "stopReason": "x",
                "hookSpecificOutput": {"hookEventName": "PostToolUse", "updatedToolOutput": "x"}}),
            ),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&withheld.stdout).unwrap(),
            json!({"decision": "block", "reason": "Result withheld by hook `k`: key"})
        );
        let mcp = input("PostToolUse", "mcp__files__read");
        let rewritten = answer(
            &mcp,
            server(
                json!({"hookSpecificOutput": {"hookEventName": "PostToolUse",
                "updatedToolOutput": [{"type": "text", "text": "short"}],
                "updatedMCPToolOutput": [{"type": "text", "text": "short"}]}}),
            ),
        );
        assert_eq!(
            serde_json::from_str::<Value>(&rewritten.stdout).unwrap(),
            json!({"decision": "block", "reason": "short"})
        );
        let untouched = answer(&post, server(json!({})));
        assert_eq!((untouched.code, untouched.stdout.as_str()), (0, ""));
    }
}
