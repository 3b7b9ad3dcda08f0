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
    fn the_command_is_one_word_whatever_it_holds() {
        let wrapped = wrapped("hooks", "a'; rm -rf / #");
        assert_eq!(
            wrapped,
            r#"exec 'hooks' run-buffered -- "$0" -c 'a'\''; rm -rf / #'"#
        );
    }
}
