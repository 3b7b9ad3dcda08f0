//! Finding a command hook's program while the config loads, so that a hook
//! that could never start fails the config instead of every call.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::command::{CommandLine, CommandSpec};

/// Where `execvp` looks when `PATH` is not set (glibc's default).
const DEFAULT_PATH: &str = "/bin:/usr/bin";

/// Words `/bin/sh` runs itself (keywords and built-ins): not looked up on `PATH`.
const SHELL_BUILTINS: &[&str] = &[
    "!", "{", "}", ".", ":", "[", "alias", "bg", "break", "case", "cd", "command", "continue",
    "do", "done", "echo", "elif", "else", "esac", "eval", "exec", "exit", "export", "false", "fg",
    "fi", "for", "getopts", "hash", "if", "in", "jobs", "kill", "local", "printf", "pwd", "read",
    "readonly", "return", "set", "shift", "test", "then", "times", "trap", "true", "type",
    "ulimit", "umask", "unalias", "unset", "until", "wait", "while",
];

/// Checks that the program `spec` runs can be started: an exec-form program
/// must be an executable file — at its path (relative to the spec's `cwd`
/// when relative), or on `PATH` when it is a bare name. For the shell form,
/// only the first word is checked, and only when it is a plain path or
/// program name (no quotes, variables or other shell syntax, except a leading
/// `$CLAUDE_PROJECT_DIR`): a shell command line cannot be fully checked
/// without running it.
pub(crate) fn check_program(spec: &CommandSpec) -> Result<(), String> {
    let dir = spec.cwd.as_deref();
    match &spec.command {
        CommandLine::Exec(argv) => {
            let Some(program) = argv.first() else {
                return Ok(()); // An empty command is reported by the spec's own check.
            };
            if program.contains('/') {
                check_file(&within(dir, Path::new(program)), program, "command")
            } else {
                on_path(program)
            }
        }
        CommandLine::Shell(line) => {
            let Some(word) = first_plain_word(line, dir) else {
                return Ok(());
            };
            if word.contains('/') {
                check_file(&within(dir, Path::new(&word)), &word, "script").map_err(|problem| {
                    format!(
                        "{problem} (it is the first word of the shell command `{line}`; only that \
                         word is checked before running, since a shell line cannot be checked whole)"
                    )
                })
            } else if SHELL_BUILTINS.contains(&word.as_str()) {
                Ok(())
            } else {
                on_path(&word).map_err(|problem| {
                    format!("{problem} (it is the first word of the shell command `{line}`)")
                })
            }
        }
    }
}

/// `path` joined to `dir` when it is relative and there is a `dir`.
fn within(dir: Option<&Path>, path: &Path) -> PathBuf {
    match dir {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    }
}

/// The first word of a shell line, when it is plain enough to check; a
/// leading `$CLAUDE_PROJECT_DIR` (quoted or not) becomes `dir`, as it will
/// be when the command runs.
fn first_plain_word(line: &str, dir: Option<&Path>) -> Option<String> {
    let word = line.split_whitespace().next()?;
    let mut word = word.to_owned();
    for variable in [
        "\"$CLAUDE_PROJECT_DIR\"",
        "\"${CLAUDE_PROJECT_DIR}\"",
        "${CLAUDE_PROJECT_DIR}",
        "$CLAUDE_PROJECT_DIR",
    ] {
        if let Some(rest) = word.strip_prefix(variable) {
            let dir = dir?.to_str()?;
            word = format!("{dir}{rest}");
            break;
        }
    }
    let plain = word
        .chars()
        .all(|c| c.is_alphanumeric() || "_-./+,:@%".contains(c));
    // A word that sets a variable (`A=b cmd`) or carries any other shell
    // syntax is not a program name.
    (plain && !word.is_empty()).then_some(word)
}

/// An executable regular file at `path` (following symbolic links).
fn check_file(path: &Path, written: &str, what: &str) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt as _;
    let shown = path.display().to_string();
    let at = if shown == written {
        String::new()
    } else {
        format!(" ({shown})")
    };
    match std::fs::metadata(path) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => Err(format!(
            "the {what} `{written}`{at} does not exist; fix the path (relative paths start from \
             the config file's directory)"
        )),
        Err(error) => Err(format!(
            "the {what} `{written}`{at} cannot be checked ({error}); make it readable by the agent"
        )),
        Ok(meta) if !meta.is_file() => Err(format!(
            "the {what} `{written}`{at} is not a file; give the path of the program to run"
        )),
        Ok(meta) if meta.permissions().mode() & 0o111 == 0 => Err(format!(
            "the {what} `{written}`{at} is not executable; make it executable \
             (`chmod +x {shown}`) or run it through its interpreter, e.g. [\"sh\", \"{shown}\"]"
        )),
        Ok(_) => Ok(()),
    }
}

/// A bare program name must be an executable file in a `PATH` directory
/// (the agent's `PATH`, which the command inherits).
fn on_path(name: &str) -> Result<(), String> {
    let path = std::env::var_os("PATH").unwrap_or_else(|| OsString::from(DEFAULT_PATH));
    let found = std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .any(|candidate| check_file(&candidate, name, "command").is_ok());
    if found {
        Ok(())
    } else {
        Err(format!(
            "the command `{name}` is not on PATH ({}); install it, or give its path \
             (relative paths start from the config file's directory)",
            path.to_string_lossy()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::command::CommandEvent;

    fn exec(program: &str) -> CommandSpec {
        CommandSpec::new(CommandEvent::PreToolUse, CommandLine::exec([program]))
    }

    fn shell(line: &str, dir: &str) -> CommandSpec {
        CommandSpec::new(CommandEvent::PreToolUse, CommandLine::shell(line)).with_cwd(dir)
    }

    #[test]
    fn programs_are_found_by_path_or_on_path() {
        assert_eq!(check_program(&exec("/bin/sh")), Ok(()));
        assert_eq!(check_program(&exec("sh")), Ok(()));
        let missing = check_program(&exec("no-such-program-4711")).unwrap_err();
        assert!(missing.contains("is not on PATH"), "{missing}");
        let missing = check_program(&exec("/no/such/x.sh")).unwrap_err();
        assert!(missing.contains("does not exist"), "{missing}");
        let directory = check_program(&exec("/tmp")).unwrap_err();
        assert!(directory.contains("is not a file"), "{directory}");
    }

    #[test]
    fn shell_lines_are_checked_by_their_first_plain_word() {
        assert_eq!(check_program(&shell("exit 0", "/")), Ok(()));
        assert_eq!(check_program(&shell("cat ./x | jq .", "/")), Ok(()));
        assert_eq!(check_program(&shell("\"$X\"/y.sh", "/")), Ok(()));
        assert_eq!(check_program(&shell("A=b ./nope.sh", "/")), Ok(()));
        let missing = check_program(&shell("./no/such.sh --flag", "/tmp")).unwrap_err();
        assert!(missing.contains("/tmp/./no/such.sh"), "{missing}");
        assert!(missing.contains("cannot be checked whole"), "{missing}");
        let missing =
            check_program(&shell("\"$CLAUDE_PROJECT_DIR\"/.claude/x.sh", "/proj")).unwrap_err();
        assert!(missing.contains("/proj/.claude/x.sh"), "{missing}");
        let missing = check_program(&shell("no-such-program-4711 -x", "/")).unwrap_err();
        assert!(missing.contains("is not on PATH"), "{missing}");
    }
}
