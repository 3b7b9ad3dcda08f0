//! The run order as a table a person can read.

use hooks_when::ConfigDuration;

use super::HookRegistry;
use crate::context::HookPoint;
use crate::hook::Hook;
use crate::printable::{MAX_CELL_CHARS, push_padded, shown};

impl HookRegistry {
    /// The run order as a text table: session-start hooks, then pre, then post,
    /// each in the order they run. Names and `when` sources are shown with
    /// hidden characters escaped and cut to 120 characters, so no name can
    /// make the table lie or fail.
    ///
    /// `timeout` is the timeout as configured. Where the runtime's bound is
    /// longer ([`Hook::timeout_note`]: a command hook's kill margin and, when
    /// it may ask for approval, the gate's wait; the gate's delivery
    /// allowance), `bound` shows it with a numbered note under the table
    /// saying what was added; otherwise `bound` is empty, and a table where
    /// no hook's bound differs has no `bound` column.
    ///
    /// ```text
    /// #  point         name           priority  when                            timeout  bound    on_error
    /// 1  pre_tool_use  approval_gate  10        tool_name == "oa__purchase_pay" 2m       150s[1]  fail_closed
    /// 2  pre_tool_use  shell_guard    50        tool_name starts_with "shell_"  5s       9s[2]    fail_closed
    ///
    /// [1] approval_gate: 150s = 2m configured, +30s to create the request and deliver the card
    /// [2] shell_guard: 9s = 5s configured, +4s to kill and reap the command
    /// ```
    pub fn describe(&self) -> String {
        let mut rows: Vec<[String; 8]> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        let mut push = |point: &str, hook: &dyn Hook| {
            let name = shown(hook.name(), MAX_CELL_CHARS).into_owned();
            let bound = hook.timeout();
            let (configured, bound_cell) = match hook.timeout_note() {
                Some(note) if note.configured != bound => {
                    notes.push(format!(
                        "[{}] {name}: {} = {} configured, {}",
                        notes.len() + 1,
                        ConfigDuration::from(bound),
                        ConfigDuration::from(note.configured),
                        shown(&note.why, MAX_CELL_CHARS * 2)
                    ));
                    (
                        note.configured,
                        format!("{}[{}]", ConfigDuration::from(bound), notes.len()),
                    )
                }
                _ => (bound, String::new()),
            };
            rows.push([
                (rows.len() + 1).to_string(),
                point.to_owned(),
                name,
                hook.priority().to_string(),
                shown(hook.when_source().unwrap_or("(always)"), MAX_CELL_CHARS).into_owned(),
                ConfigDuration::from(configured).to_string(),
                bound_cell,
                hook.on_error().to_string(),
            ]);
        };
        for hook in &self.hooks.session_start {
            push(HookPoint::SessionStart.as_str(), hook.as_ref());
        }
        for hook in &self.hooks.pre {
            push(HookPoint::PreToolUse.as_str(), hook.as_ref());
        }
        for hook in &self.hooks.post {
            push(HookPoint::PostToolUse.as_str(), hook.as_ref());
        }
        let header = [
            "#", "point", "name", "priority", "when", "timeout", "bound", "on_error",
        ]
        .map(str::to_owned);
        let mut widths = header.clone().map(|cell| cell.chars().count());
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        // The bound column only when some hook's bound differs.
        const BOUND: usize = 6;
        let mut out = String::new();
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (index, (cell, width)) in row.iter().zip(widths).enumerate() {
                if index == BOUND && notes.is_empty() {
                    continue;
                }
                if index + 1 == row.len() {
                    line.push_str(cell);
                } else {
                    push_padded(&mut line, cell, width);
                    line.push_str("  ");
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
        }
        if rows.is_empty() {
            out.push_str("(no hooks)\n");
        }
        if !notes.is_empty() {
            out.push('\n');
            for note in &notes {
                out.push_str(note);
                out.push('\n');
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::hook::{HookOutcome, PreToolUseHook};
    use crate::{HookContext, HookResult};

    struct Waits(Duration);

    impl Hook for Waits {
        fn name(&self) -> &str {
            "waits"
        }
        fn execute<'a>(&'a self, _: &'a HookContext) -> HookOutcome<'a> {
            HookResult::allow().into()
        }
        fn timeout(&self) -> Duration {
            self.0
        }
    }

    impl PreToolUseHook for Waits {}

    /// The timeout column is written in the config grammar, so a value can
    /// be copied back into a config file.
    #[test]
    fn timeouts_print_as_config_durations() {
        for (timeout, shown) in [
            (Duration::from_millis(500), "500ms"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(120), "2m"),
            (Duration::from_millis(1500), "1500ms"),
        ] {
            let registry = HookRegistry::builder().pre(Waits(timeout)).build().unwrap();
            let table = registry.describe();
            let row = table.lines().nth(1).unwrap();
            assert!(row.split_whitespace().any(|cell| cell == shown), "{table}");
        }
    }
}
