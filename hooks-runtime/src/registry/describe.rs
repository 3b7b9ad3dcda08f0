//! The run order as a table a person can read.

use std::time::Duration;

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
    /// ```text
    /// #  point          name            priority  when                          timeout  on_error
    /// 1  pre_tool_use   readonly_guard  5         tool_name starts_with "sql_"  30s      fail_closed
    /// ```
    pub fn describe(&self) -> String {
        let mut rows: Vec<[String; 7]> = Vec::new();
        let mut push = |point: &str, hook: &dyn Hook| {
            rows.push([
                (rows.len() + 1).to_string(),
                point.to_owned(),
                shown(hook.name(), MAX_CELL_CHARS).into_owned(),
                hook.priority().to_string(),
                shown(hook.when_source().unwrap_or("(always)"), MAX_CELL_CHARS).into_owned(),
                format_duration(hook.timeout()),
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
            "#", "point", "name", "priority", "when", "timeout", "on_error",
        ]
        .map(str::to_owned);
        let mut widths = header.clone().map(|cell| cell.chars().count());
        for row in &rows {
            for (width, cell) in widths.iter_mut().zip(row) {
                *width = (*width).max(cell.chars().count());
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&header).chain(&rows) {
            let mut line = String::new();
            for (index, (cell, width)) in row.iter().zip(widths).enumerate() {
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
        out
    }
}

/// `500ms`, `2s`, `2m`, `1h`, or `1.5s` when nothing rounder fits.
pub(crate) fn format_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    if millis == 0 {
        return format!("{}µs", duration.as_micros());
    }
    if millis.is_multiple_of(3_600_000) {
        format!("{}h", millis / 3_600_000)
    } else if millis.is_multiple_of(60_000) {
        format!("{}m", millis / 60_000)
    } else if millis.is_multiple_of(1000) {
        format!("{}s", millis / 1000)
    } else if millis < 1000 {
        format!("{millis}ms")
    } else {
        format!("{}s", duration.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_naturally() {
        assert_eq!(format_duration(Duration::from_millis(500)), "500ms");
        assert_eq!(format_duration(Duration::from_secs(30)), "30s");
        assert_eq!(format_duration(Duration::from_secs(120)), "2m");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
    }
}
