//! The shell command Codex runs in place of the model's: the model's
//! command under `hooks run-buffered`, and back.
//!
//! Codex hands a command's output to the model while it still runs (when
//! it outlives the call's wait, `yield_time_ms`) and lets later polls
//! (`write_stdin`) read more, with no hook event in between: only the
//! post event at its exit can replace what the model reads. Run under
//! `hooks run-buffered`, a command prints nothing until it exits and reads
//! no input, so everything it prints reaches the model through that post
//! event, and `write_stdin` has nothing to talk to.
//!
//! The form is `exec 'HOOKS' run-buffered -- "$0" -c 'COMMAND'`: Codex
//! runs a command with `SHELL -c`, so `"$0"` is that shell. Every word is
//! single-quoted, so [`unwrapped`] reads back exactly what [`wrapped`]
//! wrote, and nothing else.

/// The subcommand the wrapped command runs.
const SUBCOMMAND: &str = "run-buffered";

/// `command` to run under `hooks run-buffered`, the `hooks` binary being
/// `program`.
pub(crate) fn wrapped(program: &str, command: &str) -> String {
    format!(
        "exec {} {SUBCOMMAND} -- \"$0\" -c {}",
        quoted(program),
        quoted(command)
    )
}

/// The command [`wrapped`] wrapped for `program`, or `None` when `text` is
/// not exactly that form.
pub(crate) fn unwrapped(program: &str, text: &str) -> Option<String> {
    let prefix = format!("exec {} {SUBCOMMAND} -- \"$0\" -c ", quoted(program));
    let body = text.strip_prefix(&prefix)?;
    let inner = body.strip_prefix('\'')?.strip_suffix('\'')?;
    // Inside, a quote appears only as the escape `'\''`.
    let unescaped = inner.replace(r"'\''", "'");
    (quoted(&unescaped) == body).then_some(unescaped)
}

/// Whether `command` is exactly Codex's own form of a patch: `apply_patch`
/// with the patch as a quoted here-document and nothing
/// else — `apply_patch <<'EOF'`, the patch, `EOF`. Codex applies that form
/// itself and cannot tell it once wrapped, so it is left as it is. Nothing
/// in it runs but `apply_patch`: the quoted delimiter keeps the shell from
/// expanding anything in the patch, and the delimiter may end only the
/// last line.
pub(crate) fn is_patch_heredoc(command: &str) -> bool {
    let text = command.strip_suffix('\n').unwrap_or(command);
    let mut lines = text.split('\n');
    let Some(first) = lines.next() else {
        return false;
    };
    // `apply_patch` only: Codex puts that name on PATH; `applypatch`,
    // which Codex also reads, would be whatever PATH finds.
    let Some(rest) = first.strip_prefix("apply_patch <<") else {
        return false;
    };
    let rest = rest.trim_start_matches(' ');
    let delimiter = ['\'', '"'].into_iter().find_map(|quote| {
        rest.strip_prefix(quote)
            .and_then(|inner| inner.strip_suffix(quote))
    });
    let Some(delimiter) = delimiter.filter(|word| {
        !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    }) else {
        return false;
    };
    let body: Vec<&str> = lines.collect();
    // No line of the patch may look like the delimiter, even with spaces
    // or a carriage return around it: Codex's reading and the shell's
    // might then differ on where the patch ends.
    match body.split_last() {
        Some((last, patch)) => {
            *last == delimiter
                && !patch
                    .iter()
                    .any(|line| line.trim_matches(|c: char| c.is_whitespace()) == delimiter)
        }
        None => false,
    }
}

/// `word` as one single-quoted shell word.
fn quoted(word: &str) -> String {
    format!("'{}'", word.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOOKS: &str = "/opt/hooks it's/bin/hooks";

    #[test]
    fn a_wrapped_command_reads_back_as_written() {
        for command in [
            "ls",
            "cat id_rsa; sleep 30",
            "echo 'a' \"b\" $(whoami) # a comment",
            "printf '%s' \"it's\" ''\\''",
            "",
            "line one\nline two",
        ] {
            let wrapped = wrapped(HOOKS, command);
            assert_eq!(
                unwrapped(HOOKS, &wrapped).as_deref(),
                Some(command),
                "{wrapped}"
            );
        }
    }

    #[test]
    fn only_the_exact_form_unwraps() {
        let wrapped = wrapped(HOOKS, "ls");
        assert_eq!(unwrapped("/usr/bin/hooks", &wrapped), None);
        assert_eq!(unwrapped(HOOKS, "ls"), None);
        assert_eq!(unwrapped(HOOKS, &format!("{wrapped}; cat id_rsa")), None);
        assert_eq!(unwrapped(HOOKS, &format!("{wrapped}'")), None);
        let spliced = wrapped.replace("'ls'", "'ls' ; 'cat' 'id_rsa'");
        assert_eq!(unwrapped(HOOKS, &spliced), None);
    }

    #[test]
    fn only_codexs_exact_patch_form_is_left_as_it_is() {
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch";
        for command in [
            format!("apply_patch <<'EOF'\n{patch}\nEOF"),
            format!("apply_patch <<'PATCH'\n{patch}\nPATCH\n"),
            format!("apply_patch << \"EOF\"\n{patch}\nEOF"),
            // Quoted: `$(…)` is text of the patch, not run.
            "apply_patch <<'EOF'\n$(cat id_rsa)\nEOF".to_owned(),
        ] {
            assert!(is_patch_heredoc(&command), "{command}");
        }
        for command in [
            // Unquoted: the shell would expand `$(…)` in the patch.
            format!("apply_patch <<EOF\n{patch}\nEOF"),
            // Anything after the first line, or after the delimiter.
            format!("apply_patch <<'EOF'; cat id_rsa\n{patch}\nEOF"),
            format!("apply_patch <<'EOF'\n{patch}\nEOF\ncat id_rsa"),
            "apply_patch <<'EOF'\nx\nEOF\ncat id_rsa\nEOF".to_owned(),
            format!("cd src && apply_patch <<'EOF'\n{patch}\nEOF"),
            format!("applypatch <<'EOF'\n{patch}\nEOF"),
            "apply_patch <<'EOF'\n+x\nEOF \n*** End Patch\nEOF".to_owned(),
            "apply_patch <<'EOF'\n+x\nEOF\r\n*** End Patch\nEOF".to_owned(),
            format!("apply_patch <<'E F'\n{patch}\nE F"),
            "apply_patch <<'EOF'".to_owned(),
            "cat id_rsa".to_owned(),
        ] {
            assert!(!is_patch_heredoc(&command), "{command}");
        }
    }

    #[test]
    fn the_command_is_one_word_whatever_it_holds() {
        let wrapped = wrapped("hooks", "a'; rm -rf / #");
        assert_eq!(
            wrapped,
            r#"exec 'hooks' run-buffered -- "$0" -c 'a'\''; rm -rf / #'"#
        );
    }
}
