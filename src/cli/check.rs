//! `hooks check`: the run order of a valid config, and what the build could
//! not check (`args.…` paths no declared schema decides).

use std::io::{self, Write};

use serde_json::{Value, json};

use crate::config::{AgentConfig, ConfigWarning};
use crate::{Hook, HookPoint, HookRegistry};

/// Prints the registry built from `config`, then the build's warnings: a
/// table and one line per warning, or JSON (`warnings`: file, entry, message).
pub(super) fn check(
    config: &AgentConfig,
    registry: &HookRegistry,
    warnings: &[ConfigWarning],
    json: bool,
    out: &mut dyn Write,
) -> io::Result<()> {
    if !json {
        writeln!(out, "{}: valid; agent `{}`", config.source, config.agent)?;
        writeln!(out, "{}", registry.describe())?;
        for warning in warnings {
            writeln!(out, "{warning}")?;
        }
        return Ok(());
    }
    let pre = registry
        .pre_tool_use()
        .iter()
        .map(|h| (HookPoint::PreToolUse, h.as_ref() as &dyn Hook));
    let post = registry
        .post_tool_use()
        .iter()
        .map(|h| (HookPoint::PostToolUse, h.as_ref() as &dyn Hook));
    let session = registry
        .session_start_hooks()
        .iter()
        .map(|h| (HookPoint::SessionStart, h.as_ref() as &dyn Hook));
    let hooks: Vec<Value> = pre
        .chain(post)
        .chain(session)
        .map(|(point, hook)| {
            // `timeout_ms` as configured; `bound_ms` what the runtime
            // enforces, with `bound_note` saying what it adds (null when the
            // two are the same).
            let bound = hook.timeout();
            let (configured, note) = match hook.timeout_note() {
                Some(note) if note.configured != bound => (note.configured, Some(note.why)),
                _ => (bound, None),
            };
            json!({
                "point": point.as_str(),
                "name": hook.name(),
                "priority": hook.priority(),
                "when": hook.when_source(),
                "timeout_ms": u64::try_from(configured.as_millis()).unwrap_or(u64::MAX),
                "bound_ms": u64::try_from(bound.as_millis()).unwrap_or(u64::MAX),
                "bound_note": note,
                "on_error": hook.on_error().as_str(),
            })
        })
        .collect();
    let observers: Vec<&str> = registry.observers().iter().map(|o| o.name()).collect();
    writeln!(
        out,
        "{}",
        json!({"valid": true, "agent": config.agent, "hooks": hooks, "observers": observers,
               "warnings": warnings})
    )
}
