//! `hooks hook-client`: a command hook that forwards its input to a hook
//! server, for agents that only run command hooks. It fails closed: a server
//! that cannot be reached, answers with an error or answers something
//! unreadable blocks the call (exit 2), unlike a client's own default for a
//! failed hook.
//!
#![doc = include_str!("../../docs/codex.md")]

use std::time::Duration;

use serde_json::Value;

use super::answer;
use super::input::{self, Event};

/// The largest answer read from the server (1 MiB).
const MAX_ANSWER: usize = 1 << 20;

/// What the command prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientAnswer {
    /// 0: the server's answer is on stdout; 2: blocked, the reason on stderr.
    pub code: u8,
    /// The server's answer, for the client to read.
    pub stdout: String,
    /// Why the call is blocked.
    pub stderr: String,
}

impl ClientAnswer {
    /// Nothing printed, exit 0: the client goes on as its own rules say.
    pub(super) fn quiet() -> Self {
        ClientAnswer {
            code: 0,
            stdout: String::new(),
            stderr: String::new(),
        }
    }

    pub(super) fn blocked(reason: impl Into<String>) -> Self {
        ClientAnswer {
            code: 2,
            stdout: String::new(),
            stderr: reason.into(),
        }
    }
}

/// The client a hook command answers: the shapes of its hook output.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum HookClient {
    /// Claude Code (and clients that read its hook output).
    #[default]
    ClaudeCode,
    /// OpenAI's Codex CLI: see [`forward_to`].
    Codex,
}

/// [`forward`] for `client`. For Codex, the server's answer is put into
/// the shapes Codex honours: a denial (or any failure) exits 2 with the
/// reason on stderr, which blocks a pre event and is what the model reads
/// in place of a post event's result; a rewritten or withheld result is
/// `decision: "block"` with the text the model reads as its `reason`;
/// nothing else is printed, since Codex ignores a whole answer that holds
/// a field it does not know.
pub async fn forward_to(
    client: HookClient,
    url: &str,
    token: Option<&str>,
    input: Vec<u8>,
    timeout: Duration,
) -> ClientAnswer {
    match client {
        HookClient::ClaudeCode => forward(url, token, input, timeout).await,
        HookClient::Codex => {
            let sent = super::codex::request(input.clone());
            let answer = send(url, token, &sent, timeout).await;
            super::codex::answer(&input, answer)
        }
    }
}

/// [`refused`] for `client`.
pub fn refused_to(client: HookClient, input: &[u8], reason: String) -> ClientAnswer {
    match client {
        HookClient::ClaudeCode => refused(input, reason),
        HookClient::Codex => super::codex::answer(input, ClientAnswer::blocked(reason)),
    }
}

/// Posts `input` (the hook input read on stdin) to the hook server at `url`
/// with `token`, waiting at most `timeout`, and says what to print.
///
/// A pre event the server denies or blocks exits 2 with the reason on
/// stderr. Every other answer is printed for the client to read, exit 0:
/// a post event's withheld result is replaced through the printed JSON
/// (exit 2 there would only show the reason beside the result), and a
/// session's `continue: false` stops the session only when printed. A
/// server that cannot be reached, answers non-2xx, or answers what is not a
/// JSON object blocks: a post event (when the input says so) is answered
/// with the reason in place of its result, in the tool's shape, exit 0;
/// anything else exits 2.
pub async fn forward(
    url: &str,
    token: Option<&str>,
    input: Vec<u8>,
    timeout: Duration,
) -> ClientAnswer {
    let answer = send(url, token, &input, timeout).await;
    if answer.code == 0 {
        return answer;
    }
    withheld_if_post(&input, answer)
}

/// The answer to a hook input that cannot be forwarded, or whose answer
/// cannot be used, for `reason`: see [`forward`]. `input` may be only the
/// start of the input (one over the size cap); its event and tool are then
/// picked out of the text.
pub fn refused(input: &[u8], reason: String) -> ClientAnswer {
    withheld_if_post(input, ClientAnswer::blocked(reason))
}

/// A blocked `answer` in the terms of the input's event: a pre event exits
/// 2 with the reason; a session start prints `continue: false`, exit 0; a
/// post event gets the reason in
/// place of its result, in the tool's shape, exit 0; a tool failure, whose
/// error Claude Code lets no hook replace, and an event that cannot be told
/// stop the session (`continue: false` printed; exit 2 as well for the
/// latter, which also blocks a pre event).
fn withheld_if_post(input: &[u8], answer: ClientAnswer) -> ClientAnswer {
    let parsed = serde_json::from_slice::<Value>(input).ok();
    let field = |key: &str| {
        parsed
            .as_ref()
            .and_then(|input| input.get(key))
            .and_then(Value::as_str)
            .map(str::to_owned)
    };
    let event = match field("hook_event_name") {
        Some(name) => Event::from_name(&name),
        None => input::sniff_event(input),
    };
    let tool = field("tool_name").or_else(|| input::sniff_tool(input));
    let response = parsed.as_ref().and_then(|input| input.get("tool_response"));
    let (reply, code) = match event {
        Some(Event::PreToolUse) => return answer,
        // Exit 2 cannot stop a session; `continue: false` does.
        Some(Event::SessionStart) => (answer::stop(&answer.stderr), 0),
        Some(Event::PostToolUse) => {
            let reply = match (&tool, response) {
                (Some(tool), Some(response)) => {
                    answer::withhold(tool, "PostToolUse", &answer.stderr, Some(response))
                }
                _ => answer::unreadable(&answer.stderr, event, tool.as_deref()),
            };
            (reply, 0)
        }
        Some(Event::PostToolUseFailure) => (answer::unreadable(&answer.stderr, event, None), 0),
        None => (answer::unreadable(&answer.stderr, None, None), 2),
    };
    ClientAnswer {
        code,
        stdout: reply.to_string(),
        stderr: answer.stderr,
    }
}

async fn send(url: &str, token: Option<&str>, input: &[u8], timeout: Duration) -> ClientAnswer {
    // Never follow a redirect: the token would go wherever it points.
    let client = match reqwest::Client::builder()
        .timeout(timeout)
        .redirect(reqwest::redirect::Policy::none())
        .build()
    {
        Ok(client) => client,
        Err(error) => {
            return ClientAnswer::blocked(format!(
                "hooks hook-client: cannot make an HTTP client: {error}; the call is blocked"
            ));
        }
    };
    let mut request = client
        .post(url)
        .header(reqwest::header::CONTENT_TYPE, "application/json")
        .body(input.to_vec());
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let mut response = match request.send().await {
        Ok(response) => response,
        Err(error) => {
            return ClientAnswer::blocked(format!(
                "hooks hook-client: cannot reach the hook server at {url}: {error}; the call is \
                 blocked (fail closed)"
            ));
        }
    };
    let status = response.status();
    let mut body = Vec::new();
    loop {
        match response.chunk().await {
            Ok(Some(chunk)) if body.len() + chunk.len() <= MAX_ANSWER => {
                body.extend_from_slice(&chunk)
            }
            Ok(Some(_)) => {
                return ClientAnswer::blocked(format!(
                    "hooks hook-client: the hook server's answer is over {MAX_ANSWER} bytes; the \
                     call is blocked"
                ));
            }
            Ok(None) => break,
            Err(error) => {
                return ClientAnswer::blocked(format!(
                    "hooks hook-client: reading the hook server's answer failed: {error}; the \
                     call is blocked"
                ));
            }
        }
    }
    let text = String::from_utf8_lossy(&body).into_owned();
    if !status.is_success() {
        let message = serde_json::from_str::<Value>(&text)
            .ok()
            .and_then(|value| {
                value
                    .get("error")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            })
            .unwrap_or(text);
        return ClientAnswer::blocked(format!(
            "hooks hook-client: the hook server answered HTTP {status}: {message}; the call is blocked"
        ));
    }
    let answer: Value = match serde_json::from_str(&text) {
        Ok(answer @ Value::Object(_)) => answer,
        _ => {
            return ClientAnswer::blocked(
                "hooks hook-client: the hook server's answer is not a JSON object; the call is blocked",
            );
        }
    };
    let pre = serde_json::from_slice::<Value>(input)
        .ok()
        .and_then(|input| {
            input
                .get("hook_event_name")
                .and_then(Value::as_str)
                .map(str::to_owned)
        })
        .is_none_or(|event| event == "PreToolUse");
    if pre && let Some(reason) = refusal(&answer) {
        return ClientAnswer::blocked(reason);
    }
    ClientAnswer {
        code: 0,
        stdout: text,
        stderr: String::new(),
    }
}

/// The reason, when the answer denies, blocks or stops.
fn refusal(answer: &Value) -> Option<String> {
    let text = |value: Option<&Value>, fallback: &str| {
        value.and_then(Value::as_str).unwrap_or(fallback).to_owned()
    };
    let specific = answer.get("hookSpecificOutput");
    if specific
        .and_then(|s| s.get("permissionDecision"))
        .and_then(Value::as_str)
        == Some("deny")
    {
        return Some(text(
            specific.and_then(|s| s.get("permissionDecisionReason")),
            "denied by the hook server",
        ));
    }
    if answer.get("decision").and_then(Value::as_str) == Some("block") {
        return Some(text(answer.get("reason"), "blocked by the hook server"));
    }
    None
}
